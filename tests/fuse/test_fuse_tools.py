"""Everyday tools on a real mount: ls, cat, cp, mv, rm, mkdir, rmdir, touch, editors, diff,
grep, rsync, find, getfattr/setfattr, and the errno each failure gives."""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fuse_helpers import (
    FUSE,
    Mount,
    open_for_writing,
    populate,
    require_tool,
    run,
    start_mount,
)

from trinityfs import Lakehouse
from trinityfs.fs.content import render

pytestmark = FUSE
LATEST_TTL = 1.0  # the mount's default: other writers' changes show within this

VIMLIKE = r"""
import os, sys
path, new = sys.argv[1], sys.argv[2].encode()
d = os.path.dirname(path)
probe = os.path.join(d, "4913")               # vim's writability probe
fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o644)
os.fchown(fd, os.getuid(), os.getgid()); os.close(fd); os.unlink(probe)
swap = os.path.join(d, "." + os.path.basename(path) + ".swp")
fd = os.open(swap, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
os.write(fd, b"b0VIM 9.0\0\0\0binary swap"); os.fsync(fd)
backup = path + "~"
os.rename(path, backup)                        # backupcopy=no: the original becomes t~
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, new); os.fsync(fd); os.close(fd)  # the new t is committed here
os.unlink(backup)
os.close(os.open(swap, os.O_RDONLY)); os.unlink(swap)
"""


@pytest.fixture(scope="module")
def mnt(tmp_path_factory) -> Mount:
    base = tmp_path_factory.mktemp("tools")
    root = str(base / "lake")
    populate(root)
    mount = start_mount(root, base / "mnt")
    yield mount
    assert mount.unmount() == 0
    assert "Traceback" not in mount.log_text(), mount.log_text()


def lake(m: Mount) -> Lakehouse:
    return Lakehouse.open(m.root)


def definition(m: Mount, ns: str, name: str) -> dict:
    return json.loads((m.path / ns / name).read_text())


def test_ls_l_shows_namespaces_files_sizes_and_commit_times(mnt: Mount) -> None:
    out = run("ls", "-l", str(mnt.path)).stdout
    assert "hr" in out and "sales" in out
    assert run("ls", str(mnt.path)).stdout.split() == ["hr", "sales"]  # /v is hidden
    listing = run("ls", "-l", "--time-style=+%s", str(mnt.path / "sales")).stdout
    names = [line.split()[-1] for line in listing.splitlines()[1:]]
    assert names == ["big_orders", "customers", "orders"]
    snap = lake(mnt).at(3)
    for name, kind in [("orders", "table"), ("customers", "table"), ("big_orders", "view")]:
        st = os.stat(mnt.path / "sales" / name)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644
        assert st.st_size == len(render(kind, snap.describe(kind, "sales", name)))
    # times come from the commit that last wrote each definition
    info = {v.version: v.created_at_millis for v in lake(mnt).versions()}
    orders = os.stat(mnt.path / "sales" / "orders").st_mtime_ns
    customers = os.stat(mnt.path / "sales" / "customers").st_mtime_ns
    assert orders == info[2] * 1_000_000
    assert customers == info[3] * 1_000_000
    assert stat.S_ISDIR(os.stat(mnt.path / "sales").st_mode)


def test_cat_is_the_stable_json_of_the_definition(mnt: Mount) -> None:
    out = run("cat", str(mnt.path / "sales" / "orders")).stdout
    snap = lake(mnt).snapshot()
    assert out.encode() == render("table", snap.describe_table("sales", "orders"))
    assert json.loads(out)["definition"]["table_format"] == "ICEBERG"
    view = json.loads(run("cat", str(mnt.path / "sales" / "big_orders")).stdout)
    assert view["kind"] == "view"


