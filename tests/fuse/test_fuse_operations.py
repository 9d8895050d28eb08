"""The FUSE operations called directly (no kernel, no libfuse): the paths tools rarely take,
option parsing, temporary-file names. Runs everywhere (not marked fuse)."""

from __future__ import annotations

import argparse
import errno
import os
import stat

import pytest

from trinityfs import Lakehouse
from trinityfs.fuse.mount import (
    MountError,
    build_parser,
    child_argv,
    config_from_args,
)
from trinityfs.fuse.operations import TrinityOperations
from trinityfs.fuse.scratch import DEFAULT_PATTERNS, is_scratch_name, parse_patterns

W = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


@pytest.fixture
def ops(tmp_path) -> TrinityOperations:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns", {"owner": "me"})
    lake.create_table("ns", "t", {"table_format": "ICEBERG"})
    return TrinityOperations(lake, latest_ttl=0, prefetch_threads=0)


def write(ops: TrinityOperations, path: str, data: bytes, flags: int = W) -> None:
    try:
        fh = ops.create(path, 0o644, flags)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
        fh = ops.open(path, flags)
    ops.write(path, data, 0, fh)
    try:
        ops.flush(path, fh)
    finally:
        ops.release(path, fh)


def read(ops: TrinityOperations, path: str) -> bytes:
    fh = ops.open(path, os.O_RDONLY)
    try:
        return ops.read(path, 1 << 20, 0, fh)
    finally:
        ops.release(path, fh)


def errno_of(fn, *args) -> int:
    with pytest.raises(OSError) as info:
        fn(*args)
    return info.value.errno


def test_scratch_names() -> None:
    for name in (".t.swp", ".t.swx", "t~", "#t#", "sedAb12Cd", "4913", "5036", "tmpab_12xyz"):
        assert is_scratch_name(name), name
    for name in ("orders", "sed", "sedimentary_rocks", "4914", "2024", "tmp", "t.json"):
        assert not is_scratch_name(name), name
    assert parse_patterns("+*.bak")[-1] == "*.bak"
    assert parse_patterns("*.x:*.y") == ("*.x", "*.y")
    assert is_scratch_name("a.bak", parse_patterns("+*.bak"))
    assert not is_scratch_name(".hidden", ())


def test_options_from_the_command_line_and_fstab() -> None:
    args = build_parser().parse_args(
        [
            "s3://b/lake",
            "/mnt",
            "-o",
            "ro,allow_other,default_permissions,noauto,_netdev,x-systemd.automount,python=/x,"
            "version=3",
            "-o",
            "storage.endpoint_url=http://h:9000,storage.anon=true,uid=1000,log=/tmp/l",
        ]
    )
    cfg = config_from_args(args)
    assert cfg.read_only and cfg.version == 3 and cfg.foreground
    assert cfg.storage_options == {"endpoint_url": "http://h:9000", "anon": True}
    assert cfg.fuse_options == {"allow_other": True, "default_permissions": True, "uid": "1000"}
    assert cfg.log_file == "/tmp/l"
    again = config_from_args(build_parser().parse_args(child_argv(cfg)[3:]))
    assert again.storage_options == cfg.storage_options
    assert again.fuse_options == cfg.fuse_options and again.version == 3
    for bad in (["--at", "soon"], ["-o", "version=x"], ["--version", "1", "-o", "at=2026-01-01"]):
        with pytest.raises(MountError):
            config_from_args(build_parser().parse_args(["r", "/m", *bad]))
    plain = config_from_args(build_parser().parse_args(["r", "/m"]))
    assert plain.scratch_patterns == DEFAULT_PATTERNS


def test_verify_mode_from_the_command_line_fstab_and_the_trinityfs_command(
    tmp_path, monkeypatch
) -> None:
    """The mount took the verify mode only from $TRINITYFS_VERIFY: --verify was a usage
    error and -o verify=tree went to libfuse."""
    from trinityfs.cli.app import build_parser as cli_parser
    from trinityfs.cli.app import parse
    from trinityfs.fuse import mount

    monkeypatch.delenv("TRINITYFS_VERIFY", raising=False)
    for argv in (["--verify", "tree"], ["-o", "verify=tree"], ["-o", "ro,verify=TREE"]):
        cfg = config_from_args(build_parser().parse_args(["r", "/m", *argv]))
        assert cfg.verify == "tree" and "verify" not in cfg.fuse_options, argv
        again = config_from_args(build_parser().parse_args(child_argv(cfg)[3:]))  # --daemon
        assert again.verify == "tree"
    assert config_from_args(build_parser().parse_args(["r", "/m"])).verify is None
    with pytest.raises(MountError, match=r"verify=all: .*'reads'.*'tree'"):
        config_from_args(build_parser().parse_args(["r", "/m", "-o", "verify=all"]))

    root = str(tmp_path / "lake")
    Lakehouse.create(root)
    cfg = config_from_args(build_parser().parse_args([root, "/m", "--verify", "tree"]))
    assert mount.open_lakehouse(cfg)[0].verify == "tree"
    monkeypatch.setenv("TRINITYFS_VERIFY", "tree")  # still followed without an option
    assert (
        mount.open_lakehouse(config_from_args(build_parser().parse_args([root, "/m"])))[0].verify
        == "tree"
    )
    cfg = config_from_args(build_parser().parse_args([root, "/m", "-o", "verify=reads"]))
    assert mount.open_lakehouse(cfg)[0].verify == "reads"  # the option wins

    # `trinityfs --verify tree mount ...` (the global option before the command) and the
    # mount's own --verify, which wins
    seen: list[str | None] = []
    monkeypatch.setattr(mount, "mount_foreground", lambda cfg: seen.append(cfg.verify) or 0)
    monkeypatch.setattr(mount, "_setup_logging", lambda cfg: None)
    for argv, expected in (
        (["--verify", "tree", "mount", root, "/m"], "tree"),
        (["--verify", "tree", "mount", root, "/m", "--verify", "reads"], "reads"),
        (["mount", root, "/m"], None),
    ):
        args = parse(cli_parser(), argv)
        assert args.func(None, args) == 0
        assert seen.pop() == expected, argv


