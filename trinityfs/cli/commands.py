"""Commands of `trinityfs` on the catalog: files (through the trinity:// filesystem) and
history (through the catalog API)."""

from __future__ import annotations

import argparse
import os
import posixpath
import re
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from typing import Any

from trinityfs.catalog import Change, Lakehouse, VersionInfo
from trinityfs.errors import LakehouseNotFoundError
from trinityfs.fs import content
from trinityfs.fs.errors import CommitConflict, is_a_directory, message_of
from trinityfs.fs.paths import parse_ref, strip_protocol

from .output import millis_to_text, table

EDIT_TEMPLATE = b'{\n  "definition": {},\n  "kind": "table"\n}\n'
SUMMARY_ITEMS = 3
_INTERRUPTED_INIT = re.compile(r"_lakehouse_def_[0-9a-f-]+\.binpb")


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def register(sub: Any) -> None:
    """Add the catalog commands to the subparsers `sub`."""

    def add(name: str, func: Any, help: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help, description=help, **kwargs)
        parser.set_defaults(func=func)
        return parser

    p = add("init", cmd_init, "create a lakehouse at the root")
    p.add_argument("--order", type=int, help="tree order (default 128)")
    p.add_argument("--namespace-max-bytes", type=int, dest="namespace_name_max_size_bytes")
    p.add_argument("--table-max-bytes", type=int, dest="table_name_max_size_bytes")
    p.add_argument("--view-max-bytes", type=int, dest="view_name_max_size_bytes")
    p.add_argument("--node-max-bytes", type=int, dest="node_file_max_size_bytes")
    p.add_argument("--txn-ttl-millis", type=int, dest="txn_ttl_millis")
    p.add_argument("--isolation", dest="txn_isolation_level", choices=["SNAPSHOT", "SERIALIZABLE"])
    p.add_argument("--property", type=_key_value, action="append", metavar="KEY=VALUE")
    p.add_argument("--exist-ok", action="store_true", help="succeed if one already exists")

    p = add("ls", cmd_ls, "list a directory: namespaces, tables and views, versions")
    p.add_argument("path", nargs="?", default="/")
    p.add_argument("-l", "--long", action="store_true", help="with sizes (reads definitions)")

    p = add("find", cmd_find, "every table and view below a path (one scan)")
    p.add_argument("path", nargs="?", default="/")
    p.add_argument("-d", "--dirs", action="store_true", help="namespaces too")

    p = add("info", cmd_info, "type, kind, size, version (and properties) of a path")
    p.add_argument("path")

    p = add("cat", cmd_cat, "print definitions as JSON")
    p.add_argument("paths", nargs="+", metavar="path")

    p = add("put", cmd_put, "write a definition from a local file (or - for stdin)")
    p.add_argument("source", help="a local JSON file, or - for stdin")
    p.add_argument("dest", help="/<namespace>/<name>, or a namespace to keep the file name")
    p.add_argument("--create", action="store_true", help="fail if the object exists")

    p = add("edit", cmd_edit, "edit a definition in $EDITOR; commit on save")
    p.add_argument("path")

    p = add("rm", cmd_rm, "remove tables and views (namespaces with -r): one commit")
    p.add_argument("paths", nargs="+", metavar="path")
    p.add_argument("-r", "--recursive", action="store_true", help="namespaces and content")

    p = add("mkdir", cmd_mkdir, "create namespaces: one commit")
    p.add_argument("paths", nargs="+", metavar="namespace")
    p.add_argument("--property", type=_key_value, action="append", metavar="KEY=VALUE")
    p.add_argument("-p", "--parents", action="store_true", help="no error if it exists")

    p = add("rmdir", cmd_rmdir, "remove empty namespaces: one commit")
    p.add_argument("paths", nargs="+", metavar="namespace")

    p = add("mv", cmd_mv, "rename tables, views and namespaces: one commit")
    p.add_argument("source")
    p.add_argument("dest")

    p = add("cp", cmd_cp, "copy definitions (from any version: restores): one commit")
    p.add_argument("source")
    p.add_argument("dest")
    p.add_argument("-r", "--recursive", action="store_true")

    p = add("props", cmd_props, "show or set namespace properties")
    p.add_argument("path")
    p.add_argument("set", nargs="*", type=_key_value, metavar="KEY=VALUE")
    p.add_argument("--unset", action="append", default=[], metavar="KEY")

    p = add("log", cmd_log, "versions with their time and what each changed")
    p.add_argument("-n", "--limit", type=int, help="only the latest N versions")
    p.add_argument("--reverse", action="store_true", help="oldest first")

    p = add("diff", cmd_diff, "objects created, replaced or dropped between two versions")
    p.add_argument("v1", help="a version number, 'latest' or an ISO-8601 time")
    p.add_argument("v2", help="a version number, 'latest' or an ISO-8601 time")

    p = add("show", cmd_show, "the lakehouse definition")
    p.add_argument("--version", dest="at", help="at this version (default the latest)")

    p = add("rollback", cmd_rollback, "commit a new version equal to an older one")
    p.add_argument("version", help="a version number or an ISO-8601 time")


