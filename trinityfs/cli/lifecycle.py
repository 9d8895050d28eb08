"""Lifecycle commands of `trinityfs` (exports, expiration, fsck, distributed transactions).

Each is registered only when the catalog API has it (`Lakehouse.export`, `.exports`,
`.drop_export`, `.expire`, `.fsck`, `.begin_distributed` / `.load_distributed`), so the
command always offers exactly what the engine can do.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import sys
from typing import Any

from trinityfs.catalog import Lakehouse

from .commands import resolve_version
from .output import millis_to_text, table


def has(name: str) -> bool:
    return callable(getattr(Lakehouse, name, None))


def _accepts(func: Any, name: str) -> bool:
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _call(func: Any, **kwargs: Any) -> Any:
    """Call with the keyword arguments that were given and that `func` takes."""
    return func(**{k: v for k, v in kwargs.items() if v is not None and _accepts(func, k)})


def as_dict(obj: Any, *, files: bool = True) -> Any:
    """A report as JSON-ready data (its own to_dict when it has one)."""
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict(files=files) if _accepts(to_dict, "files") else to_dict()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return obj


def report_rows(data: dict[str, Any]) -> list[list[Any]]:
    """Scalar fields as rows; lists as their length; small dicts flattened one level."""
    rows: list[list[Any]] = []
    for key in sorted(data):
        value = data[key]
        if isinstance(value, list):
            rows.append([key, len(value)])
        elif isinstance(value, dict):
            if all(not isinstance(v, dict | list) for v in value.values()):
                rows += [[f"{key}.{k}", v] for k, v in sorted(value.items())]
        elif value is not None:
            rows.append([key, value])
    return rows


def register(sub: Any) -> None:
    """Add the lifecycle commands the catalog API has."""

    def add(name: str, func: Any, help: str) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help, description=help)
        parser.set_defaults(func=func)
        return parser

    if has("export"):
        p = add("export", cmd_export, "export a version as a named, read-only snapshot")
        p.add_argument("name")
        p.add_argument("--version", dest="at", help="version, 'latest' or ISO time")
        p.add_argument("--mode", choices=["minimal", "partial", "full"], default="minimal")
        p.add_argument("--depth", type=int, help="levels copied by a partial export")
    if has("exports"):
        add("exports", cmd_exports, "list the exported snapshots")
    if has("drop_export"):
        p = add("drop-export", cmd_drop_export, "remove an exported snapshot")
        p.add_argument("name")
    if has("expire"):
        p = add("expire", cmd_expire, "expire old versions and delete unreachable files")
        p.add_argument("--max-age-millis", type=int)
        p.add_argument("--min-versions", type=int)
        p.add_argument("--grace-millis", type=int)
        p.add_argument("--dry-run", action="store_true", help="report, delete nothing")
    if has("fsck"):
        add("fsck", cmd_fsck, "check every kept version, export and transaction")
    if has("begin_distributed") and has("load_distributed"):
        p = add("txn", cmd_txn_help, "distributed transactions (begin, then commit anywhere)")
        txn = p.add_subparsers(dest="txn_command", metavar="ACTION")

        def action(name: str, func: Any, help: str) -> argparse.ArgumentParser:
            parser = txn.add_parser(name, help=help, description=help)
            parser.set_defaults(func=func)
            return parser

        q = action("begin", cmd_txn_begin, "begin one; prints its id")
        q.add_argument("--ttl-millis", type=int)
        q.add_argument("--isolation", choices=["SNAPSHOT", "SERIALIZABLE"])
        q = action("show", cmd_txn_show, "its id, base version, expiry")
        q.add_argument("id")
        q = action("put", cmd_txn_put, "write a definition into it (from a file or -)")
        q.add_argument("id")
        q.add_argument("source")
        q.add_argument("dest")
        q = action("rm", cmd_txn_rm, "remove tables and views in it")
        q.add_argument("id")
        q.add_argument("paths", nargs="+", metavar="path")
        q.add_argument("-r", "--recursive", action="store_true")
        q = action("mkdir", cmd_txn_mkdir, "create namespaces in it")
        q.add_argument("id")
        q.add_argument("paths", nargs="+", metavar="namespace")
        q = action("mv", cmd_txn_mv, "rename in it")
        q.add_argument("id")
        q.add_argument("source")
        q.add_argument("dest")
        q = action("commit", cmd_txn_commit, "commit it (one new version)")
        q.add_argument("id")
        q = action("abort", cmd_txn_abort, "abort it for every process")
        q.add_argument("id")


# -- exports ----------------------------------------------------------------------------


def cmd_export(ctx: Any, args: argparse.Namespace) -> int:
    lake = ctx.lake
    version = resolve_version(lake, args.at) if args.at is not None else None
    with ctx.out.progress(f"files exported to {args.name}") as bar:

        def progress(p: Any) -> None:
            bar.update(getattr(p, "files_done", None), getattr(p, "files_total", None))

        info = _call(
            lake.export,
            name=args.name,
            version=version,
            mode=args.mode,
            depth=args.depth,
            progress=progress,
        )
    ctx.fs.invalidate_cache()
    data = as_dict(info)
    ctx.out.emit(data, table(report_rows(data)))
    return 0


def cmd_exports(ctx: Any, args: argparse.Namespace) -> int:
    exports = ctx.lake.exports()
    data = [as_dict(e) for e in exports]
    if ctx.out.json:
        ctx.out.emit(data)
        return 0
    rows = [
        [
            d.get("name"),
            d.get("version"),
            millis_to_text(d.get("created_at_millis")),
            "full" if d.get("standalone") else "minimal/partial",
            d.get("problem") or "",
        ]
        for d in data
    ]
    ctx.out.emit(
        None,
        table(rows, ["NAME", "VERSION", "CREATED", "KIND", "PROBLEM"]) if rows else ["no exports"],
    )
    return 0


def cmd_drop_export(ctx: Any, args: argparse.Namespace) -> int:
    dropped = ctx.lake.drop_export(args.name)
    ctx.fs.invalidate_cache()
    data = as_dict(dropped)
    ctx.out.emit(data, table(report_rows(data)))
    return 0


# -- expiration, fsck -------------------------------------------------------------------


def cmd_expire(ctx: Any, args: argparse.Namespace) -> int:
    report = _call(
        ctx.lake.expire,
        max_age_millis=args.max_age_millis,
        min_versions=args.min_versions,
        dry_run=args.dry_run,
        grace_millis=args.grace_millis,
    )
    ctx.fs.invalidate_cache()
    data = as_dict(report, files=ctx.out.json)
    ctx.out.emit(data, table(report_rows(as_dict(report, files=False))))
    return 0


def cmd_fsck(ctx: Any, args: argparse.Namespace) -> int:
    report = ctx.lake.fsck()
    data = as_dict(report, files=ctx.out.json)
    lines = table(report_rows(as_dict(report, files=False)))
    for level in ("errors", "warnings"):
        for problem in getattr(report, level, []) or []:
            p = as_dict(problem)
            text = " ".join(str(p.get(k)) for k in ("kind", "location", "message") if p.get(k))
            lines.append(f"{level[:-1]}: {text}")
    ctx.out.emit(data, lines)
    status = getattr(report, "exit_status", None)
    if status is None:
        status = 0 if getattr(report, "ok", True) else 1
    return int(status)


# -- distributed transactions -----------------------------------------------------------


def cmd_txn_help(ctx: Any, args: argparse.Namespace) -> int:
    from .main import UsageError

    raise UsageError("txn needs an action: begin, show, put, rm, mkdir, mv, commit, abort")


def _txn_data(txn: Any) -> dict[str, Any]:
    return {
        "id": txn.id,
        "base_version": txn.version,
        "began_at": millis_to_text(getattr(txn, "began_at_millis", None)),
        "expire_at": millis_to_text(getattr(txn, "expire_at_millis", None)),
    }


def cmd_txn_begin(ctx: Any, args: argparse.Namespace) -> int:
    txn = _call(ctx.lake.begin_distributed, ttl_millis=args.ttl_millis, isolation=args.isolation)
    data = _txn_data(txn)
    ctx.out.emit(data, txn.id)
    return 0


def cmd_txn_show(ctx: Any, args: argparse.Namespace) -> int:
    data = _txn_data(ctx.lake.load_distributed(args.id))
    ctx.out.emit(data, table([[k, v] for k, v in data.items()]))
    return 0


def _in_txn(ctx: Any, txn_id: str, change: Any) -> int:
    txn = ctx.lake.load_distributed(txn_id)
    with ctx.fs.within(txn):
        change(ctx.fs)
    txn.save()
    ctx.out.emit({"id": txn.id, "saved": True}, f"saved in transaction {txn.id}")
    return 0


def cmd_txn_put(ctx: Any, args: argparse.Namespace) -> int:
    if args.source == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(args.source, "rb") as f:
            data = f.read()
    return _in_txn(ctx, args.id, lambda fs: fs.write_definition(args.dest, data))


def cmd_txn_rm(ctx: Any, args: argparse.Namespace) -> int:
    return _in_txn(ctx, args.id, lambda fs: fs.rm(list(args.paths), recursive=args.recursive))


def cmd_txn_mkdir(ctx: Any, args: argparse.Namespace) -> int:
    return _in_txn(ctx, args.id, lambda fs: [fs.mkdir(p) for p in args.paths])


def cmd_txn_mv(ctx: Any, args: argparse.Namespace) -> int:
    return _in_txn(ctx, args.id, lambda fs: fs.mv(args.source, args.dest))


def cmd_txn_commit(ctx: Any, args: argparse.Namespace) -> int:
    txn = ctx.lake.load_distributed(args.id)
    base = txn.version
    version = txn.commit()
    ctx.fs.invalidate_cache()
    changed = version != base
    ctx.out.emit(
        {"id": args.id, "version": version if changed else None, "changed": changed},
        f"txn {args.id}: version {version}" if changed else f"txn {args.id}: no change",
    )
    return 0


def cmd_txn_abort(ctx: Any, args: argparse.Namespace) -> int:
    ctx.lake.load_distributed(args.id).abort()
    ctx.out.emit({"id": args.id, "aborted": True}, f"txn {args.id}: aborted")
    return 0
