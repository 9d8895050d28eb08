"""Moving definitions between the catalog and local files: get, put, sync.

The one rule: `cp` and `mv` stay inside the catalog; these three cross to local files.
`get CATALOG_PATH FILE` and `put FILE CATALOG_PATH` say the direction by their name; in
`sync SRC DEST` the catalog side is written `trinity://...` (as `aws s3 sync` writes
`s3://...`) and the other side is a local folder holding one `<name>.json` per table or
view (a folder per namespace when the whole catalog is synced).
"""

from __future__ import annotations

import argparse
import errno
import os
import posixpath
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .context import Context, UsageError
from .errors import InputError
from .output import table

if TYPE_CHECKING:
    from trinityfs.fs.spec import TrinityFileSystem

    from .app import AddCommand

PROTOCOL = "trinity://"
SUFFIX = ".json"
# a definition is at most 8 MiB encoded (format/definitions.py); its JSON file is read
# only up to this (like the mount's writes and `load`'s lines), so `put /dev/zero` or a
# data file given by mistake is refused at once instead of filling memory
MAX_DEFINITION_FILE_BYTES = 64 * 2**20


def read_definition_file(source: str) -> bytes:
    """The bytes of a local definition file, or of stdin for "-": at most
    MAX_DEFINITION_FILE_BYTES (OSError EFBIG naming the source beyond that)."""
    if source == "-":
        data = sys.stdin.buffer.read(MAX_DEFINITION_FILE_BYTES + 1)
    else:
        with open(source, "rb") as f:
            data = f.read(MAX_DEFINITION_FILE_BYTES + 1)
    if len(data) > MAX_DEFINITION_FILE_BYTES:
        raise OSError(
            errno.EFBIG,
            f"larger than {MAX_DEFINITION_FILE_BYTES // 2**20} MiB, more than any "
            "definition file; nothing read further, nothing committed",
            "stdin" if source == "-" else source,
        )
    return data


def register(add: AddCommand) -> None:
    p = add("get", cmd_get, "write a definition to a local file (or - for stdout)")
    p.add_argument("source", help="/<namespace>/<name> (any version: /v/<n>/...)")
    p.add_argument("dest", nargs="?", default="-", help="a file, a folder, or - (default)")

    p = add("put", cmd_put, "write a definition from a local file (or - for stdin)")
    p.add_argument("source", help="a local JSON file, or - for stdin")
    p.add_argument("dest", help="/<namespace>/<name>, or a namespace to keep the file name")
    p.add_argument("--create", action="store_true", help="fail if the object exists")

    p = add(
        "sync",
        cmd_sync,
        "make a local folder match the catalog, or the catalog match a folder",
        epilog="The catalog side is written trinity://<namespace> (or trinity:/// for all).",
    )
    p.add_argument("source", help="trinity://<namespace> or a local folder")
    p.add_argument("dest", help="a local folder or trinity://<namespace>")
    p.add_argument("--delete", action="store_true", help="remove what the source lacks")
    p.add_argument("-n", "--dry-run", action="store_true", help="say what would change")


# -- get, put -----------------------------------------------------------------------------


def _write_local(path: Path, data: bytes) -> None:
    """Replace `path` atomically (a crash leaves the old file or the new one), with the
    mode of the file it replaces, else the umask's (mkstemp's 0600 is for its own
    privacy, not the mode `get` should leave)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:  # name the file asked for, not the temporary one beside it
        raise OSError(exc.errno, f"cannot write it: {exc.strerror}", str(path)) from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def cmd_get(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.fs.errors import is_a_directory
    from trinityfs.fs.paths import strip_protocol

    fs = ctx.fs
    source = strip_protocol(args.source)
    if fs.isdir(source):
        raise is_a_directory(source, f"is a namespace: use 'trinityfs sync {PROTOCOL}...'")
    data = fs.cat_file(source)
    if args.dest == "-":
        ctx.out.write_bytes(data)
        return 0
    dest = Path(args.dest)
    if args.dest.endswith(("/", os.sep)) or dest.is_dir():
        dest = dest / (posixpath.basename(source) + SUFFIX)
    _write_local(dest, data)
    ctx.out.emit({"path": str(dest), "bytes": len(data)}, f"get {source}: {dest}")
    return 0


def cmd_put(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.fs.errors import is_a_directory
    from trinityfs.fs.paths import strip_protocol

    data = read_definition_file(args.source)
    dest = args.dest
    if dest.endswith("/") or ctx.fs.isdir(dest):
        if args.source == "-":
            raise is_a_directory(strip_protocol(dest), "give /<namespace>/<name> for stdin")
        name = os.path.basename(args.source)
        dest = strip_protocol(dest) + "/" + name.removesuffix(SUFFIX)
    version = ctx.fs.write_definition(dest, data, mode="create" if args.create else "overwrite")
    ctx.committed(f"put {strip_protocol(dest)}", version)
    return 0


# -- sync ---------------------------------------------------------------------------------


@dataclass
class Plan:
    """What a sync writes and removes (relative names like `sales/orders`)."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0

    def lines(self, dry_run: bool) -> list[str]:
        rows = [["+", n] for n in self.created] + [["~", n] for n in self.updated]
        rows += [["-", n] for n in self.deleted]
        changes = len(self.created) + len(self.updated) + len(self.deleted)
        verb = "would change" if dry_run else "changed"
        return [*table(rows), f"{changes} {verb}, {self.unchanged} unchanged"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "updated": self.updated,
            "deleted": self.deleted,
            "unchanged": self.unchanged,
        }