# -- helpers ----------------------------------------------------------------------------


def resolve_version(lake: Lakehouse, text: str) -> int:
    """A version number, 'latest', or the version current at an ISO-8601 time."""
    ref = parse_ref(str(text))
    if ref.is_latest:
        return lake.latest_version()
    if ref.number is not None:
        return ref.number
    if ref.millis is not None:
        return lake.version_at(ref.millis)
    raise ValueError(f"{text!r} is not a version number, 'latest' or an ISO-8601 time")


def committed(ctx: Any, what: str, version: int | None) -> None:
    """Report the outcome of one commit."""
    text = f"{what}: version {version}" if version is not None else f"{what}: no change"
    ctx.out.emit({"version": version, "changed": version is not None}, text)


def _entry_row(entry: dict[str, Any], long: bool) -> list[Any]:
    name = posixpath.basename(entry["name"]) or entry["name"]
    if entry["type"] == "directory":
        name += "/"
    row = [name, entry.get("kind", "")]
    if long:
        row += [entry.get("size") if entry["type"] == "file" else "-", entry.get("version")]
    return row


def summarize(changes: list[Change], info: VersionInfo, oldest: int) -> str:
    """One line saying what a version changed."""
    parts = []
    if info.rollback_from is not None:
        parts.append(f"rollback from version {info.rollback_from}")
    if len(changes) <= SUMMARY_ITEMS:
        parts += [f"{c.action} {c.object.kind} {c.object}" for c in changes]
    else:
        by_action: dict[str, Counter] = {}
        for c in changes:
            by_action.setdefault(c.action, Counter())[c.object.kind] += 1
        for action in ("created", "replaced", "dropped"):
            if action in by_action:
                kinds = by_action[action]
                counted = ", ".join(
                    f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(kinds.items())
                )
                parts.append(f"{action} {counted}")
    if not parts:
        return "(new lakehouse)" if info.version == oldest == 0 else "(lakehouse settings)"
    return "; ".join(parts)


def _change_json(change: Change) -> dict[str, Any]:
    ref = change.object
    return {"action": change.action, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name}


def refuse_foreign_directory(root: str, storage_options: dict[str, Any]) -> None:
    """`init` never writes into a non-empty local directory that holds no lakehouse."""
    if "://" in root and not root.startswith("file://"):
        return  # object stores: an empty prefix is not a thing people protect
    path = root.removeprefix("file://")
    if not os.path.exists(path):
        return
    if not os.path.isdir(path):
        raise NotADirectoryError(f"{path} exists and is not a directory")
    # an interrupted `init` leaves only a LakehouseDef file: finishing it is fine
    leftovers = [name for name in os.listdir(path) if not _INTERRUPTED_INIT.fullmatch(name)]
    if not leftovers:
        return
    try:
        Lakehouse.open(root, storage_options=storage_options)
    except LakehouseNotFoundError:
        raise FileExistsError(
            f"{path} is not empty and holds no lakehouse (it has {leftovers[0]!r}); "
            "give a new or empty directory"
        ) from None


# -- commands ---------------------------------------------------------------------------


def cmd_init(ctx: Any, args: argparse.Namespace) -> int:
    options = {
        name: getattr(args, name)
        for name in (
            "order",
            "namespace_name_max_size_bytes",
            "table_name_max_size_bytes",
            "view_name_max_size_bytes",
            "node_file_max_size_bytes",
            "txn_ttl_millis",
            "txn_isolation_level",
        )
        if getattr(args, name) is not None
    }
    if args.property:
        options["properties"] = dict(args.property)
    refuse_foreign_directory(ctx.root, ctx.storage_options)
    lake = Lakehouse.create(
        ctx.root, storage_options=ctx.storage_options, exist_ok=args.exist_ok, **options
    )
    version = lake.latest_version()
    ctx.out.emit(
        {"root": lake.url, "version": version, "id": lake.lakehouse_def().id},
        f"lakehouse at {lake.url} (version {version})",
    )
    return 0