def test_versions_directory(mnt: Mount) -> None:
    entries = os.listdir(mnt.path / "v")
    latest = mnt.latest()
    assert [e for e in entries if e.isdigit()] == [str(v) for v in range(0, latest + 1)]
    assert "latest" in entries
    assert sorted(os.listdir(mnt.path / "v" / "2" / "sales")) == ["customers", "orders"]
    st = os.stat(mnt.path / "v" / "2" / "sales" / "orders")
    assert stat.S_IMODE(st.st_mode) == 0o444
    assert os.listdir(mnt.path / "v" / "0") == []
    # an ISO-8601 time reads the version current then
    when = lake(mnt).version_info(2).created_at_millis
    from datetime import UTC, datetime

    label = datetime.fromtimestamp(when / 1000, UTC).isoformat(timespec="milliseconds")
    assert sorted(os.listdir(mnt.path / "v" / label / "sales")) == ["customers", "orders"]


def test_cp_out_and_in(mnt: Mount, tmp_path: Path) -> None:
    local = tmp_path / "orders.json"
    run("cp", str(mnt.path / "sales" / "orders"), str(local))
    assert json.loads(local.read_text())["kind"] == "table"
    data = json.loads(local.read_text())
    data["definition"]["id"] = ""
    data["definition"]["properties"] = {"copied": "yes"}
    local.write_text(json.dumps(data))
    before = mnt.latest()
    run("cp", str(local), str(mnt.path / "sales" / "orders_copy"))
    assert mnt.latest() == before + 1  # one commit
    got = lake(mnt).describe_table("sales", "orders_copy")
    assert dict(got.properties) == {"copied": "yes"} and got.table_format == "ICEBERG"
    # cp over an existing file replaces it (one commit), and the same bytes change nothing
    data["definition"]["properties"] = {"copied": "twice"}
    local.write_text(json.dumps(data))
    run("cp", str(local), str(mnt.path / "sales" / "orders_copy"))
    assert mnt.latest() == before + 2
    assert dict(lake(mnt).describe_table("sales", "orders_copy").properties) == {"copied": "twice"}
    run("cp", str(mnt.path / "sales" / "orders_copy"), str(tmp_path / "back.json"))
    run("cp", str(tmp_path / "back.json"), str(mnt.path / "sales" / "orders_copy"))
    assert mnt.latest() == before + 2
    # cp -r of a version's namespace out to local disk
    run("cp", "-r", str(mnt.path / "v" / "2" / "sales"), str(tmp_path / "sales2"))
    assert sorted(p.name for p in (tmp_path / "sales2").iterdir()) == ["customers", "orders"]


def test_mv_is_one_commit(mnt: Mount) -> None:
    lk = lake(mnt)
    lk.create_table("hr", "mv_src", {"table_format": "DELTA"})
    table_id = lk.describe_table("hr", "mv_src").id
    before = mnt.latest()
    run("mv", str(mnt.path / "hr" / "mv_src"), str(mnt.path / "hr" / "mv_dst"))
    assert mnt.latest() == before + 1
    assert lake(mnt).changes(before + 1) and not (mnt.path / "hr" / "mv_src").exists()
    assert lake(mnt).describe_table("hr", "mv_dst").id == table_id
    # across namespaces, and over an existing file (what editors do), still one commit each
    run("mv", str(mnt.path / "hr" / "mv_dst"), str(mnt.path / "sales" / "mv_dst"))
    assert mnt.latest() == before + 2
    lake(mnt).create_table("sales", "mv_target", {"table_format": "HUDI"})
    before = mnt.latest()
    run("mv", "-f", str(mnt.path / "sales" / "mv_dst"), str(mnt.path / "sales" / "mv_target"))
    assert mnt.latest() == before + 1
    assert lake(mnt).describe_table("sales", "mv_target").table_format == "DELTA"
    assert "mv_dst" not in os.listdir(mnt.path / "sales")


def test_mv_of_a_namespace_is_one_commit(mnt: Mount) -> None:
    run("mkdir", str(mnt.path / "mvns"))
    lake(mnt).create_table("mvns", "t1")
    lake(mnt).set_namespace_properties("mvns", {"k": "v"})
    before = mnt.latest()
    run("mv", str(mnt.path / "mvns"), str(mnt.path / "mvns2"))
    assert mnt.latest() == before + 1
    lk = lake(mnt)
    assert not lk.snapshot().namespace_exists("mvns")
    assert lk.list_tables("mvns2") == ["t1"]
    assert lk.snapshot().namespace_properties("mvns2") == {"k": "v"}


