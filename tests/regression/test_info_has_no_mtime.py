"""Issue 11 item 8: `info()` had no `mtime`/`created` (UPath's `stat().st_mtime` was 0,
pyarrow's mtime None) and `ls -l` showed the version read, not when the object last
changed; UPath warned "not explicitly implemented" in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

NO_FSYNC = {"fsync": False}


def _lake(tmp_path) -> tuple[str, Lakehouse]:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, storage_options=NO_FSYNC)
    lake.create_namespace("ns")  # version 1
    lake.create_table("ns", "t", {"table_format": "ICEBERG"})  # version 2
    time.sleep(0.01)
    lake.replace_table("ns", "t", {"table_format": "DELTA"})  # version 3
    for i in range(5):  # unrelated commits after it
        lake.create_table("ns", f"other{i}", {})
    return root, lake


def _at(lake: Lakehouse, version: int) -> datetime:
    from datetime import UTC

    return datetime.fromtimestamp(lake.version_info(version).created_at_millis / 1000, UTC)


def test_info_has_mtime_and_created(tmp_path) -> None:
    root, lake = _lake(tmp_path)
    fs = TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)
    info = fs.info("/ns/t")
    assert info["mtime"] == _at(lake, 3)  # the replace, not the latest version (8)
    assert info["created"] == _at(lake, 2)
    ns = fs.info("/ns")
    assert ns["mtime"] == ns["created"] == _at(lake, 1)
    old = fs.info("/v/2/ns/t")
    assert old["mtime"] == old["created"] == _at(lake, 2)


def test_upath_stat_mtime_without_warning(tmp_path) -> None:
    pytest.importorskip("upath")
    root, lake = _lake(tmp_path)
    script = (
        "import json, sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import trinityfs.fs\n"
        "from upath import UPath\n"
        "p = UPath('trinity://ns/t', root=sys.argv[1])\n"
        "print(json.dumps([type(p).__name__, p.stat().st_mtime, p.exists(),"
        " sorted(c.name for c in p.parent.iterdir())[:2], p.read_text()[:1]]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, root],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert result.returncode == 0, result.stderr
    name, mtime, exists, children, first = json.loads(result.stdout)
    assert name == "TrinityUPath"
    assert mtime == pytest.approx(_at(lake, 3).timestamp())
    assert exists and children == ["other0", "other1"] and first == "{"
