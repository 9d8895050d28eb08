"""$TRINITYFS_VERSION was silently ignored by the CLI and the mount: `trinityfs ls` and a
mount showed the latest version although the environment pinned an older one (the Spark
source and the PyIceberg catalog honour it; the REST server refuses it). The CLI now
refuses the pin in one line naming the variable (it chooses versions per path and per
--version); the mount takes it as its --version."""

from __future__ import annotations

from regression_cli import run, sample

from trinityfs import Lakehouse
from trinityfs.fuse.mount import MountConfig, open_lakehouse


def test_cli_refuses_a_version_pinned_by_the_environment(tmp_path, monkeypatch):
    root = str(tmp_path / "lake")
    sample(root)
    monkeypatch.setenv("TRINITYFS_VERSION", "1")
    result = run(root, "ls", "/sales")
    assert result.status == 1
    assert "$TRINITYFS_VERSION pins catalog version '1'" in result.err
    assert len(result.err.strip().splitlines()) == 1 and "orders" not in result.out
    monkeypatch.delenv("TRINITYFS_VERSION")
    assert run(root, "ls", "/sales").status == 0


def test_mount_takes_the_pinned_version(tmp_path, monkeypatch):
    root = str(tmp_path / "lake")
    sample(root)
    first = Lakehouse.open(root).resolve("1").version
    latest = Lakehouse.open(root).resolve("latest").version
    assert first < latest
    cfg = MountConfig(root=root, mountpoint=str(tmp_path / "mnt"))
    assert open_lakehouse(cfg)[1] is None
    monkeypatch.setenv("TRINITYFS_VERSION", "1")
    assert open_lakehouse(cfg)[1] == first
    cfg.version = latest  # the command line wins over the environment
    assert open_lakehouse(cfg)[1] == latest
