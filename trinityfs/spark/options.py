"""The options of the `trinitylake` data source: one table, validated before any work.

Every option the source accepts is listed in OPTIONS (the README table is generated from
the same rows: `python -m trinityfs.spark.options`). An unknown or misspelled option, an
option that does not apply to the operation (a write option on a read, ...) or a bad
value raises InvalidArgumentError naming it, before any file is read or written: Spark
would otherwise drop it without a word (`replaceWhere` ignored = a table overwritten).
Spark passes option names lowercased; they are matched case-insensitively. An empty
value is refused as well: it is not the option left out (an empty `root` would read or
write another lakehouse, an empty `transaction` commit what was meant to be staged).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from trinityfs import jsontext
from trinityfs.errors import InvalidArgumentError

READ, WRITE, BOTH = "read", "write", "read, write"

# Prefixes of PyIceberg FileIO properties passed to the catalog as they are.
FILEIO_PREFIXES = ("s3.", "gcs.", "adls.", "hf.", "client.")


@dataclass(frozen=True)
class OptionSpec:
    name: str
    applies: str
    values: str
    doc: str


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "root",
        BOTH,
        "URL",
        "the lakehouse (local path, file://, s3://...); default `$TRINITYFS_ROOT`, then "
        "fsspec's `[trinity]` config, then `./lakehouse` (`read_config`)",
    ),
    OptionSpec("path", BOTH, "ns.table", "the table: `load('ns.t')` / `save('ns.t')` set it"),
    OptionSpec("namespace", BOTH, "name", "with `table`: names containing dots"),
    OptionSpec("table", BOTH, "name", "with `namespace`"),
    OptionSpec("warehouse", BOTH, "URL", "where new tables go (default `<root>/warehouse`)"),
    OptionSpec("allowed-locations", BOTH, "URL,URL", "extra prefixes where table files may live"),
    OptionSpec(
        "storage-options",
        BOTH,
        "JSON object",
        "fsspec options for `root` (merged over `$TRINITYFS_STORAGE_OPTIONS`)",
    ),
    OptionSpec("s3.* gcs.* adls.*", BOTH, "string", "PyIceberg FileIO properties"),
    OptionSpec(
        "version",
        READ,
        "version selector",
        "read as of this catalog version: a number, `latest`, an export name or "
        "`export:<name>`, an ISO time or `time:<ISO>` (`Lakehouse.resolve`); default "
        "`$TRINITYFS_VERSION` (which refuses writes), else the latest",
    ),
    OptionSpec(
        "timestamp", READ, "ISO 8601 / epoch ms", "read as of the catalog version then current"
    ),
    OptionSpec("snapshot-id", READ, "integer", "read this Iceberg snapshot of the table"),
    OptionSpec("as-of-timestamp", READ, "ISO 8601 / epoch ms", "the table's snapshot current then"),
    OptionSpec("branch", READ, "name", "the head of this Iceberg branch"),
    OptionSpec("tag", READ, "name", "the snapshot this Iceberg tag names"),
    OptionSpec("columns", READ, "a,b,c", "read only these columns from the files"),
    OptionSpec(
        "filter",
        READ,
        "Iceberg filter",
        "prune files by stats/partitions, rows in the reader, e.g. `id < 20000`",
    ),
    OptionSpec(
        "split-size",
        READ,
        "bytes",
        "table scan: small files are packed into Spark tasks of up to this size "
        "(default: table property `read.split.target-size`, else 128 MiB)",
    ),
    OptionSpec(
        "parallelism",
        READ,
        "integer >= 1",
        "table scan: tasks to spread small files over (default: the driver's CPUs; a "
        "Python source cannot see Spark's defaultParallelism)",
    ),
    OptionSpec("splits", READ, "integer >= 1", "catalog scan (`load()`): key ranges read"),
    OptionSpec(
        "partitionOverwriteMode",
        WRITE,
        "static or dynamic",
        "overwrite: the whole table (static) or the partitions written (dynamic)",
    ),
    OptionSpec(
        "overwrite-filter",
        WRITE,
        "Iceberg filter",
        "overwrite: replace only rows matching it, e.g. `day >= '2026-01-01'`",
    ),
    OptionSpec(
        "partition-by", WRITE, "a,b", "new table: identity partitions (Spark refuses partitionBy)"
    ),
    OptionSpec("transaction", WRITE, "id", "stage into this catalog transaction (see README)"),
    OptionSpec(
        "verify",
        WRITE,
        "reads or tree",
        "what the commit verifies: `reads` (the files it reads) or `tree` (every file of "
        "the tree it builds on, before writing); default `$TRINITYFS_VERIFY`, then "
        "fsspec's `[trinity] verify`, then `reads`",
    ),
    OptionSpec("snapshot-properties", WRITE, "JSON object", "added to the snapshot summary"),
)

_BY_NAME = {spec.name.lower(): spec for spec in OPTIONS if " " not in spec.name}
# Names other tools use for the same thing: refused with a pointer to ours.
_ALIASES = {
    "replacewhere": "overwrite-filter",
    "overwrite-mode": "partitionOverwriteMode",
    "overwritemode": "partitionOverwriteMode",
    "partition-overwrite-mode": "partitionOverwriteMode",
    "snapshot_id": "snapshot-id",
    "snapshotid": "snapshot-id",
    "asoftimestamp": "as-of-timestamp",
    "as_of_timestamp": "as-of-timestamp",
    "versionasof": "version",
    "timestampasof": "timestamp",
    "partitionby": "partition-by",
}


# Options whose own check refuses an empty value naming the values it takes.
_LISTS_ITS_VALUES = {"verify", "partitionoverwritemode"}


#: the snapshot summary property naming the Spark job that wrote a snapshot: how an abort
#: after a commit of unknown outcome tells whether that commit landed (spark/write.py)
JOB_ID = "trinitylake.spark.job-id"


def _fail(name: str, why: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"trinitylake option {name!r}: {why}")


def _json_object(name: str, text: str) -> dict[str, Any]:
    """A JSON-object option; malformed or too deeply nested text names the option."""
    try:
        parsed = jsontext.loads(text)
    except ValueError as exc:
        raise _fail(name, f"not JSON: {type(exc).__name__}: {exc}") from None
    if not isinstance(parsed, dict):
        raise _fail(name, "must be a JSON object")
    return parsed


def _int(name: str, value: str, minimum: int | None = None) -> int:
    try:
        out = int(str(value).strip())
    except ValueError:
        raise _fail(name, f"{value!r} is not an integer") from None
    if minimum is not None and out < minimum:
        raise _fail(name, f"{value!r} is below {minimum}")
    return out


def parse_millis(name: str, value: str) -> int:
    """Epoch milliseconds, or ISO 8601 (UTC when no zone is given), as epoch ms: the
    PyIceberg catalog's `timestamp` rule (trinityfs.iceberg.properties.parse_timestamp)."""
    from trinityfs.iceberg.properties import parse_timestamp

    try:
        when = parse_timestamp(value)
    except ValueError:
        raise _fail(name, f"{value!r} is neither epoch milliseconds nor ISO 8601") from None
    return when if isinstance(when, int) else int(when.timestamp() * 1000)