def test_rm_mkdir_rmdir_touch(mnt: Mount) -> None:
    before = mnt.latest()
    run("mkdir", str(mnt.path / "scratchns"))
    assert mnt.latest() == before + 1 and lake(mnt).snapshot().namespace_exists("scratchns")
    run("touch", str(mnt.path / "scratchns" / "empty"))
    assert mnt.latest() == before + 2  # touch creates the table (empty definition) at once
    assert lake(mnt).describe_table("scratchns", "empty").table_format == ""
    run("touch", str(mnt.path / "scratchns" / "empty"))
    assert mnt.latest() == before + 2  # touching an existing file commits nothing
    result = run("rmdir", str(mnt.path / "scratchns"), check=False)
    assert result.returncode != 0 and "not empty" in result.stderr
    run("rm", str(mnt.path / "scratchns" / "empty"))
    assert mnt.latest() == before + 3
    run("rmdir", str(mnt.path / "scratchns"))
    assert mnt.latest() == before + 4
    assert not lake(mnt).snapshot().namespace_exists("scratchns")
    run("mkdir", "-p", str(mnt.path / "sales"))  # exists: nothing to do
    assert mnt.latest() == before + 4


def test_shell_redirection_is_one_commit_per_write(mnt: Mount) -> None:
    path = mnt.path / "hr" / "redir"
    before = mnt.latest()
    run("sh", "-c", f"""echo '{{"kind": "table"}}' > {path}""")  # new file
    assert mnt.latest() == before + 1
    doc = '{"kind": "table", "definition": {"table_format": "DELTA"}}'
    run("sh", "-c", f"echo '{doc}' > {path}")  # O_TRUNC, the shell's dup+close, then write
    assert mnt.latest() == before + 2  # no empty version in between
    assert lake(mnt).describe_table("hr", "redir").table_format == "DELTA"
    run("sh", "-c", f": > {path}")  # emptied: committed when the file is released
    deadline = time.monotonic() + 10
    while mnt.latest() != before + 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert lake(mnt).describe_table("hr", "redir").table_format == ""


def test_sed_i_saves_through_a_temporary_file_in_one_commit(mnt: Mount) -> None:
    lake(mnt).create_table("sales", "sed_me", {"table_format": "ICEBERG"})
    before = mnt.latest()
    run("sed", "-i", "s/ICEBERG/DELTA/", str(mnt.path / "sales" / "sed_me"))
    assert mnt.latest() == before + 1
    assert lake(mnt).describe_table("sales", "sed_me").table_format == "DELTA"
    assert [n for n in os.listdir(mnt.path / "sales") if n.startswith("sed")] == ["sed_me"]


def test_editor_save_with_backup_rename_and_swap_file_is_one_commit(mnt: Mount) -> None:
    lake(mnt).create_table("sales", "edit_me", {"table_format": "ICEBERG"})
    before = mnt.latest()
    new = {"kind": "view", "definition": {"properties": {"sql": "select 1"}}}
    run(sys.executable, "-c", VIMLIKE, str(mnt.path / "sales" / "edit_me"), json.dumps(new))
    assert mnt.latest() == before + 1  # the probe, swap and backup files never committed
    assert lake(mnt).describe_view("sales", "edit_me").properties["sql"] == "select 1"
    assert lake(mnt).snapshot().object_kind("sales", "edit_me") == "view"
    names = os.listdir(mnt.path / "sales")
    assert "edit_me~" not in names and "4913" not in names and ".edit_me.swp" not in names


