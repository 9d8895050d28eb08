"""`sed -i` (or any save through a temporary file renamed over the target) right after the
table was changed through the API, within `latest_ttl`, lost that change: sed read the
mount's cached older definition, and the rename committed its edit of it on the latest
version without a conflict (e7548e1 covered a write in place only). Now the rename is
checked against what the renaming process read (trinityfs/fuse/served.py): EBUSY, the
API's change stays."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fuse_mount import FUSE, mounted, one_table

from trinityfs import Lakehouse

pytestmark = FUSE

REPLACE = (
    "import os, sys, tempfile\n"
    "path = sys.argv[1]\n"
    'data = open(path, \'rb\').read().replace(b\'"a": "1"\', b\'"a": "2"\')\n'
    "fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))\n"
    "os.write(fd, data)\n"
    "os.close(fd)\n"
    "os.replace(tmp, path)\n"
)


@pytest.mark.parametrize(
    "tool",
    [
        ["sed", "-i", 's/"a": "1"/"a": "2"/'],
        [sys.executable, "-c", REPLACE],
    ],
    ids=["sed -i", "mkstemp + os.replace"],
)
def test_save_through_a_renamed_temporary_file_after_an_api_change(tmp_path, tool):
    root = one_table(str(tmp_path / "lake"), {"table_format": "ICEBERG", "properties": {"a": "1"}})
    with mounted(root, tmp_path / "mnt", "-o", "latest_ttl=30") as mount:
        path = mount.path / "ns" / "t"
        path.read_bytes()  # the mount shows (and caches) this version
        Lakehouse.open(root).replace_table(
            "ns", "t", {"table_format": "HUDI", "properties": {"a": "1"}}
        )
        done = subprocess.run([*tool, str(path)], capture_output=True, text=True)
        assert done.returncode != 0 and "busy" in done.stderr, done
        table = Lakehouse.open(root).describe_table("ns", "t")
        assert (table.table_format, table.properties) == ("HUDI", {"a": "1"})
        names = [p.name for p in path.parent.iterdir()]  # (python leaves its temporary)
        assert names.count("t") == 1 and not any(n.startswith("sed") for n in names)
