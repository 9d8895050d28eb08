"""A commit whose definition or node write failed part-way (ENOSPC, EFBIG, EIO) left
that file, empty or cut short, at its final name.

The local backend writes a commit's new node and definition files in place under
their new unique names (`write_new_unsynced`), without a temporary file. When the
write failed, the file stayed: on a full 3 MB tmpfs, 93 failed commits of 3 writers
left 92 empty definition files and one cut at 4096 of 8468 bytes. No root references
them (the commit failed), so no reader sees them, but they are half-written files
that only an expiration removes, each an inode more on a full disk. Now a failed
write removes the file it created.

The failure is real: the writing process runs with RLIMIT_FSIZE below the size of the
definition, so the kernel refuses the write with EFBIG part-way.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import trinityfs
from trinityfs import Lakehouse

CHILD = textwrap.dedent(
    """
    import resource, signal, sys
    from trinityfs import Lakehouse
    from trinityfs.errors import StorageError
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead
    lake = Lakehouse.open(sys.argv[1], storage_options={"fsync": False})
    limit = 16384
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        lake.create_table("ns", sys.argv[2], {"properties": {"big": "x" * 4 * limit}})
    except StorageError as exc:
        print("StorageError", exc)
        sys.exit(3)
    print("committed")
    """
)


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def test_a_failed_definition_write_leaves_no_file(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    lake = Lakehouse.create(str(root), storage_options={"fsync": False})
    lake.create_namespace("ns")
    before = _files(root)
    source = str(Path(trinityfs.__file__).parent.parent)  # the package under test
    env = {**os.environ, "PYTHONPATH": source}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), "bigtable"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "File too large" in done.stdout and "bigtable" in done.stdout, done.stdout
    left = {name: size for name, size in _files(root).items() if name not in before}
    assert not [name for name in left if "bigtable" in name], left
    # nothing was committed, and the next commit lands
    fresh = Lakehouse.open(str(root))
    assert fresh.list_tables("ns") == []
    fresh.create_table("ns", "after")
    assert fresh.fsck().ok
