"""An `_oldest_version.txt` that says a version above the latest (a bit flip, a marker
restored from a later backup) is a lie that readers ignore and fsck reports, but only
until commits reach that version: from then on it names an existing root and counted
as the truth. Readers took every older version for expired, fsck checked from it alone
and called the lakehouse healthy, and `trinityfs expire` with a retention policy that
keeps everything (max age 7 days) deleted the roots of all older versions ("kept by the
marker"). Expiration writes the marker naming a root that exists, so a marker older than
the root it names was a lie when written: now expiration and fsck treat it as one
(error naming it and the repair; expiration rewrites it and keeps the versions its
policy keeps)."""

from __future__ import annotations

import os
import time

from trinityfs import Lakehouse
from trinityfs.format.paths import OLDEST_VERSION

WEEK_MS = 7 * 86_400_000


def _caught_up(tmp_path) -> tuple[Lakehouse, str]:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, storage_options={"fsync": False})
    for i in range(3):
        lake.create_namespace(f"n{i}")  # 1..3
    marker = os.path.join(root, OLDEST_VERSION)
    with open(marker, "w") as f:
        f.write("6")  # a lie: the latest version is 3
    past = time.time() - 60
    os.utime(marker, (past, past))  # written a minute before the roots below catch up
    for i in range(3, 6):
        lake.create_namespace(f"n{i}")  # 4..6: root 6 now exists
    return lake, root


def test_fsck_reports_the_marker_and_checks_every_version(tmp_path) -> None:
    _lake, root = _caught_up(tmp_path)
    report = Lakehouse.open(root).fsck()
    assert not report.ok
    assert [(p.kind, p.location) for p in report.errors] == [("marker", OLDEST_VERSION)]
    assert "trinityfs expire" in report.errors[0].message
    assert (report.oldest_version, report.versions_checked) == (0, 7)


def test_expiration_keeps_what_its_policy_keeps_and_repairs_the_marker(tmp_path) -> None:
    lake, root = _caught_up(tmp_path)
    report = lake.expire(max_age_millis=WEEK_MS, min_versions=1)
    assert not [f.location for f in report.removed if f.kind == "root"]
    fresh = Lakehouse.open(root)
    assert fresh.oldest_version() == 0
    assert list(fresh.at(version=2).list_namespaces()) == ["n0", "n1"]
    assert fresh.fsck().ok