def _names(name: str, value: str) -> list[str]:
    out = [c.strip() for c in str(value).split(",") if c.strip()]
    if not out:
        raise _fail(name, "names no column")
    return out


@dataclass
class SourceOptions:
    """The validated options of one read or write."""

    catalog: dict[str, str]  # TrinityCatalog properties (root, warehouse, version, ...)
    ident: tuple[str, str] | None = None
    columns: list[str] | None = None
    row_filter: str | None = None
    splits: int = 8
    split_size: int | None = None  # None: the table's read.split.target-size or 128 MiB
    parallelism: int | None = None  # None: the driver's CPU count
    snapshot_id: int | None = None
    as_of_millis: int | None = None
    branch: str | None = None
    tag: str | None = None
    overwrite_mode: str | None = None  # None: not given
    overwrite_filter: str | None = None
    partition_by: list[str] = field(default_factory=list)
    transaction: str | None = None
    snapshot_properties: dict[str, str] = field(default_factory=dict)
    version: str | None = None  # a version selector (Lakehouse.resolve), None: latest
    version_source: str = "arguments"  # or the environment / fsspec config

    @property
    def pinned(self) -> bool:
        return self.version is not None


def _config(opts: Mapping[str, str], operation: str) -> Any:
    """Root, storage options and version pin by the catalog's one configuration reader
    (options, then TRINITYFS_ROOT / TRINITYFS_STORAGE_OPTIONS / TRINITYFS_VERSION, then
    fsspec's config), errors naming the option."""
    from trinityfs.catalog.config import read_config

    if "storage-options" in opts:
        _json_object("storage-options", opts["storage-options"])
    if "verify" in opts and opts["verify"].strip().lower() not in ("reads", "tree"):
        raise _fail("verify", f"{opts['verify']!r} is not 'reads' or 'tree'")
    try:
        config = read_config(
            root=opts.get("root") or None,
            storage_options=opts.get("storage-options") or None,
            version=opts.get("version") or None,
            verify=opts.get("verify") or None,
        )
    except InvalidArgumentError as exc:  # it names the option or variable at fault
        raise InvalidArgumentError(f"trinitylake configuration: {exc}") from None
    pin_from = config.sources.get("version")
    if operation == WRITE and config.version not in (None, "latest"):
        raise _fail(
            "version",
            f"{config.version!r} from {pin_from} pins the catalog to an old version, and a "
            "write needs the latest: unset it for writes",
        )
    return config