def test_parser_is_a_subcommand() -> None:
    from trinityfs.fuse.mount import add_mount_parser, cli_mount

    parser = argparse.ArgumentParser(prog="trinityfs")
    add_mount_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["mount", "./lake", "/mnt", "--daemon", "-o", "ro"])
    assert args.func is cli_mount and args.daemon and args.mount_root == "./lake"


def test_getattr_readdir_and_content(ops: TrinityOperations) -> None:
    assert stat.S_ISDIR(ops.getattr("/")["st_mode"])
    names = [e[0] for e in ops.readdir("/ns", 0)]
    assert names == [".", "..", "t"]
    attrs = ops.getattr("/ns/t")
    data = read(ops, "/ns/t")
    assert attrs["st_size"] == len(data) and b'"ICEBERG"' in data
    assert errno_of(ops.getattr, "/ns/missing") == errno.ENOENT
    assert errno_of(ops.getattr, "/ns/t/deeper") == errno.ENOENT
    assert errno_of(ops.getattr, "/v/99") == errno.ENOENT
    assert errno_of(ops.getattr, "/ns/" + "x" * 400) == errno.ENOENT
    assert [e[0] for e in ops.readdir("/v", 0)] == [".", "..", "0", "1", "2", "latest"]


def test_vim_backup_rename_then_write_is_one_commit(ops: TrinityOperations) -> None:
    lake = ops.lake
    before = lake.latest_version()
    ops.rename("/ns/t", "/ns/t~")  # hidden here, still in the catalog
    assert errno_of(ops.getattr, "/ns/t") == errno.ENOENT
    assert "t" not in [e[0] for e in ops.readdir("/ns", 0)]
    assert lake.latest_version() == before
    write(ops, "/ns/t", b'{"kind": "table", "definition": {"table_format": "DELTA"}}')
    assert lake.latest_version() == before + 1
    ops.unlink("/ns/t~")  # the backup of a saved file: nothing to commit
    assert lake.latest_version() == before + 1
    assert lake.describe_table("ns", "t").table_format == "DELTA"


def test_rename_to_a_backup_then_deleting_it_drops_the_object(ops: TrinityOperations) -> None:
    lake = ops.lake
    before = lake.latest_version()
    ops.rename("/ns/t", "/ns/t.tmp")
    assert lake.latest_version() == before
    ops.rename("/ns/t.tmp", "/ns/t.tmp~")  # temp to temp: still in memory
    ops.unlink("/ns/t.tmp~")
    assert lake.latest_version() == before + 1
    assert lake.snapshot().object_kind("ns", "t") is None


def test_rename_back_from_a_backup_commits_nothing(ops: TrinityOperations) -> None:
    lake = ops.lake
    before = lake.latest_version()
    ops.rename("/ns/t", "/ns/t~")
    ops.rename("/ns/t~", "/ns/t")
    assert lake.latest_version() == before
    assert ops.getattr("/ns/t")["st_size"] > 0


def test_temporary_files_hold_anything_and_commit_on_rename(ops: TrinityOperations) -> None:
    lake = ops.lake
    before = lake.latest_version()
    write(ops, "/ns/.x.swp", b"\x00\x01binary")
    assert read(ops, "/ns/.x.swp") == b"\x00\x01binary"
    ops.truncate("/ns/.x.swp", 2)
    assert ops.getattr("/ns/.x.swp")["st_size"] == 2
    ops.chmod("/ns/.x.swp", 0o600)
    assert errno_of(ops.rename, "/ns/.x.swp", "/ns/x") == errno.EINVAL
    assert lake.latest_version() == before
    write(ops, "/ns/.x.swp", b'{"kind": "view"}')
    ops.rename("/ns/.x.swp", "/ns/t")  # over an existing table: now a view, one commit
    assert lake.latest_version() == before + 1
    assert lake.snapshot().object_kind("ns", "t") == "view"
    assert errno_of(ops.rmdir, "/ns") == errno.ENOTEMPTY
    write(ops, "/ns/.y.swp", b"")
    ops.unlink("/ns/t")
    assert errno_of(ops.rmdir, "/ns") == errno.ENOTEMPTY  # the temporary file is there
    ops.unlink("/ns/.y.swp")
    ops.rmdir("/ns")
    assert not lake.snapshot().namespace_exists("ns")


