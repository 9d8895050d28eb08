"""A tour of trinityfs on a lakehouse in a local folder: the `trinityfs` command, versions
as `/v/<n>` paths, pandas through `trinity://`, PyIceberg tables, and the FUSE mount.

Run: `trinityfs-demo [FOLDER]` (default ./demo-lake). The folder must be new, empty, or
an earlier demo's: the demo records every file it makes in `.trinityfs-demo.json` and
never deletes anything else. Parts whose optional packages (pandas, PyIceberg) or system
library (libfuse) are missing are skipped with a sentence saying what to install.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

MARKER = ".trinityfs-demo.json"
INDENT = "    "

ORDERS = {"table_format": "ICEBERG", "table_type": "MANAGED", "properties": {"owner": "sales"}}
DEFINITIONS = {
    "orders": {"kind": "table", "definition": ORDERS},
    "customers": {"kind": "table", "definition": {"table_format": "ICEBERG"}},
    "items": {"kind": "table", "definition": {"table_format": "ICEBERG"}},
    "big_orders": {
        "kind": "view",
        "definition": {"properties": {"sql": "select * from orders where amount > 100"}},
    },
}


class FolderNotOurs(Exception):
    """The demo's folder holds something the demo did not create."""


# -- the folder ---------------------------------------------------------------------------


def _files_below(directory: Path) -> list[str]:
    """Every file, symlink and directory below `directory`, relative, deepest first."""
    found = []
    for top, dirs, files in os.walk(directory, topdown=False):
        for name in files + dirs:
            found.append(os.path.relpath(os.path.join(top, name), directory))
    return found


def claim_folder(directory: Path) -> None:
    """Make `directory` the demo's own and empty: create it, or empty an earlier demo's.

    Only what an earlier run recorded in its marker file is deleted, and only when nothing
    else is there: a folder holding anything the demo did not create is refused."""
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise FolderNotOurs(f"{directory} exists and is not a directory")
    if not directory.exists():
        directory.mkdir(parents=True)
        return
    if not any(directory.iterdir()):
        return
    marker = directory / MARKER
    try:
        recorded = set(json.loads(marker.read_text())["files"])
    except (OSError, ValueError, KeyError, TypeError):
        raise FolderNotOurs(
            f"{directory} is not empty and is not an earlier trinityfs-demo folder; "
            "give a new or empty directory"
        ) from None
    present = _files_below(directory)
    foreign = [p for p in present if p != MARKER and p not in recorded]
    if foreign:
        raise FolderNotOurs(
            f"{directory} holds {foreign[-1]!r}, which the demo did not create; "
            "nothing deleted (give a new or empty directory)"
        )
    for relative in present:  # deepest first
        path = directory / relative
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        elif relative != MARKER:
            path.unlink()
    marker.unlink()


def _record(directory: Path) -> None:
    """Write the marker listing everything in the folder (all of it the demo's own)."""
    files = [p for p in _files_below(directory) if p != MARKER]
    text = json.dumps({"created_by": "trinityfs-demo", "files": sorted(files)}, indent=1)
    (directory / MARKER).write_text(text + "\n")


# -- printing -----------------------------------------------------------------------------


class Tour:
    """Runs the steps and prints them: shell commands with their output, Python lines."""

    def __init__(self, root: Path, shown_root: str):
        self.root = root
        self.shown_root = shown_root
        self.step = 0

    def section(self, title: str, text: str = "") -> None:
        self.step += 1
        print(f"\n{self.step}. {title}")
        if text:
            print(f"{INDENT}{text}")

    def shell(self, *args: str, stdin: str | None = None, show: str | None = None) -> str:
        """Run `trinityfs ARGS` in this process; print the command line and its output."""
        from trinityfs.cli import main

        out, err = io.StringIO(), io.StringIO()
        line = show or " ".join(_quote(a) for a in args)
        print(f"{INDENT}$ trinityfs {line}")
        status = main(["--root", str(self.root), *args], stdout=out, stderr=err)
        for text in (out.getvalue(), err.getvalue()):
            for row in text.rstrip("\n").splitlines():
                print(f"{INDENT}  {row}")
        if status != 0:
            raise RuntimeError(f"trinityfs {line} failed: {err.getvalue().strip()}")
        return out.getvalue()

    def python(self, *lines: str) -> None:
        for line in lines:
            print(f"{INDENT}>>> {line}")

    def output(self, text: str) -> None:
        for row in text.rstrip("\n").splitlines():
            print(f"{INDENT}  {row}")

    def skip(self, sentence: str) -> None:
        print(f"{INDENT}(skipped: {sentence})")


def _quote(arg: str) -> str:
    return arg if arg and all(c.isalnum() or c in "/-_.=:" for c in arg) else repr(arg)


