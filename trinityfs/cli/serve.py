"""`trinityfs serve`: the Iceberg REST catalog server over the lakehouse (trinityfs.rest).

    trinityfs --root ./lake serve [--host 127.0.0.1] [--port 8181] [--tokens FILE] ...

Needs the `rest` extra (`pip install 'trinityfs[rest]'`).
"""

from __future__ import annotations

import argparse
from typing import Any

EPILOG = """\
Clients choose a catalog version with their warehouse: 'latest' (the default),
'v/<n>', 'v/<export name>' or 'v/<ISO time>' (read-only). Examples:
  PyIceberg:  RestCatalog("lake", uri="http://127.0.0.1:8181", warehouse="v/12")
  Spark:      spark.sql.catalog.lake.type=rest  spark.sql.catalog.lake.uri=http://...
  DuckDB:     ATTACH 'latest' AS lake (TYPE iceberg, ENDPOINT 'http://127.0.0.1:8181',
              AUTHORIZATION_TYPE 'none')
"""


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add `serve` to the subparsers of the `trinityfs` command."""
    from trinityfs.rest.options import add_arguments  # imports no web framework

    parser = subparsers.add_parser(
        "serve",
        help="serve the lakehouse as an Iceberg REST catalog",
        description=__doc__.split("\n\n")[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser, with_root=False)
    parser.set_defaults(func=cmd_serve)
    return parser


def cmd_serve(ctx: Any, args: argparse.Namespace) -> int:
    try:
        from trinityfs.rest.options import config_from_args
        from trinityfs.rest.server import serve
    except ImportError as exc:
        raise ValueError(
            f"the REST server needs the 'rest' extra (pip install 'trinityfs[rest]'): {exc}"
        ) from None
    serve(config_from_args(args, ctx.root, ctx.storage_options))
    return 0