def _catalog_objects(fs: TrinityFileSystem, root: str) -> dict[str, str]:
    """Relative name (`orders`, or `sales/orders` from the top) -> catalog path."""
    from trinityfs.fs.paths import parse_path

    p = parse_path(root)
    if not (p.is_root or p.is_namespace):
        raise UsageError(f"sync works on a namespace or the whole catalog, not {root}")
    found = fs.find(root)
    base = root.rstrip("/") + "/"
    return {path[len(base) :] if base != "//" else path[1:]: path for path in found}


def _local_files(folder: Path, depth: int) -> dict[str, Path]:
    """Relative name (without .json) -> file, at `depth` levels below `folder`.

    Every `<name>.json` counts, dot-names too (`.t.json` is table `.t`, which `sync`
    down writes). An entry whose presence cannot be read, a folder that cannot be
    listed, a dangling symlink, a directory or special file named like a definition,
    raises naming it: `--delete` would otherwise drop that object from the catalog.
    """
    if not folder.exists():
        return {}
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder} is not a folder")
    found: dict[str, Path] = {}
    for entry in _entries(folder):
        if depth == 1:
            _add_definition(found, entry, "")
        elif entry.is_dir():
            for inner in _entries(Path(entry.path)):
                _add_definition(found, inner, entry.name + "/")
        elif _dangling(entry):  # a namespace folder may have been meant
            raise _unreadable(entry, "a dangling symlink")
    return found


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    """The folder's entries, sorted; an unreadable folder raises (Path.glob skips it)."""
    with os.scandir(folder) as it:
        return sorted(it, key=lambda entry: entry.name)


def _add_definition(found: dict[str, Path], entry: os.DirEntry[str], prefix: str) -> None:
    if not entry.name.endswith(SUFFIX) or entry.name == SUFFIX:
        return  # not a definition file (editor backups, notes): left alone
    if not entry.is_file():
        raise _unreadable(entry, "a dangling symlink" if _dangling(entry) else "not a regular file")
    found[prefix + entry.name[: -len(SUFFIX)]] = Path(entry.path)


def _catalog_path(root: str, name: str) -> str:
    return root.rstrip("/") + "/" + name


def _check_definition(data: bytes, file: Path, path: str, doing: str) -> None:
    """Every `<name>.json` is the definition of table or view `<name>` (dot-names too, so
    `.eslintrc.json` is `.eslintrc`): one that is not a definition stops the sync before
    anything changes, with a line naming the file and why (InputError)."""
    from trinityfs.fs import content

    try:
        content.parse(data)
    except content.ContentError as exc:
        what = "sync would delete it as" if doing == "delete" else "read as"
        raise InputError(
            f"{file}: {what} the definition of table or view {path} (every <name>.json "
            f"in a namespace folder is one, dot-names too), but it is not one: {exc}; "
            "nothing changed (move the file out of the folder)"
        ) from None


def _dangling(entry: os.DirEntry[str]) -> bool:
    return entry.is_symlink() and not os.path.exists(entry.path)