def cmd_ls(ctx: Any, args: argparse.Namespace) -> int:
    entries = ctx.fs.ls(args.path, detail=True, sizes=args.long)
    if ctx.out.json:
        ctx.out.emit(entries)
        return 0
    headers = ["NAME", "KIND", "SIZE", "VERSION"] if args.long else None
    ctx.out.emit(None, table([_entry_row(e, args.long) for e in entries], headers))
    return 0


def cmd_find(ctx: Any, args: argparse.Namespace) -> int:
    found = ctx.fs.find(args.path, withdirs=args.dirs)
    ctx.out.emit(found, found)
    return 0


def cmd_info(ctx: Any, args: argparse.Namespace) -> int:
    info = ctx.fs.info(args.path)
    lines = []
    for key in ("name", "type", "kind", "size", "version", "latest", "created", "id"):
        if key in info and info[key] is not None:
            value = info[key]
            lines.append(
                (
                    key,
                    value.isoformat(timespec="milliseconds")
                    if hasattr(value, "isoformat")
                    else value,
                )
            )
    for key, value in sorted(info.get("properties", {}).items()):
        lines.append((f"property {key}", value))
    ctx.out.emit(info, table(lines))
    return 0


def cmd_cat(ctx: Any, args: argparse.Namespace) -> int:
    datas = [ctx.fs.cat_file(path) for path in args.paths]  # all or nothing
    if ctx.out.json:
        import json

        ctx.out.emit(
            {strip_protocol(p): json.loads(d) for p, d in zip(args.paths, datas, strict=True)}
        )
        return 0
    for data in datas:
        ctx.out.write_bytes(data)
    return 0


def _dest_file(ctx: Any, source: str, dest: str) -> str:
    if dest.endswith("/") or ctx.fs.isdir(dest):
        if source == "-":
            raise is_a_directory(strip_protocol(dest), "give /<namespace>/<name> for stdin")
        return strip_protocol(dest) + "/" + os.path.basename(source)
    return dest


def cmd_put(ctx: Any, args: argparse.Namespace) -> int:
    if args.source == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(args.source, "rb") as f:
            data = f.read()
    dest = _dest_file(ctx, args.source, args.dest)
    version = ctx.fs.write_definition(dest, data, mode="create" if args.create else "overwrite")
    committed(ctx, f"put {strip_protocol(dest)}", version)
    return 0


def cmd_edit(ctx: Any, args: argparse.Namespace) -> int:
    fs = ctx.fs
    path = strip_protocol(args.path)
    try:
        info = fs.info(path)
    except FileNotFoundError:
        info = None
    if info is not None and info["type"] != "file":
        raise is_a_directory(path, "only tables and views can be edited (props for namespaces)")
    original = fs.cat_file(path) if info is not None else EDIT_TEMPLATE
    base = info["version"] if info is not None else None
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    prefix = "trinityfs-" + path.strip("/").replace("/", ".") + "-"
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".json")
    keep = False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(original)
        status = subprocess.call([*shlex.split(editor), tmp])
        if status != 0:
            keep = True
            raise OSError(
                f"{editor} exited with status {status}; nothing committed (the text is in {tmp})"
            )
        with open(tmp, "rb") as f:
            edited = f.read()
        if info is not None and edited == original:
            committed(ctx, f"edit {path}", None)
            return 0
        try:
            version = fs.write_definition(
                path,
                edited,
                mode="overwrite" if info is not None else "create",
                base_version=base,
            )
        except (ValueError, CommitConflict, FileExistsError) as exc:
            keep = True
            raise type(exc)(
                f"{message_of(exc)}; nothing committed, your edit is in {tmp}"
            ) from None
        committed(ctx, f"edit {path}", version)
        return 0
    finally:
        if not keep:
            os.unlink(tmp)


def cmd_rm(ctx: Any, args: argparse.Namespace) -> int:
    fs = ctx.fs
    with fs.transaction as tx:
        fs.rm(list(args.paths), recursive=args.recursive)
    committed(ctx, "rm", tx.version)
    return 0


def cmd_mkdir(ctx: Any, args: argparse.Namespace) -> int:
    fs = ctx.fs
    properties = dict(args.property or [])
    with fs.transaction as tx:
        for path in args.paths:
            if args.parents:
                fs.makedirs(path, exist_ok=True, properties=properties)
            else:
                fs.mkdir(path, properties=properties)
    committed(ctx, "mkdir", tx.version)
    return 0


