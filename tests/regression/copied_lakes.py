"""A lakehouse copied without its mtimes (`cp -r`, `aws s3 sync`): every file gets the
time it was copied. Shared by the tests of readers, fsck and expiration on such copies."""

from __future__ import annotations

import os
import shutil
import time

from trinityfs import Lakehouse
from trinityfs.format.paths import OLDEST_VERSION


def expired_halfway(src: str) -> str:
    """A lakehouse at `src` with versions 0..7 whose expiration wrote the oldest marker
    (5) and crashed before deleting the roots below it; -> `src`."""
    lake = Lakehouse.create(src, storage_options={"fsync": False})
    for i in range(7):
        lake.create_namespace(f"n{i}")
    time.sleep(0.01)
    with open(os.path.join(src, OLDEST_VERSION), "w") as f:
        f.write("5")
    return src


def copy_without_mtimes(src: str, dst: str, marker_first_by: float) -> None:
    """Copy `src` to `dst` as if two hours after the commits, the oldest marker copied
    `marker_first_by` seconds before everything else."""
    shutil.copytree(src, dst, copy_function=shutil.copy)
    later = time.time() + 7200
    for folder, _dirs, files in os.walk(dst):
        for name in files:
            os.utime(os.path.join(folder, name), (later, later))
    marker = os.path.join(dst, OLDEST_VERSION)
    os.utime(marker, (later - marker_first_by, later - marker_first_by))
