"""fsck called a definition file or an export's root that is there but is a symbolic
link (at the file, or a directory on its path) "missing": the listing skips links, and
fsck took "not listed" for "not there". A user told to restore a file that is plainly
there, as a link, gets no hint of the repair. Now fsck asks the store about each file it
did not list and names the link (readers refuse it: SymlinkInRootError)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from trinityfs import Lakehouse


def _lake(tmp_path: Path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t1", {"properties": {"k": "v"}})
    return lake


def test_a_symlinked_definition_is_named_a_link_not_missing(tmp_path) -> None:
    lake = _lake(tmp_path)
    found = [Path(d) / f for d, _s, fs in os.walk(tmp_path / "lake") for f in fs]
    definition = next(p for p in found if "table-ns-t1-" in p.name)
    shutil.copy(definition, tmp_path / "copy.binpb")
    definition.unlink()
    os.symlink(tmp_path / "copy.binpb", definition)
    report = Lakehouse.open(lake.url).fsck()
    [problem] = report.errors
    assert definition.name in problem.location
    assert "symbolic link" in problem.message and "missing" not in problem.message


def test_an_export_under_a_symlinked_directory_is_named_a_link_not_missing(tmp_path) -> None:
    lake = _lake(tmp_path)
    lake.export("full", mode="full")
    exports = tmp_path / "lake" / "_exports"
    exports.rename(tmp_path / "moved")
    os.symlink(tmp_path / "moved", exports)
    report = Lakehouse.open(lake.url).fsck()
    problems = [p for p in report.errors if p.kind == "export"]
    assert len(problems) == 1, report.errors
    assert "symbolic link" in problems[0].message and "missing" not in problems[0].message