def test_real_vim(mnt: Mount) -> None:
    vim = shutil.which("vim") or shutil.which("vim.basic") or shutil.which("vim.tiny")
    if vim is None:
        pytest.skip("vim is not installed (optional: apt-get install vim-tiny)")
    path = mnt.path / "sales" / "vim_me"
    reset = json.dumps({"kind": "table", "definition": {"table_format": "ICEBERG"}})
    path.write_text(reset)
    for opts in ("set nobackup writebackup", "set backup backupcopy=no", "set backupcopy=yes"):
        before = mnt.latest()
        run(
            vim,
            "-u",
            "NONE",
            "-N",
            "-es",
            "-c",
            opts,
            "-c",
            "%s/ICEBERG/HUDI/",
            "-c",
            "wq",
            str(path),
        )
        assert mnt.latest() == before + 1, opts  # one save, one commit
        assert lake(mnt).describe_table("sales", "vim_me").table_format == "HUDI"
        names = os.listdir(mnt.path / "sales")
        assert not [n for n in names if "vim_me" in n and n != "vim_me"]
        path.write_text(reset)  # through the mount: the next vim reads it at once


def test_python_atomic_write_with_mkstemp_and_replace(mnt: Mount) -> None:
    before = mnt.latest()
    code = (
        "import os, sys, tempfile\n"
        "fd, tmp = tempfile.mkstemp(dir=sys.argv[1])\n"
        'os.write(fd, b\'{"kind": "table", "definition": {"table_format": "HUDI"}}\')\n'
        "os.close(fd); os.replace(tmp, os.path.join(sys.argv[1], 'atomic'))\n"
    )
    run(sys.executable, "-c", code, str(mnt.path / "hr"))
    assert mnt.latest() == before + 1
    assert lake(mnt).describe_table("hr", "atomic").table_format == "HUDI"


def test_temporary_file_with_invalid_json_renamed_onto_a_name_is_einval(mnt: Mount) -> None:
    tmp = mnt.path / "hr" / ".draft.swp"
    before = mnt.latest()
    tmp.write_bytes(b"\x00binary, not json")  # kept in memory: no commit, no error
    assert tmp.read_bytes() == b"\x00binary, not json"
    assert ".draft.swp" in os.listdir(mnt.path / "hr")
    assert mnt.latest() == before
    with pytest.raises(OSError) as info:
        os.rename(tmp, mnt.path / "hr" / "draft")
    assert info.value.errno == errno.EINVAL
    assert mnt.latest() == before  # nothing committed
    assert not (mnt.path / "hr" / "draft").exists()
    tmp.write_text('{"kind": "table"}')
    os.rename(tmp, mnt.path / "hr" / "draft")
    assert mnt.latest() == before + 1
    assert ".draft.swp" not in os.listdir(mnt.path / "hr")
    assert [c.object.name for c in lake(mnt).changes(before + 1)] == ["draft"]


def test_diff_r_between_two_versions(mnt: Mount) -> None:
    result = run("diff", "-r", str(mnt.path / "v" / "2"), str(mnt.path / "v" / "3"), check=False)
    assert result.returncode == 1
    assert "Only in " + str(mnt.path / "v" / "3" / "sales") + ": big_orders" in result.stdout
    assert "DELTA" in result.stdout and "ICEBERG" in result.stdout  # customers changed
    same = run("diff", "-r", str(mnt.path / "v" / "3" / "sales"), str(mnt.path / "v" / "3/sales"))
    assert same.stdout == ""


def test_grep_r(mnt: Mount) -> None:
    out = run("grep", "-rl", "HUDI", str(mnt.path / "v" / "5")).stdout.split()
    assert out == [str(mnt.path / "v" / "5" / "hr" / "people")]
    out = run("grep", "-r", '"pii"', str(mnt.path / "hr")).stdout
    assert "people" in out


def test_rsync_a_of_a_version_to_local_disk(mnt: Mount, tmp_path: Path) -> None:
    require_tool("rsync")
    dest = tmp_path / "copy"
    run("rsync", "-a", str(mnt.path / "v" / "5") + "/", str(dest))
    got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*"))
    assert got == [
        "hr",
        "hr/people",
        "sales",
        "sales/big_orders",
        "sales/customers",
        "sales/orders",
    ]
    snap = lake(mnt).at(5)
    assert (dest / "hr" / "people").read_bytes() == render(
        "table", snap.describe_table("hr", "people")
    )
    assert (dest / "sales" / "orders").stat().st_mtime_ns // 10**9 == (
        lake(mnt).version_info(2).created_at_millis // 1000
    )
    # a second rsync has nothing to transfer (sizes and commit times match)
    again = run("rsync", "-a", "--itemize-changes", str(mnt.path / "v" / "5") + "/", str(dest))
    assert [ln for ln in again.stdout.splitlines() if ln.startswith(">f")] == []