# -- the tour -----------------------------------------------------------------------------


def run(directory: Path, shown: str | None = None) -> None:
    claim_folder(directory)
    try:
        tour = Tour(directory.resolve(), shown or str(directory))
        print(f"trinityfs demo: a lakehouse in {tour.shown_root}")
        shell_tour(tour)
        versions_tour(tour)
        pandas_tour(tour)
        iceberg_tour(tour)
        mount_tour(tour)
        next_steps(tour)
    finally:
        _record(directory)


def shell_tour(tour: Tour) -> None:
    tour.section(
        "The catalog from the shell",
        f"(every command below runs as `trinityfs --root {tour.shown_root} ...`; "
        "each change is one commit, a new version)",
    )
    tour.shell("init")
    tour.shell("mkdir", "/sales", "--property", "owner=analytics")
    with tempfile.TemporaryDirectory(prefix="trinityfs-demo-") as tmp:
        defs = Path(tmp) / "sales-defs"
        defs.mkdir()
        for name, value in DEFINITIONS.items():
            (defs / f"{name}.json").write_text(json.dumps(value, indent=2))
        print(f"{INDENT}(./sales-defs holds {len(DEFINITIONS)} definitions as <name>.json)")
        tour.shell("sync", str(defs), "trinity://sales", show="sync ./sales-defs trinity://sales")
    tour.shell("ls", "-l", "/sales")
    tour.shell("cat", "/sales/big_orders")
    tour.shell("mkdir", "/staging")
    tour.shell("mv", "/sales/items", "/staging/items_old")
    tour.shell("rm", "/sales/big_orders")
    tour.shell("props", "/sales", "tier=gold")
    tour.shell("log")


def versions_tour(tour: Tour) -> None:
    tour.section(
        "Every version stays readable: /v/<n>",
        "(old versions are paths: /v/<number>, /v/<ISO time>, /v/<export name>)",
    )
    tour.shell("ls", "/v")
    tour.shell("ls", "/v/2/sales")
    tour.shell("diff", "2", "latest")
    tour.shell("rollback", "--dry-run", "2")


def pandas_tour(tour: Tour) -> None:
    tour.section("pandas through trinity:// URLs")
    try:
        import pandas as pd
    except ImportError:
        tour.skip("pandas is not installed: pip install pandas, or the demo extra")
        return
    options = {"root": str(tour.root)}
    tour.python(
        "import pandas as pd",
        f'opts = {{"root": "{tour.shown_root}"}}',
        'orders = pd.read_json("trinity://sales/orders", typ="series", storage_options=opts)',
        'orders["definition"]["table_format"], orders["definition"]["properties"]',
    )
    orders = pd.read_json("trinity://sales/orders", typ="series", storage_options=options)
    definition = orders["definition"]
    tour.output(f"('{definition['table_format']}', {json.dumps(definition['properties'])})")
    tour.python(
        'old = pd.read_json("trinity://v/2/sales/orders", typ="series", storage_options=opts)',
        'old["definition"]["id"] == orders["definition"]["id"]   # the same table, version 2',
    )
    old = pd.read_json("trinity://v/2/sales/orders", typ="series", storage_options=options)
    tour.output(str(old["definition"]["id"] == definition["id"]))
    import fsspec

    fs = fsspec.filesystem("trinity", root=str(tour.root), skip_instance_cache=True)
    tour.python(
        "import fsspec",
        'fs = fsspec.filesystem("trinity", root=opts["root"])',
        'pd.DataFrame(fs.ls("/v/2/sales"))[["name", "kind", "version"]]',
    )
    frame = pd.DataFrame(fs.ls("/v/2/sales"))[["name", "kind", "version"]]
    tour.output(frame.to_string(index=False))


def iceberg_tour(tour: Tour) -> None:
    tour.section("Iceberg tables with PyIceberg (data files next to the catalog)")
    try:
        import pyarrow as pa
        from pyiceberg.catalog import load_catalog
    except ImportError:
        tour.skip(
            "PyIceberg is not installed: pip install 'trinityfs[iceberg]' (or the demo extra)"
        )
        return
    tour.python(
        "import pyarrow as pa",
        "from pyiceberg.catalog import load_catalog",
        'catalog = load_catalog("lake", **{"py-catalog-impl": '
        f'"trinityfs.iceberg.TrinityCatalog", "root": "{tour.shown_root}"}})',
        'data = pa.table({"order_id": [1, 2, 3], "amount": [120.0, 35.5, 410.0]})',
        'payments = catalog.create_table("sales.payments", schema=data.schema)',
        "payments.append(data)                     # one catalog commit",
        "payments.scan().to_pandas()",
    )
    catalog = load_catalog(
        "lake", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": str(tour.root)}
    )
    data = pa.table({"order_id": [1, 2, 3], "amount": [120.0, 35.5, 410.0]})
    payments = catalog.create_table("sales.payments", schema=data.schema)
    payments.append(data)
    scanned = payments.scan().to_arrow()
    try:
        tour.output(scanned.to_pandas().to_string(index=False))
    except ImportError:  # pyarrow without pandas
        tour.output(json.dumps(scanned.to_pylist()))
    tour.shell("log", "-n", "2")
    tour.shell("ls", "-l", "/sales")


