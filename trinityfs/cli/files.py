"""Commands on the catalog's paths: ls, find, info, cat, edit, rm, mkdir, rmdir, mv, cp,
props. Names are exact: `* ? [ ]` are part of a name unless -g/--glob is given."""

from __future__ import annotations

import argparse
import contextlib
import os
import posixpath
import shlex
import subprocess
import tempfile
from typing import TYPE_CHECKING, Any

from trinityfs import jsontext
from trinityfs.catalog.content import MAX_CONTENT_JSON_DEPTH
from trinityfs.errors import JsonTooDeepError

from .context import Context, UsageError, add_glob_flag, expand, key_value
from .output import table

if TYPE_CHECKING:
    from trinityfs.fs.spec import TrinityFileSystem

    from .app import AddCommand

EDIT_TEMPLATE = b'{\n  "definition": {},\n  "kind": "table"\n}\n'
LOCAL_LOOKING = ("./", "../", "~", "file:")


def register(add: AddCommand) -> None:
    p = add("ls", cmd_ls, "list a directory: namespaces, tables and views, versions")
    p.add_argument("paths", nargs="*", default=["/"], metavar="path")
    p.add_argument("-l", "--long", action="store_true", help="with sizes (reads definitions)")
    add_glob_flag(p)

    p = add("find", cmd_find, "every table and view below a path (one scan)")
    p.add_argument("path", nargs="?", default="/")
    p.add_argument("-d", "--dirs", action="store_true", help="namespaces too")
    p.add_argument("--name", metavar="PATTERN", help="only names matching this glob pattern")

    p = add("info", cmd_info, "type, kind, size, version (and properties) of a path")
    p.add_argument("path")

    p = add("cat", cmd_cat, "print definitions as JSON")
    p.add_argument("paths", nargs="+", metavar="path")
    add_glob_flag(p)

    p = add("edit", cmd_edit, "edit a definition in $EDITOR; commit on save")
    p.add_argument("path")
    p.add_argument("--create", action="store_true", help="make the object if it does not exist")

    p = add("rm", cmd_rm, "remove tables and views (namespaces with -r): one commit")
    p.add_argument("paths", nargs="+", metavar="path")
    p.add_argument("-r", "--recursive", action="store_true", help="namespaces and content")
    p.add_argument("-n", "--dry-run", action="store_true", help="say what would go; change nothing")
    p.add_argument("-y", "--yes", action="store_true", help="drop namespace trees without asking")
    add_glob_flag(p)

    p = add("mkdir", cmd_mkdir, "create namespaces: one commit")
    p.add_argument("paths", nargs="+", metavar="namespace")
    p.add_argument("--property", type=key_value, action="append", metavar="KEY=VALUE")
    p.add_argument("-p", "--parents", action="store_true", help="no error if it exists")

    p = add("rmdir", cmd_rmdir, "remove empty namespaces: one commit")
    p.add_argument("paths", nargs="+", metavar="namespace")

    p = add("mv", cmd_mv, "rename tables, views and namespaces (in the catalog): one commit")
    p.add_argument("source")
    p.add_argument("dest")
    add_glob_flag(p)

    p = add("cp", cmd_cp, "copy definitions in the catalog (from any version: restores)")
    p.add_argument("source")
    p.add_argument("dest")
    p.add_argument("-r", "--recursive", action="store_true")
    p.add_argument("-p", "--parents", action="store_true", help="create the namespace")
    add_glob_flag(p)

    p = add("props", cmd_props, "show or set namespace properties")
    p.add_argument("path")
    p.add_argument("set", nargs="*", default=[], type=key_value, metavar="KEY=VALUE")
    p.add_argument("--unset", action="append", default=[], metavar="KEY")


# -- reading ------------------------------------------------------------------------------


def _entry_row(entry: dict[str, Any], long: bool) -> list[Any]:
    name = posixpath.basename(entry["name"]) or entry["name"]
    if entry["type"] == "directory":
        name += "/"
    row = [name, entry.get("kind", "")]
    if long:
        row += [entry.get("size") if entry["type"] == "file" else "-", entry.get("version")]
    return row


def cmd_ls(ctx: Context, args: argparse.Namespace) -> int:
    fs = ctx.fs
    entries: list[dict[str, Any]] = []
    if args.glob:
        for path in expand(fs, args.paths, True):
            entries.append(fs.info(path))
    else:
        for path in args.paths:
            entries += fs.ls(path, detail=True, sizes=args.long)
    if ctx.out.json:
        ctx.out.emit(entries)
        return 0
    headers = ["NAME", "KIND", "SIZE", "VERSION"] if args.long else None
    rows = [_entry_row(e, args.long) for e in entries]
    if args.glob:  # matches may sit in different directories: full paths
        for row, entry in zip(rows, entries, strict=True):
            row[0] = entry["name"] + ("/" if entry["type"] == "directory" else "")
    ctx.out.emit(None, table(rows, headers))
    return 0