def test_find(mnt: Mount) -> None:
    files = run("find", str(mnt.path / "v" / "5"), "-type", "f").stdout.split()
    assert sorted(Path(f).name for f in files) == ["big_orders", "customers", "orders", "people"]
    dirs = run("find", str(mnt.path / "v" / "5"), "-mindepth", "1", "-type", "d").stdout.split()
    assert sorted(Path(d).name for d in dirs) == ["hr", "sales"]
    named = run("find", str(mnt.path), "-name", "orders").stdout.split()
    assert named == [str(mnt.path / "sales" / "orders")]  # /v is not walked from /


def test_namespace_properties_as_user_xattrs(mnt: Mount) -> None:
    require_tool("getfattr")
    out = run("getfattr", "-d", str(mnt.path / "sales")).stdout
    assert 'user.owner="analytics"' in out and 'user.tier="gold"' in out
    before = mnt.latest()
    run("setfattr", "-n", "user.steward", "-v", "ana", str(mnt.path / "sales"))
    assert mnt.latest() == before + 1
    assert lake(mnt).snapshot().namespace_properties("sales")["steward"] == "ana"
    assert os.getxattr(mnt.path / "sales", "user.steward") == b"ana"
    run("setfattr", "-x", "user.steward", str(mnt.path / "sales"))
    assert mnt.latest() == before + 2
    assert "steward" not in lake(mnt).snapshot().namespace_properties("sales")
    missing = run("getfattr", "-n", "user.nope", str(mnt.path / "sales"), check=False)
    assert missing.returncode != 0 and "No such attribute" in missing.stderr
    assert "user.owner" in os.listxattr(mnt.path / "v" / "1" / "sales")
    with pytest.raises(OSError) as info:
        os.setxattr(mnt.path / "v" / "1" / "sales", "user.x", b"y")
    assert info.value.errno == errno.EROFS
    with pytest.raises(OSError) as info:
        os.setxattr(mnt.path / "sales", "trusted.x", b"y")
    assert info.value.errno in (errno.ENOTSUP, errno.EPERM)