def _fuse_available() -> str | None:
    """None when a mount can be tried, else why not."""
    if not (ctypes.util.find_library("fuse3") or ctypes.util.find_library("fuse")):
        return "libfuse is not installed (apt-get install fuse3)"
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing (no FUSE in this machine or container)"
    if not (shutil.which("fusermount3") or shutil.which("fusermount")):
        return "fusermount is not installed (apt-get install fuse3)"
    try:
        import mfusepy  # noqa: F401
    except ImportError:
        return "mfusepy is not installed: pip install 'trinityfs[fuse]' (or the demo extra)"
    except OSError as exc:
        return f"libfuse cannot be loaded ({exc})"
    return None


@contextlib.contextmanager
def _mounted(root: Path) -> Iterator[Path]:
    mountpoint = Path(tempfile.mkdtemp(prefix="trinityfs-demo-mnt-"))
    command = [sys.executable, "-m", "trinityfs.cli", "mount", str(root), str(mountpoint)]
    proc = subprocess.run(
        [*command, "--daemon", "--read-only"], capture_output=True, text=True, timeout=60
    )
    try:
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines()
            raise OSError(lines[-1] if lines else f"mount exited with {proc.returncode}")
        yield mountpoint
    finally:
        if os.path.ismount(mountpoint):
            tool = shutil.which("fusermount3") or shutil.which("fusermount") or "umount"
            subprocess.run([tool, "-u", str(mountpoint)], capture_output=True, timeout=30)
            for _ in range(50):
                if not os.path.ismount(mountpoint):
                    break
                time.sleep(0.1)
        with contextlib.suppress(OSError):
            mountpoint.rmdir()


def mount_tour(tour: Tour) -> None:
    tour.section("The lakehouse as a filesystem (FUSE mount)")
    why_not = _fuse_available()
    if why_not is not None:
        tour.skip(why_not)
        return
    try:
        with _mounted(tour.root) as mnt:
            print(f"{INDENT}(a temporary mount point, shown as /mnt/lake)")
            print(f"{INDENT}$ trinityfs mount {tour.shown_root} /mnt/lake --daemon --read-only")
            print(f"{INDENT}$ ls /mnt/lake/sales")
            tour.output("  ".join(sorted(os.listdir(mnt / "sales"))))
            print(f"{INDENT}$ ls /mnt/lake/v/2/sales")
            tour.output("  ".join(sorted(os.listdir(mnt / "v" / "2" / "sales"))))
            print(f"{INDENT}$ grep -l ICEBERG /mnt/lake/sales/*")
            hits = [
                p.name for p in sorted((mnt / "sales").iterdir()) if b"ICEBERG" in p.read_bytes()
            ]
            tour.output("\n".join(f"/mnt/lake/sales/{name}" for name in hits))
            print(f"{INDENT}$ fusermount -u /mnt/lake")
    except OSError as exc:
        tour.skip(f"the mount did not work here ({exc})")


def next_steps(tour: Tour) -> None:
    root = tour.shown_root
    print(
        f"""
What to try next (the lakehouse stays in {root}):
    export TRINITYFS_ROOT={root}
    trinityfs ls /sales ; trinityfs cat /v/2/sales/orders ; trinityfs log
    trinityfs edit /sales/orders                 # your $EDITOR; saving commits
    trinityfs get /sales/orders orders.json      # and back: trinityfs put orders.json /sales/orders
    trinityfs rollback --dry-run 2 ; trinityfs rollback 2
    trinityfs mount {root} /mnt/lake           # with libfuse: ls, cat, grep, vi on the catalog
    trinityfs --help                             # every command; the README has the rest
Run `trinityfs-demo {root}` again to start over (it only deletes what it made)."""
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="trinityfs-demo", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("directory", nargs="?", default="demo-lake")
    args = parser.parse_args(argv)
    from trinityfs.errors import TrinityError

    try:
        run(Path(args.directory), args.directory)
    except (TrinityError, FolderNotOurs, OSError, RuntimeError) as exc:
        print(f"trinityfs-demo: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("trinityfs-demo: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