def cmd_rmdir(ctx: Any, args: argparse.Namespace) -> int:
    fs = ctx.fs
    with fs.transaction as tx:
        for path in args.paths:
            fs.rmdir(path)
    committed(ctx, "rmdir", tx.version)
    return 0


def cmd_mv(ctx: Any, args: argparse.Namespace) -> int:
    fs = ctx.fs
    if strip_protocol(args.source) == strip_protocol(args.dest):
        committed(ctx, "mv", None)
        return 0
    with fs.transaction as tx:
        fs.mv(args.source, args.dest)
    committed(ctx, "mv", tx.version)
    return 0


def cmd_cp(ctx: Any, args: argparse.Namespace) -> int:
    fs = ctx.fs
    if not args.recursive and fs.isdir(args.source):
        raise is_a_directory(strip_protocol(args.source), "use -r to copy a namespace")
    with fs.transaction as tx:
        fs.copy(args.source, args.dest, recursive=args.recursive)
    committed(ctx, "cp", tx.version)
    return 0


def cmd_props(ctx: Any, args: argparse.Namespace) -> int:
    fs = ctx.fs
    if args.set or args.unset:
        version = fs.set_properties(args.path, dict(args.set), args.unset)
        committed(ctx, "props", version)
        return 0
    props = fs.properties(args.path)
    ctx.out.emit(props, table(sorted(props.items())))
    return 0


def cmd_log(ctx: Any, args: argparse.Namespace) -> int:
    lake = ctx.lake
    oldest, latest = lake.oldest_version(), lake.latest_version()
    start = oldest if args.limit is None else max(oldest, latest - args.limit + 1)
    versions = list(range(start, latest + 1))
    if not args.reverse:
        versions.reverse()
    records = []
    with ctx.out.progress("versions read", len(versions)) as bar:
        for v in versions:
            info = lake.version_info(v)
            records.append((info, lake.changes(v)))
            bar.update()
    if ctx.out.json:
        ctx.out.emit(
            [
                {
                    "version": info.version,
                    "created_at": millis_to_text(info.created_at_millis),
                    "created_at_millis": info.created_at_millis,
                    "rollback_from": info.rollback_from,
                    "changes": [_change_json(c) for c in changes],
                }
                for info, changes in records
            ]
        )
        return 0
    rows = [
        [info.version, millis_to_text(info.created_at_millis), summarize(changes, info, oldest)]
        for info, changes in records
    ]
    ctx.out.emit(None, table(rows, ["VERSION", "TIME", "CHANGES"]))
    return 0


def cmd_diff(ctx: Any, args: argparse.Namespace) -> int:
    lake = ctx.lake
    v1, v2 = resolve_version(lake, args.v1), resolve_version(lake, args.v2)
    changes = lake.diff(v1, v2)
    if ctx.out.json:
        ctx.out.emit({"from": v1, "to": v2, "changes": [_change_json(c) for c in changes]})
        return 0
    marks = {"created": "+", "dropped": "-", "replaced": "~"}
    rows = [[marks[c.action], c.action, c.object.kind, str(c.object)] for c in changes]
    ctx.out.emit(None, table(rows) or [f"no changes between version {v1} and {v2}"])
    return 0


def cmd_show(ctx: Any, args: argparse.Namespace) -> int:
    lake = ctx.lake
    version = resolve_version(lake, args.at) if args.at is not None else lake.latest_version()
    definition = content.definition_dict(lake.lakehouse_def(version))
    data = {
        "root": lake.url,
        "version": version,
        "latest_version": lake.latest_version(),
        "oldest_version": lake.oldest_version(),
        "definition": definition,
    }
    if ctx.out.json:
        ctx.out.emit(data)
        return 0
    rows = [
        ["root", lake.url],
        ["version", version],
        ["versions", f"{data['oldest_version']}..{data['latest_version']}"],
    ]
    for key in sorted(definition):
        value = definition[key]
        if isinstance(value, dict):
            if not value:
                rows.append([key, "{}"])
            for k, v in sorted(value.items()):
                rows.append([f"{key}.{k}", v])
        else:
            rows.append([key, value])
    ctx.out.emit(None, table(rows))
    return 0


def cmd_rollback(ctx: Any, args: argparse.Namespace) -> int:
    lake = ctx.lake
    target = resolve_version(lake, args.version)
    version = lake.rollback(target)
    ctx.fs.invalidate_cache()
    ctx.out.emit(
        {"version": version, "rolled_back_to": target},
        f"rollback to version {target}: version {version}",
    )
    return 0