def cmd_find(ctx: Context, args: argparse.Namespace) -> int:
    import fnmatch

    found = ctx.fs.find(args.path, withdirs=args.dirs)
    if not found:
        ctx.fs.info(args.path)  # a missing path is an error (as in find(1)), not no output
    if args.name is not None:
        found = [p for p in found if fnmatch.fnmatchcase(posixpath.basename(p), args.name)]
    ctx.out.emit(found, found)
    return 0


def cmd_info(ctx: Context, args: argparse.Namespace) -> int:
    info = ctx.fs.info(args.path)
    lines = []
    for key in ("name", "type", "kind", "size", "version", "latest", "mtime", "created", "id"):
        if info.get(key) is not None:
            value = info[key]
            if hasattr(value, "isoformat"):
                value = value.isoformat(timespec="milliseconds")
            lines.append((key, value))
    for key, value in sorted(info.get("properties", {}).items()):
        lines.append((f"property {key}", value))
    ctx.out.emit(info, table(lines))
    return 0


def cmd_cat(ctx: Context, args: argparse.Namespace) -> int:
    paths = expand(ctx.fs, args.paths, args.glob)
    datas = [ctx.fs.cat_file(path) for path in paths]  # all or nothing
    if ctx.out.json:
        ctx.out.emit({path: _json_of(path, d) for path, d in zip(paths, datas, strict=True)})
        return 0
    for data in datas:
        ctx.out.write_bytes(data)
    return 0


def _json_of(path: str, data: bytes) -> Any:
    """The parsed content of `path`; a one-line ValueError when it cannot be (not JSON,
    or nested deeper than jsontext allows)."""
    try:
        return jsontext.loads(data, max_depth=MAX_CONTENT_JSON_DEPTH)
    except JsonTooDeepError as exc:
        raise ValueError(f"{path}: {exc}, too deep to show with --json") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None


# -- edit ---------------------------------------------------------------------------------


