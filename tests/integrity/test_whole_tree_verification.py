"""Whole-tree verification of commits, `verify="tree"` (trinityfs/txn/verify.py).

- A commit verifies every file the tree it builds on reaches (nodes, definitions, the
  lakehouse definition) before it writes anything: damage it would otherwise carry
  forward untouched refuses it with CorruptFileError naming the file and the version,
  nothing is written, and the same transaction commits once the file is restored.
- A handle remembers what it verified (names carry content hashes, files are
  immutable): its first commit reads the whole tree, later ones only new files.
- The mode comes from the argument, then $TRINITYFS_VERIFY, then fsspec's config.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from integrity_lakes import OPEN, build_tables_lake, copy_lake, flip, node_files, stored_files

from trinityfs import Lakehouse
from trinityfs.catalog import read_config
from trinityfs.errors import CorruptFileError, InvalidArgumentError

TABLES = 150


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    return build_tables_lake(tmp_path_factory.mktemp("pristine") / "lake", TABLES)


def _reads(lake: Lakehouse) -> int:
    return lake.storage.stats.snapshot()["read"]


def _untouched(probe: Lakehouse, what: str) -> str:
    """A file that create_table("ns", "after_damage") does not read (the default mode
    carries it), found by committing that change on the throwaway copy `probe`."""
    if what.startswith("definition"):
        return probe.snapshot().object_location("table", "ns", "t007")
    tree = node_files(probe, probe.latest_version())
    handle = Lakehouse.open(probe.storage.url, **OPEN)
    read: set[str] = set()
    real = handle.storage.read
    handle.storage.read = lambda loc: read.add(loc) or real(loc)
    handle.create_table("ns", "after_damage")
    return sorted(tree - read)[0]


@pytest.mark.parametrize(
    "what", ["definition flipped", "definition deleted", "node flipped", "node deleted"]
)
def test_tree_mode_refuses_damage_the_commit_never_reads(pristine, tmp_path, what):
    probe = copy_lake(pristine, tmp_path / "probe")
    location = _untouched(probe, what)
    lake = copy_lake(pristine, tmp_path)
    path = lake.path / location
    good = path.read_bytes()
    flip(path) if "flipped" in what else path.unlink()
    latest = lake.latest_version()
    before = stored_files(lake.path)

    strict = Lakehouse.open(str(lake.path), **OPEN, verify="tree")
    txn = strict.transaction()
    txn.create_table("ns", "after_damage")
    with pytest.raises(CorruptFileError, match=location.rpartition("/")[2]) as refused:
        txn.commit()
    assert refused.value.version == latest
    assert "deleted" not in what or "missing" in str(refused.value)
    assert stored_files(lake.path) == before, "a refused commit wrote files"
    assert Lakehouse.open(str(lake.path), **OPEN).latest_version() == latest

    path.write_bytes(good)  # restored: the same transaction commits
    assert txn.commit() == latest + 1
    assert Lakehouse.open(str(lake.path), **OPEN).fsck().ok


def test_tree_mode_reads_the_tree_once_then_only_new_files(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path, verify="tree")
    counter = Lakehouse.open(lake.storage.url, **OPEN)  # (its reads are not counted)
    tree = len(node_files(counter, counter.latest_version())) + TABLES + 1  # + namespace
    start = _reads(lake)
    lake.create_table("ns", "first")
    first = _reads(lake) - start
    assert first >= tree, f"the first commit read {first} files of a {tree}-file tree"

    start = _reads(lake)
    lake.create_table("ns", "second")
    assert _reads(lake) - start <= 6  # the root, the hint probe: no tree walk

    other = Lakehouse.open(lake.storage.url, **OPEN)
    for i in range(3):
        other.create_table("ns", f"other{i}")
    start = _reads(lake)
    lake.create_table("ns", "third")
    later = _reads(lake) - start
    # three commits' new nodes and definitions, a handful each, not the tree again
    assert later <= 40 and later < first // 4, f"read {later} files (first commit {first})"


def test_tree_mode_is_shared_by_threads_of_one_handle(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path, verify="tree")
    lake.create_table("ns", "warm")
    warm = lake.engine.tree_verifier.files_read
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(4):
                lake.create_table("ns", f"w{n}x{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(lake.list_tables("ns")) == TABLES + 1 + 16
    # 16 commits verified what they had not seen, never the whole tree again
    assert lake.engine.tree_verifier.files_read - warm < warm // 2
    assert Lakehouse.open(lake.storage.url, **OPEN).fsck().ok


def test_tree_mode_rollback_refuses_damage_the_target_carries(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path)
    target = lake.latest_version() - 10
    lake.drop_table("ns", "t149")
    location = lake.snapshot().object_location("table", "ns", "t007")  # both reach it
    good = (lake.path / location).read_bytes()
    flip(lake.path / location)
    latest = lake.latest_version()
    with pytest.raises(CorruptFileError, match=location.rpartition("/")[2]) as refused:
        Lakehouse.open(str(lake.path), **OPEN, verify="tree").rollback(target)
    assert refused.value.version == target
    assert Lakehouse.open(str(lake.path), **OPEN).latest_version() == latest
    (lake.path / location).write_bytes(good)
    assert Lakehouse.open(str(lake.path), **OPEN, verify="tree").rollback(target) == latest + 1


def test_default_mode_still_carries_what_it_does_not_read(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path)
    assert lake.verify == "reads" and lake.engine.tree_verifier is None
    location = lake.snapshot().object_location("table", "ns", "t007")
    flip(lake.path / location)
    assert lake.create_table("ns", "after_damage") == lake.latest_version()
    shutil.copyfile(pristine / location, lake.path / location)


def test_verify_mode_from_argument_environment_and_fsspec_config(tmp_path, monkeypatch):
    assert read_config(env={}, fsspec_conf={}).verify == "reads"
    assert read_config(env={"TRINITYFS_VERIFY": "tree"}, fsspec_conf={}).verify == "tree"
    assert read_config(env={}, fsspec_conf={"verify": "tree"}).verify == "tree"
    cfg = read_config(verify="reads", env={"TRINITYFS_VERIFY": "tree"}, fsspec_conf={})
    assert cfg.verify == "reads" and cfg.sources["verify"] == "arguments"
    with pytest.raises(InvalidArgumentError, match=r"\$TRINITYFS_VERIFY.*'reads'.*'tree'"):
        read_config(env={"TRINITYFS_VERIFY": "all"}, fsspec_conf={})

    build_tables_lake(tmp_path / "lake", 1)
    monkeypatch.setenv("TRINITYFS_VERIFY", "tree")
    lake = Lakehouse.open(str(tmp_path / "lake"), **OPEN)  # every front end opens so
    assert lake.verify == "tree"
    assert Lakehouse.open(str(tmp_path / "lake"), **OPEN, verify="reads").verify == "reads"
    lake.verify = "reads"
    assert lake.engine.tree_verifier is None
    with pytest.raises(InvalidArgumentError):
        lake.verify = "everything"


def test_cli_verify_flag_refuses_in_one_line(pristine, tmp_path):
    import io

    from trinityfs.cli.app import main

    lake = copy_lake(pristine, tmp_path)
    location = lake.snapshot().object_location("table", "ns", "t007")
    flip(lake.path / location)
    latest = lake.latest_version()

    def run(*argv: str) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        status = main(
            ["--root", str(lake.path), "-o", "fsync=false", *argv], stdout=out, stderr=err
        )
        return status, err.getvalue()

    status, err = run("--verify", "tree", "mkdir", "/ns2")
    assert status == 1 and err.count("\n") == 1, err
    assert location.rpartition("/")[2] in err and f"version {latest}" in err
    assert Lakehouse.open(str(lake.path), **OPEN).latest_version() == latest
    status, err = run("mkdir", "/ns2", "--verify", "reads")  # after the command too
    assert status == 0, err
    assert run("--verify", "all", "ls", "/")[0] == 2


def test_tree_mode_on_a_lakehouse_without_hashes_checks_structure(tmp_path):
    legacy = Path(__file__).parent / "legacy_lake_937923f"  # written before content hashes
    shutil.copytree(legacy, tmp_path / "lake")
    url = str(tmp_path / "lake")
    lake = Lakehouse.open(url, **OPEN, verify="tree")
    stats = lake.engine.tree_verifier.verify(
        lake.engine.snapshot().root,
        lake.engine.snapshot().nodes,
        lake.engine.snapshot().lakehouse_def_location,
        version=lake.latest_version(),
    )
    assert stats.files_read > 10 and stats.unhashed == stats.files_read
    assert lake.create_table("ns", "new") == 16
    # a definition that no longer parses is refused even without a hash in its name
    victim = lake.snapshot().object_location("table", "ns", "t07")
    (tmp_path / "lake" / victim).write_bytes(b"\xff\xff\xff")
    with pytest.raises(CorruptFileError, match=victim.rpartition("/")[2]):
        Lakehouse.open(url, **OPEN, verify="tree").create_table("ns", "newer")


def test_tree_mode_refuses_dropping_a_damaged_table_the_default_drops_it(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path)
    location = lake.snapshot().object_location("table", "ns", "t007")
    flip(lake.path / location)
    latest = lake.latest_version()
    with pytest.raises(CorruptFileError, match=location.rpartition("/")[2]):
        Lakehouse.open(str(lake.path), **OPEN, verify="tree").drop_table("ns", "t007")
    assert Lakehouse.open(str(lake.path), **OPEN).drop_table("ns", "t007") == latest + 1


def test_server_and_pyiceberg_catalog_take_the_verify_mode(tmp_path, monkeypatch):
    pytest.importorskip("starlette")
    from trinityfs.iceberg import TrinityCatalog
    from trinityfs.rest.options import ServerConfig
    from trinityfs.rest.server import build_service

    url = str(build_tables_lake(tmp_path / "lake", 1))
    monkeypatch.delenv("TRINITYFS_VERIFY", raising=False)
    assert build_service(ServerConfig(root=url)).lake.verify == "reads"
    assert build_service(ServerConfig(root=url, verify="tree")).lake.verify == "tree"
    monkeypatch.setenv("TRINITYFS_VERIFY", "tree")  # what the mount and the server follow
    assert build_service(ServerConfig(root=url)).lake.verify == "tree"
    assert TrinityCatalog("c", root=url, verify="reads").lakehouse.verify == "reads"
    with pytest.raises(InvalidArgumentError, match="verify"):
        TrinityCatalog("c", root=url, verify="sometimes")
