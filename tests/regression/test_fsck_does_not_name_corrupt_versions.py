"""Issue 11 item 7: `trinityfs fsck` reported a corrupt file without saying which
catalog versions it breaks ("referenced by ?" for a root)."""

from __future__ import annotations

import json
from pathlib import Path

from regression_cli import run

from trinityfs.format.paths import root_node_file
from trinityfs.fs.spec import TrinityFileSystem


def _flip_middle_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


def test_fsck_names_the_version_of_a_corrupt_root(tmp_path):
    root = tmp_path / "lake"
    assert run(str(root), "init").status == 0
    assert run(str(root), "mkdir", "/a").status == 0
    fs = TrinityFileSystem(root=str(root), skip_instance_cache=True)
    fs.write_definition("/a/t1", b'{"kind": "table"}')  # version 2
    _flip_middle_byte(root / root_node_file(2))

    result = run(str(root), "fsck")
    assert result.status != 0
    assert "fsck: errors in version 2" in result.out
    assert "referenced by ?" not in result.out
    report = run(str(root), "--json", "fsck").json()
    assert "2" in report["affected_versions"]


def test_fsck_names_every_version_reaching_a_corrupt_definition(tmp_path):
    root = tmp_path / "lake"
    assert run(str(root), "init").status == 0
    assert run(str(root), "mkdir", "/a").status == 0
    fs = TrinityFileSystem(root=str(root), skip_instance_cache=True)
    fs.write_definition("/a/t1", b'{"kind": "table"}')  # version 2
    fs.write_definition("/a/t2", b'{"kind": "table"}')  # version 3, t1 unchanged
    definitions = [p for p in root.rglob("*.binpb") if "_lakehouse_def" not in p.name]
    t1 = [p for p in definitions if "t1" in str(p)]
    assert len(t1) == 1, definitions
    _flip_middle_byte(t1[0])

    result = run(str(root), "fsck")
    assert result.status != 0
    assert "fsck: errors in versions 2, 3" in result.out, result.out
    assert json.loads(run(str(root), "--json", "fsck").out)["ok"] is False