def _unreadable(entry: os.DirEntry[str], what: str) -> OSError:
    return OSError(
        errno.EINVAL,
        f"{what}: sync cannot tell whether this object should exist; nothing changed",
        entry.path,
    )


def _same(local: bytes, remote: bytes, path: str) -> bool:
    """Whether writing `local` over `remote` would change nothing (ids kept when the local
    file has none; a local file that is not a definition raises, naming the file)."""
    from trinityfs.fs import content

    mine, theirs = content.parse(local, path), content.parse(remote)
    if mine.kind is None or mine.kind != theirs.kind or theirs.kind is None:
        return False
    msg = content.to_message(mine.kind, mine.definition, path)
    current = content.to_message(theirs.kind, theirs.definition)
    if not msg.id:
        msg.id = current.id
    return msg == current


def cmd_sync(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.fs.paths import strip_protocol

    up = args.dest.startswith(PROTOCOL)
    if up == args.source.startswith(PROTOCOL):
        raise UsageError(
            f"sync needs one side written {PROTOCOL}<namespace> (the catalog) and one local "
            f"folder, e.g. 'trinityfs sync {PROTOCOL}sales ./sales'"
        )
    catalog, local = (args.dest, args.source) if up else (args.source, args.dest)
    root = strip_protocol(catalog)
    folder = Path(local)
    depth = 2 if root == "/" else 1
    fs = ctx.fs
    if up and not folder.is_dir():
        raise NotADirectoryError(f"{folder}: no such folder")
    remote = _catalog_objects(fs, root) if fs.exists(root) or up is False else {}
    files = _local_files(folder, depth)
    plan = Plan()
    if up:
        version = _sync_up(ctx, root, remote, files, plan, args)
    else:
        version = None
        _sync_down(fs, root, folder, remote, files, plan, args)
    what = f"sync {'to ' + PROTOCOL + root.lstrip('/') if up else 'to ' + str(folder)}"
    data = {"dry_run": args.dry_run, "direction": "up" if up else "down", **plan.to_dict()}
    if up:
        data["version"] = version
    lines = plan.lines(args.dry_run)
    if args.dry_run:
        lines.append(f"{what}: dry run, nothing changed")
    elif up:
        lines.append(f"{what}: version {version}" if version is not None else f"{what}: no change")
    else:
        lines.append(f"{what}: done")
    ctx.out.emit(data, lines)
    return 0


def _sync_down(
    fs: TrinityFileSystem,
    root: str,
    folder: Path,
    remote: dict[str, str],
    files: dict[str, Path],
    plan: Plan,
    args: argparse.Namespace,
) -> None:
    doomed = sorted(n for n in files if n not in remote) if args.delete else []
    for name in doomed:  # checked before anything is written
        data = read_definition_file(str(files[name]))
        _check_definition(data, files[name], _catalog_path(root, name), "delete")
    for name, path in sorted(remote.items()):
        data = fs.cat_file(path)
        target = folder / (name + SUFFIX)
        if name in files:
            if target.read_bytes() == data:
                plan.unchanged += 1
                continue
            plan.updated.append(name)
        else:
            plan.created.append(name)
        if not args.dry_run:
            _write_local(target, data)
    for name in doomed:
        plan.deleted.append(name)
        if not args.dry_run:
            files[name].unlink()


def _sync_up(
    ctx: Context,
    root: str,
    remote: dict[str, str],
    files: dict[str, Path],
    plan: Plan,
    args: argparse.Namespace,
) -> int | None:
    fs = ctx.fs
    writes: list[tuple[str, bytes]] = []
    for name, path in sorted(files.items()):
        data = read_definition_file(str(path))
        _check_definition(data, path, _catalog_path(root, name), "sync")
        if name in remote:
            if _same(data, fs.cat_file(remote[name]), str(path)):
                plan.unchanged += 1
                continue
            plan.updated.append(name)
        else:
            plan.created.append(name)
        writes.append((_catalog_path(root, name), data))
    drops = []
    if args.delete:
        drops = [path for name, path in sorted(remote.items()) if name not in files]
        plan.deleted += [name for name in sorted(remote) if name not in files]
    if args.dry_run or not (writes or drops):
        return None
    with fs.transaction as tx:
        for path, data in writes:
            namespace = path.split("/")[1]
            fs.makedirs("/" + namespace, exist_ok=True)
            fs.write_definition(path, data)
        for path in drops:
            fs.rm_file(path)
    return tx.version