def _unknown(name: str) -> InvalidArgumentError:
    if name in _ALIASES:
        return _fail(name, f"not an option of this source; use {_ALIASES[name]!r}")
    known = [*(_BY_NAME[n].name for n in _BY_NAME)]
    close = difflib.get_close_matches(name, [k.lower() for k in known], n=1, cutoff=0.75)
    hint = f"; did you mean {_BY_NAME[close[0]].name!r}?" if close else ""
    return _fail(name, f"unknown option{hint} (options: {', '.join(sorted(known))})")


def _identifier(opts: Mapping[str, str]) -> tuple[str, str] | None:
    ns, table = opts.get("namespace"), opts.get("table")
    if ns or table:
        if not (ns and table):
            raise _fail("namespace", "give both 'namespace' and 'table' (or load('ns.table'))")
        if opts.get("path"):
            raise _fail("path", "give load('ns.table') or 'namespace'/'table', not both")
        return ns, table
    path = opts.get("path")
    if not path:
        return None
    parts = path.split(".")
    if len(parts) != 2 or not all(parts):
        raise _fail(
            "path",
            f"{path!r} is not namespace.table (TrinityLake has exactly two levels; for "
            "names containing dots use the options 'namespace' and 'table')",
        )
    return parts[0], parts[1]


def parse_options(options: Mapping[str, Any], operation: str) -> SourceOptions:
    """Validate `options` for a READ or a WRITE; InvalidArgumentError names the first bad
    one. Nothing is opened here."""
    opts = {str(k).lower(): str(v) for k, v in dict(options).items()}
    catalog: dict[str, str] = {}
    for name, value in opts.items():
        if name.startswith(FILEIO_PREFIXES) or name == "py-io-impl":
            catalog[name] = value
            continue
        spec = _BY_NAME.get(name)
        if spec is None:
            raise _unknown(name)
        if operation not in spec.applies:
            raise _fail(spec.name, f"applies to {spec.applies} only, not to a {operation}")
        if not value.strip() and name not in _LISTS_ITS_VALUES:
            # never "not given": an empty root would fall back to another lakehouse, an
            # empty transaction would commit a write meant to be staged
            raise _fail(spec.name, "is empty (leave the option out for its default)")
    config = _config(opts, operation)
    catalog["root"] = config.root
    if operation == WRITE:  # resolved here: executors may not share the driver's environment
        catalog["verify"] = config.verify
    if config.storage_options:
        catalog["storage-options"] = json.dumps(config.storage_options)
    for name in ("warehouse", "allowed-locations"):
        if name in opts:
            catalog[name] = opts[name]
    out = SourceOptions(catalog=catalog, ident=_identifier(opts))
    if "version" in opts and "timestamp" in opts:
        raise _fail("version", "give 'version' or 'timestamp', not both")
    if "timestamp" in opts:  # the version current then: the selector time:<ISO>
        millis = parse_millis("timestamp", opts["timestamp"])
        out.version = "time:" + datetime.fromtimestamp(millis / 1000, UTC).isoformat()
    elif config.version is not None:
        out.version = config.version
        out.version_source = config.sources.get("version", "arguments")
    if "snapshot-id" in opts:
        out.snapshot_id = _int("snapshot-id", opts["snapshot-id"])
    if "as-of-timestamp" in opts:
        out.as_of_millis = parse_millis("as-of-timestamp", opts["as-of-timestamp"])
    out.branch = opts.get("branch") or None
    out.tag = opts.get("tag") or None
    chosen = [
        n
        for n, v in (
            ("snapshot-id", out.snapshot_id),
            ("as-of-timestamp", out.as_of_millis),
            ("branch", out.branch),
            ("tag", out.tag),
        )
        if v is not None
    ]
    if len(chosen) > 1:
        raise _fail(chosen[1], f"give one of {', '.join(chosen)}: they each choose a snapshot")
    if chosen and out.ident is None:
        raise _fail(chosen[0], "applies to a table read (load('ns.table'))")
    if "columns" in opts:
        out.columns = _names("columns", opts["columns"])
    if "filter" in opts:
        if not opts["filter"].strip():
            raise _fail("filter", "is empty")
        if out.ident is None:
            raise _fail("filter", "applies to a table read (load('ns.table'))")
        out.row_filter = opts["filter"].strip()
    if "splits" in opts:
        out.splits = _int("splits", opts["splits"], 1)
    for name in ("split-size", "parallelism"):
        if name in opts:
            if out.ident is None:
                raise _fail(name, "applies to a table read (load('ns.table'))")
            setattr(out, name.replace("-", "_"), _int(name, opts[name], 1))
    mode = opts.get("partitionoverwritemode")
    if mode is not None:
        if mode.strip().lower() not in ("static", "dynamic"):
            raise _fail("partitionOverwriteMode", f"{mode!r} is not 'static' or 'dynamic'")
        out.overwrite_mode = mode.strip().lower()
    if "overwrite-filter" in opts:
        if not opts["overwrite-filter"].strip():
            raise _fail("overwrite-filter", "is empty")
        out.overwrite_filter = opts["overwrite-filter"].strip()
        if out.overwrite_mode == "dynamic":
            raise _fail("overwrite-filter", "cannot be combined with dynamic overwrite")
    if "partition-by" in opts:
        out.partition_by = _names("partition-by", opts["partition-by"])
    out.transaction = opts.get("transaction") or None
    if "snapshot-properties" in opts:
        props = _json_object("snapshot-properties", opts["snapshot-properties"])
        out.snapshot_properties = {str(k): str(v) for k, v in props.items()}
        if JOB_ID in out.snapshot_properties:
            raise _fail("snapshot-properties", f"{JOB_ID!r} is reserved: it names the job")
    if operation == WRITE and out.ident is None:
        raise _fail("path", "save('namespace.table'): the table to write is missing")
    return out


def markdown_table() -> str:
    """The README's option table."""
    lines = ["| option | applies to | value | meaning |", "|---|---|---|---|"]
    for spec in OPTIONS:
        lines.append(f"| `{spec.name}` | {spec.applies} | {spec.values} | {spec.doc} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())

__all__ = [
    "OPTIONS",
    "READ",
    "WRITE",
    "OptionSpec",
    "SourceOptions",
    "markdown_table",
    "parse_millis",
    "parse_options",
]
