"""`trinityfs serve`: the Iceberg REST catalog server over the lakehouse (trinityfs.rest).

    trinityfs --root ./lake serve [--host 127.0.0.1] [--port 8181] [--tokens FILE] ...

Needs the `rest` extra (`pip install 'trinityfs[rest]'`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trinityfs.cli.app import AddCommand
    from trinityfs.cli.context import Context

EPILOG = """\
Clients choose a catalog version with their warehouse: 'latest' (the default),
'v/<n>', 'v/<export name>' or 'v/<ISO time>' (read-only). Examples:
  PyIceberg:  RestCatalog("lake", uri="http://127.0.0.1:8181", warehouse="v/12")
  Spark:      spark.sql.catalog.lake.type=rest  spark.sql.catalog.lake.uri=http://...
  DuckDB:     ATTACH 'latest' AS lake (TYPE iceberg, ENDPOINT 'http://127.0.0.1:8181',
              AUTHORIZATION_TYPE 'none')
"""


def register(add: AddCommand) -> argparse.ArgumentParser:
    """Add `serve` to the `trinityfs` command (its command table)."""
    from trinityfs.rest.options import add_arguments  # imports no web framework

    parser = add(
        "serve",
        cmd_serve,
        "serve the lakehouse as an Iceberg REST catalog",
        description=__doc__.split("\n\n")[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser, with_root=False)
    return parser


def cmd_serve(ctx: Context, args: argparse.Namespace) -> int:
    try:
        from trinityfs.rest.options import config_from_args
        from trinityfs.rest.server import serve
    except ImportError as exc:
        raise ValueError(
            f"the REST server needs the 'rest' extra (pip install 'trinityfs[rest]'): {exc}"
        ) from None
    serve(config_from_args(args, ctx.root, ctx.storage_options))
    return 0
