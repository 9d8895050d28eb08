"""`trinityfs fsck` gave no report when `_oldest_version.txt` was malformed or a symbolic
link: it opened the lakehouse like every command (Lakehouse.open, which rightly refuses
such a marker), printed that one-line error and exited 1, so the one command meant to
say what is wrong checked nothing else. Now fsck opens the lakehouse without trusting
the marker: the marker is an error naming the file, what is wrong and the repair, every
version, node and definition is still checked (other damage is reported too), exit 1,
and nothing under the root is changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from regression_cli import run, sample

MARKER = "_oldest_version.txt"


def _state(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry under `root`: its bytes (a link: its target) and mtime."""
    out: dict[str, tuple[bytes | str, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            out[str(path)] = (os.readlink(path), st.st_mtime_ns)
        elif path.is_file():
            out[str(path)] = (path.read_bytes(), st.st_mtime_ns)
        else:
            out[str(path)] = ("dir", st.st_mtime_ns)
    return out


def _damage(root: Path, how: str, tmp_path: Path) -> str:
    """Damage the oldest marker; returns a word the finding must contain."""
    marker = root / MARKER
    marker.unlink(missing_ok=True)
    if how == "garbage":
        marker.write_bytes(b"garbage\n")
        return "not a decimal version"
    if how == "empty":
        marker.write_bytes(b"")
        return "not a decimal version"
    target = tmp_path / "elsewhere.txt"
    target.write_text("0")
    marker.symlink_to(target)
    return "symbolic link"


@pytest.mark.parametrize("how", ["garbage", "empty", "symlink"])
def test_fsck_reports_a_damaged_oldest_marker_and_checks_the_rest(tmp_path, how) -> None:
    root = tmp_path / "lake"
    sample(str(root))  # versions 0..3
    what = _damage(root, how, tmp_path)
    before = _state(tmp_path)

    result = run(str(root), "fsck")
    assert result.status == 1, (result.out, result.err)
    assert "checked versions 0..3 (4 versions" in result.out, (result.out, result.err)
    finding = [line for line in result.out.splitlines() if MARKER in line]
    assert finding and what in finding[0], result.out
    assert "trinityfs expire" in finding[0]  # the repair
    assert result.out.rstrip().endswith("fsck: errors found"), result.out

    data = json.loads(run(str(root), "--json", "fsck").out)
    assert data["ok"] is False
    assert data["versions_checked"] == 4 and data["definitions_checked"] == 3
    assert [(e["kind"], e["location"]) for e in data["errors"]] == [("marker", MARKER)]
    assert _state(tmp_path) == before  # a check changes nothing


def test_fsck_reports_other_damage_beside_a_damaged_oldest_marker(tmp_path) -> None:
    root = tmp_path / "lake"
    sample(str(root))
    (root / MARKER).write_bytes(b"x1\n")
    definitions = list(root.rglob("*-table-sales-orders-*.binpb"))
    assert len(definitions) == 1
    definitions[0].unlink()
    result = run(str(root), "--json", "fsck")
    assert result.status == 1, result.err
    data = json.loads(result.out)
    kinds = {(e["kind"], e["location"]) for e in data["errors"]}
    gone = str(definitions[0].relative_to(root))
    assert ("marker", MARKER) in kinds and ("missing", gone) in kinds, data["errors"]


def test_fsck_of_no_lakehouse_stays_one_line(tmp_path) -> None:
    result = run(str(tmp_path / "none"), "fsck")
    assert result.status == 1
    assert result.out == ""
    assert result.err.strip().startswith("trinityfs: no lakehouse at"), result.err
    assert not (tmp_path / "none").exists()


def test_fsck_api_reports_a_symlinked_oldest_marker(tmp_path) -> None:
    """Lakehouse.fsck raised SymlinkInRootError for a symlinked marker (a malformed
    one it already reported)."""
    from trinityfs.catalog import Lakehouse
    from trinityfs.storage import Storage

    root = tmp_path / "lake"
    sample(str(root))
    _damage(root, "symlink", tmp_path)
    report = Lakehouse(Storage(str(root))).fsck()
    assert [(p.kind, p.location) for p in report.errors] == [("marker", MARKER)]
    assert report.versions_checked == 4