def test_writes_commit_at_flush_and_report_einval(ops: TrinityOperations) -> None:
    lake = ops.lake
    before = lake.latest_version()
    fh = ops.create("/ns/new", 0o644, W)
    ops.flush("/ns/new", fh)  # a shell's dup-and-close before writing: nothing yet
    assert lake.latest_version() == before
    assert ops.getattr("/ns/new")["st_size"] == 0  # visible while being written
    # bytes that cannot become a definition are refused by the write itself (a shell's
    # `echo x > f` never sees the error of its implicit close), and by every later flush
    assert errno_of(ops.write, "/ns/new", b"{bad", 0, fh) == errno.EINVAL
    assert errno_of(ops.flush, "/ns/new", fh) == errno.EINVAL
    ops.release("/ns/new", fh)
    assert lake.latest_version() == before
    assert errno_of(ops.getattr, "/ns/new") == errno.ENOENT
    fh = ops.create("/ns/new", 0o644, W)
    ops.utimens("/ns/new", None)  # touch
    ops.flush("/ns/new", fh)
    ops.release("/ns/new", fh)
    assert lake.latest_version() == before + 1
    # appending to a file, the same bytes again, truncate without a handle
    data = read(ops, "/ns/t")
    write(ops, "/ns/t", data)
    assert lake.latest_version() == before + 1
    ops.truncate("/ns/t", 0)
    assert lake.latest_version() == before + 2
    assert lake.describe_table("ns", "t").table_format == ""


def test_read_only_and_pinned(ops: TrinityOperations) -> None:
    ro = TrinityOperations(ops.lake, version=1, prefetch_threads=0)
    assert [e[0] for e in ro.readdir("/ns", 0)] == [".", ".."]
    assert errno_of(ro.create, "/ns/x", 0o644, W) == errno.EROFS
    assert errno_of(ro.mkdir, "/x", 0o755) == errno.EROFS
    assert errno_of(ops.unlink, "/v/1/ns") == errno.EROFS
    assert errno_of(ops.open, "/v/2/ns/t", os.O_RDWR) == errno.EROFS
    assert errno_of(ops.mkdir, "/ns/sub", 0o755) == errno.EPERM
    assert errno_of(ops.create, "/top", 0o644, W) == errno.EPERM
    assert errno_of(ops.create, "/ns/bad name", 0o644, W) == errno.EINVAL


def test_xattrs(ops: TrinityOperations) -> None:
    assert ops.listxattr("/ns") == ["user.owner"]
    assert ops.getxattr("/ns", "user.owner") == b"me"
    assert errno_of(ops.getxattr, "/ns", "user.none") == errno.ENODATA
    assert errno_of(ops.getxattr, "/ns", "security.selinux") == errno.ENOTSUP
    assert errno_of(ops.setxattr, "/ns", "user.owner", b"x", 1) == errno.EEXIST  # CREATE
    assert errno_of(ops.setxattr, "/ns", "user.none", b"x", 2) == errno.ENODATA  # REPLACE
    before = ops.lake.latest_version()
    ops.setxattr("/ns", "user.owner", b"me", 0)  # the same value: no commit
    assert ops.lake.latest_version() == before
    ops.setxattr("/ns", "user.team", b"data", 0)
    ops.removexattr("/ns", "user.owner")
    assert ops.lake.snapshot().namespace_properties("ns") == {"team": "data"}
    assert ops.listxattr("/v/1/ns") == ["user.owner"]
    assert ops.listxattr("/ns/t") == []
    assert errno_of(ops.removexattr, "/ns", "user.owner") == errno.ENODATA


def test_namespace_rename(ops: TrinityOperations) -> None:
    before = ops.lake.latest_version()
    ops.rename("/ns", "/ns2")
    assert ops.lake.latest_version() == before + 1
    assert ops.lake.list_tables("ns2") == ["t"]
    assert ops.lake.snapshot().namespace_properties("ns2") == {"owner": "me"}
    ops.mkdir("/ns3", 0o755)
    # namespaces are one level: EPERM as mkdir /ns3/x (ENOTDIR onto a table or view),
    # the answer of fs.mv too (tests/regression/test_namespace_moved_into_a_namespace_...)
    assert errno_of(ops.rename, "/ns2", "/ns3/x") == errno.EPERM
    assert errno_of(ops.rename, "/ns3", "/ns2/t") == errno.ENOTDIR