def cmd_edit(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.fs.errors import CommitConflict, is_a_directory, message_of
    from trinityfs.fs.paths import strip_protocol

    fs = ctx.fs
    path = strip_protocol(args.path)
    try:
        info = fs.info(path)
    except FileNotFoundError:
        if not args.create:
            raise FileNotFoundError(
                f"{path}: no such table or view (edit --create makes a new one)"
            ) from None
        info = None
    if info is not None and info["type"] != "file":
        raise is_a_directory(path, "only tables and views can be edited (props for namespaces)")
    original = fs.cat_file(path) if info is not None else EDIT_TEMPLATE
    base = info["version"] if info is not None else None
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    label = path.strip("/").replace("/", ".").encode()[:60].decode("utf-8", "ignore")
    prefix = "trinityfs-" + label + "-"  # 60 bytes: the file name stays under 255
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".json")
    edited: bytes | None = None  # the text, once read back: kept when it is an edit
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(original)
        try:
            status = subprocess.call([*shlex.split(editor), tmp])
        except KeyboardInterrupt:  # nothing committed; an edit saved so far is kept
            edited = _read_back(tmp)
            if edited is None or edited == original:
                raise
            ctx.out.err.write(f"trinityfs: interrupted; nothing committed, your edit is in {tmp}\n")
            return 130
        edited = _read_back(tmp)
        if status != 0:
            raise OSError(
                f"{editor} exited with status {status}; nothing committed"
                + (f" (your edit is in {tmp})" if _is_an_edit(edited, original) else "")
            )
        if edited is None:
            raise FileNotFoundError(f"{editor} removed {tmp}; nothing committed")
        if edited == original:
            ctx.committed(f"edit {path}", None)
            return 0
        if not edited.strip():
            ctx.committed(f"edit {path} (emptied: nothing committed)", None)
            return 0
        try:
            version = fs.write_definition(
                path,
                edited,
                mode="overwrite" if info is not None else "create",
                base_version=base,
            )
        except (ValueError, CommitConflict, FileExistsError) as exc:
            # the conflict's own "nothing was committed, retry" would say it twice
            reason = message_of(exc).removesuffix("; nothing was committed, retry")
            raise type(exc)(f"{reason}; nothing committed, your edit is in {tmp}") from None
        ctx.committed(f"edit {path}", version)
        edited = None  # committed: nothing to keep
        return 0
    finally:
        if not _is_an_edit(edited, original):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _read_back(tmp: str) -> bytes | None:
    """The temporary file's text, None when the editor removed it."""
    try:
        with open(tmp, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _is_an_edit(edited: bytes | None, original: bytes) -> bool:
    """Whether the temporary file holds the user's work (kept when nothing committed)."""
    return edited is not None and edited != original and bool(edited.strip())


# -- changes ------------------------------------------------------------------------------


def _catalog_path(text: str) -> str:
    """`text` as a catalog path; refuses paths that look local (get/put/sync move files)."""
    if text.startswith(LOCAL_LOOKING) or text in (".", ".."):
        raise UsageError(
            f"{text} looks like a local path: cp and mv work inside the catalog; use "
            "'trinityfs get', 'put' or 'sync' to move definitions to and from local files"
        )
    return text


def _describe(fs: TrinityFileSystem, path: str) -> tuple[str, int]:
    """('namespace'|'object'|'root', number of tables and views it holds)."""
    from trinityfs.fs.paths import parse_path

    p = parse_path(path)
    if p.is_root:
        return "root", len(fs.find(path))
    info = fs.info(path)  # FileNotFoundError names the path
    if info["type"] == "directory":
        return "namespace", len(fs.find(path))
    return "object", 1


def cmd_rm(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.fs.errors import is_a_directory

    fs = ctx.fs
    paths = expand(fs, [_catalog_path(p) for p in args.paths], args.glob)
    plan = []
    for path in paths:
        what, count = _describe(fs, path)
        if what != "object" and not args.recursive:
            raise is_a_directory(path, "is a namespace: use 'rmdir', or 'rm -r'")
        plan.append((path, what, count))
    trees = [(p, w, n) for p, w, n in plan if w != "object"]
    if args.dry_run:
        lines = [
            f"would drop {what} {path}" + (f" and its {n} tables and views" if n else "")
            if what != "object"
            else f"would drop {path}"
            for path, what, n in plan
        ]
        ctx.out.emit(
            {"dry_run": True, "drop": [{"path": p, "what": w, "objects": n} for p, w, n in plan]},
            [*lines, "rm: dry run, nothing changed"],
        )
        return 0
    full = [(p, n) for p, w, n in trees if n or w == "root"]
    if full:
        names = ", ".join(p for p, _ in full)
        total = sum(n for _, n in full)
        ctx.confirm(
            f"drop {names} with {total} tables and views?",
            f"rm -r {names} drops {total} tables and views",
        )
    with fs.transaction as tx:
        fs.rm(paths, recursive=args.recursive)
    ctx.committed("rm", tx.version)
    return 0


def cmd_mkdir(ctx: Context, args: argparse.Namespace) -> int:
    fs = ctx.fs
    properties = dict(args.property or [])
    with fs.transaction as tx:
        for path in args.paths:
            if args.parents:
                fs.makedirs(path, exist_ok=True, properties=properties)
            else:
                fs.mkdir(path, properties=properties)
    ctx.committed("mkdir", tx.version)
    return 0


def cmd_rmdir(ctx: Context, args: argparse.Namespace) -> int:
    fs = ctx.fs
    with fs.transaction as tx:
        for path in args.paths:
            fs.rmdir(path)
    ctx.committed("rmdir", tx.version)
    return 0


def _sources(fs: TrinityFileSystem, source: str, glob: bool) -> str | list[str]:
    """The exact source, or with --glob the paths the pattern matches (one is a path)."""
    if not glob:
        return source
    matches = expand(fs, [source], True)
    return matches[0] if len(matches) == 1 else matches


def cmd_mv(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.fs.paths import strip_protocol

    fs = ctx.fs
    source, dest = _catalog_path(args.source), _catalog_path(args.dest)
    if strip_protocol(source) == strip_protocol(dest):
        ctx.committed("mv", None)
        return 0
    sources = _sources(fs, source, args.glob)
    with fs.transaction as tx:
        fs.mv(sources, dest)
    ctx.committed("mv", tx.version)
    return 0


def _namespace_of(path: str) -> str | None:
    from trinityfs.fs.paths import parse_path

    p = parse_path(path)
    return p.namespace if p.is_object else None


def cmd_cp(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.fs.errors import is_a_directory
    from trinityfs.fs.paths import strip_protocol

    fs = ctx.fs
    source, dest = _catalog_path(args.source), _catalog_path(args.dest)
    sources = _sources(fs, source, args.glob)
    single = sources if isinstance(sources, str) else None
    if single is not None and not args.recursive and fs.isdir(single):
        raise is_a_directory(strip_protocol(single), "is a namespace: use 'cp -r'")
    if single is not None and not fs.isdir(single) and not dest.endswith("/"):
        namespace = _namespace_of(dest)
        if namespace is not None and not args.parents and not fs.isdir(dest.rsplit("/", 1)[0]):
            raise FileNotFoundError(
                f"{strip_protocol(dest)}: no namespace {namespace!r} (cp copies inside the "
                f"catalog: 'trinityfs get {strip_protocol(single)} FILE' writes a local file; "
                "cp -p creates the namespace)"
            )
    with fs.transaction as tx:
        fs.copy(sources, dest, recursive=args.recursive)
    ctx.committed("cp", tx.version)
    return 0


def cmd_props(ctx: Context, args: argparse.Namespace) -> int:
    both = sorted(set(dict(args.set)) & set(args.unset))
    if both:
        raise UsageError(f"property {both[0]!r} is both set and unset: give one of them")
    fs = ctx.fs
    if args.set or args.unset:
        version = fs.set_properties(args.path, dict(args.set), args.unset)
        ctx.committed("props", version)
        return 0
    props = fs.properties(args.path)
    ctx.out.emit(props, table(sorted(props.items())))
    return 0