def test_errno_of_failures(mnt: Mount) -> None:
    old = mnt.path / "v" / "2" / "sales"
    before = mnt.latest()
    # writes under /v/<n>: EROFS
    for attempt in (
        lambda: open_for_writing(old / "orders"),
        lambda: open_for_writing(old / "new"),
        lambda: os.unlink(old / "orders"),
        lambda: os.mkdir(mnt.path / "v" / "2" / "ns"),
        lambda: os.rename(old / "orders", old / "o2"),
        lambda: os.rename(mnt.path / "sales" / "orders", old / "o2"),
    ):
        with pytest.raises(OSError) as info:
            attempt()
        assert info.value.errno == errno.EROFS, info.value
    # bytes that cannot become JSON: EINVAL at the write, and again at close
    fd = os.open(mnt.path / "sales" / "bad", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with pytest.raises(OSError) as info:
            os.write(fd, b"{not json")
        assert info.value.errno == errno.EINVAL
    finally:
        with pytest.raises(OSError) as info:
            os.close(fd)
    assert info.value.errno == errno.EINVAL
    # JSON cut short: EINVAL at close, nothing committed (another name: the kernel keeps
    # "bad" in its entry cache for entry_timeout)
    fd = os.open(mnt.path / "sales" / "bad2", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b'{"kind": ')
    with pytest.raises(OSError) as info:
        os.close(fd)
    assert info.value.errno == errno.EINVAL
    result = run("cp", "/etc/hostname", str(mnt.path / "sales" / "orders"), check=False)
    assert result.returncode != 0 and "Invalid argument" in result.stderr
    assert mnt.latest() == before
    assert {"bad", "bad2"}.isdisjoint(os.listdir(mnt.path / "sales"))
    assert lake(mnt).describe_table("sales", "orders").table_format == "ICEBERG"
    # missing: ENOENT
    for missing in ("sales/nope", "nope", "nope/t", "v/999", "v/999/sales", "v/2/sales/big_orders"):
        with pytest.raises(OSError) as info:
            os.stat(mnt.path / missing)
        assert info.value.errno == errno.ENOENT, missing
    with pytest.raises(OSError) as info:
        open_for_writing(mnt.path / "nope" / "t")
    assert info.value.errno == errno.ENOENT
    # the catalog's shape: no directories in a namespace, no files at the top
    with pytest.raises(OSError) as info:
        os.mkdir(mnt.path / "sales" / "sub")
    assert info.value.errno == errno.EPERM
    with pytest.raises(OSError) as info:
        open_for_writing(mnt.path / "toplevel")
    assert info.value.errno == errno.EPERM
    with pytest.raises(OSError) as info:
        os.mkdir(mnt.path / "sales")
    assert info.value.errno == errno.EEXIST
    with pytest.raises(OSError) as info:
        os.open(mnt.path / "sales" / "orders", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    assert info.value.errno == errno.EEXIST
    with pytest.raises(OSError) as info:
        os.rmdir(mnt.path / "sales")
    assert info.value.errno == errno.ENOTEMPTY
    with pytest.raises(OSError) as info:
        open_for_writing(mnt.path / "sales" / ("x" * 200))
    assert info.value.errno in (errno.EINVAL, errno.ENAMETOOLONG)
    with pytest.raises(OSError) as info:
        open_for_writing(mnt.path / "sales" / "has space")
    assert info.value.errno == errno.EINVAL
    assert mnt.latest() == before


def test_commit_conflict_is_ebusy_with_a_log_line_and_nothing_committed(mnt: Mount) -> None:
    lake(mnt).create_table("hr", "contended", {"table_format": "ICEBERG"})
    path = mnt.path / "hr" / "contended"
    fd = os.open(path, os.O_RDWR)
    text = os.read(fd, 1 << 16)
    # another writer changes the table while the file is open here
    lake(mnt).replace_table("hr", "contended", {"table_format": "HUDI"})
    before = mnt.latest()
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.replace(b"ICEBERG", b"DELTA"), 0)
    with pytest.raises(OSError) as info:
        os.close(fd)
    assert info.value.errno == errno.EBUSY
    assert mnt.latest() == before
    assert lake(mnt).describe_table("hr", "contended").table_format == "HUDI"
    assert "commit conflict on table hr.contended" in mnt.log_text()


def test_a_file_reads_one_version_even_if_the_catalog_moves_on(mnt: Mount) -> None:
    lake(mnt).create_table("hr", "moving", {"table_format": "ICEBERG"})
    with open(mnt.path / "hr" / "moving", "rb", buffering=0) as f:
        head = f.read(10)
        lake(mnt).replace_table("hr", "moving", {"properties": {"x" * 500: "y" * 500}})
        rest = f.read()
    assert json.loads(head + rest)["definition"]["table_format"] == "ICEBERG"
    # another writer's change shows once the mount probes the latest version again
    time.sleep(LATEST_TTL + 0.2)
    assert json.loads((mnt.path / "hr" / "moving").read_bytes())["definition"]["properties"]


def test_writes_through_v_latest(mnt: Mount) -> None:
    before = mnt.latest()
    (mnt.path / "v" / "latest" / "hr" / "via_latest").write_text('{"kind": "table"}')
    assert mnt.latest() == before + 1
    assert "via_latest" in os.listdir(mnt.path / "hr")


def test_statfs(mnt: Mount) -> None:
    st = os.statvfs(mnt.path)
    assert st.f_namemax >= 255 and st.f_bavail > 0
    assert subprocess.run(["df", str(mnt.path)], capture_output=True).returncode == 0
