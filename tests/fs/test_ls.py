"""ls: one key-range scan, no definition read, cached by versioned path."""

from __future__ import annotations

import bisect

import pytest
from fs_helpers import NO_FSYNC, make_fs

from trinityfs import Lakehouse

BIG = 1200  # more than one page (1000) of a key-range scan


def test_ls_root_lists_namespaces_as_directories(sample):
    entries = sample.ls("/")
    assert [e["name"] for e in entries] == ["/sales", "/staging"]
    assert all(e["type"] == "directory" and e["kind"] == "namespace" for e in entries)
    assert all(e["size"] == 0 and e["version"] == 4 for e in entries)
    assert sample.ls("trinity://", detail=False) == ["/sales", "/staging"]


def test_ls_namespace_lists_tables_and_views_as_files(sample):
    entries = sample.ls("/sales")
    assert [(e["name"], e["type"], e["kind"]) for e in entries] == [
        ("/sales/big_orders", "file", "view"),
        ("/sales/orders", "file", "table"),
    ]
    assert all(e["size"] is None for e in entries)  # unknown without reading definitions
    assert sample.ls("/staging") == []
    assert sample.ls("/sales/", detail=False) == ["/sales/big_orders", "/sales/orders"]


def test_ls_sizes_reads_definitions(sample):
    entries = sample.ls("/sales", sizes=True)
    assert {e["name"]: e["size"] for e in entries} == {
        name: len(sample.cat(name)) for name in ("/sales/big_orders", "/sales/orders")
    }


def test_ls_of_a_file_is_its_info(sample):
    (entry,) = sample.ls("/sales/orders")
    assert entry == sample.info("/sales/orders")


def test_ls_missing(sample):
    with pytest.raises(FileNotFoundError):
        sample.ls("/nope")
    with pytest.raises(FileNotFoundError):
        sample.ls("/bad name")  # an invalid name cannot exist
    with pytest.raises(FileNotFoundError):
        sample.ls("/sales/orders/deeper")


def test_ls_big_namespace_reads_no_definition(root, lake):
    lake.create_namespace("big")
    with lake.transaction() as txn:
        for i in range(BIG):
            txn.create_table("big", f"t{i:05d}")
        txn.create_view("big", "v0")
    fs = make_fs(root)  # a cold process: empty caches
    stats = fs.lake.storage.stats
    stats.reset()
    names = fs.ls("/big", detail=False)
    assert len(names) == BIG + 1 and names[0] == "/big/t00000" and names[-1] == "/big/v0"
    counts = stats.snapshot()
    # the hint, the oldest marker, the probes, the root, the lakehouse def and the tree
    # nodes on the scanned range: a few dozen files, never one per table
    assert counts["read"] < 40, counts
    stats.reset()
    assert len(fs.ls("/big", sizes=True)) == BIG + 1
    assert stats.snapshot()["read"] >= BIG  # sizes read every definition


def test_latest_listing_is_cached_and_revalidated(sample, root):
    fs = sample
    stats = fs.lake.storage.stats
    fs.ls("/sales")
    stats.reset()
    fs.ls("/sales")
    counts = stats.snapshot()
    # only the version probe: markers and root existence, no node or definition read
    assert counts["read"] <= 2 and counts["read_cached_hit"] == 0, counts
    other = make_fs(root)
    other.pipe("/sales/new", b"")  # another writer: the probe sees a new version
    assert "/sales/new" in fs.ls("/sales", detail=False)


def test_listing_invalidated_by_own_write(sample):
    fs = sample
    assert fs.ls("/staging") == []
    fs.pipe("/staging/t", b"")
    assert fs.ls("/staging", detail=False) == ["/staging/t"]
    fs.rm("/staging/t")
    assert fs.ls("/staging") == []


def test_fixed_version_listing_is_cached_without_requests(sample):
    fs = sample
    first = fs.ls("/v/3/sales")
    stats = fs.lake.storage.stats
    stats.reset()
    assert fs.ls("/v/3/sales") == first
    assert stats.snapshot()["requests"] == 0


def test_invalidate_cache(sample, monkeypatch):
    fs = sample
    scans = []
    real = fs._list
    monkeypatch.setattr(fs, "_list", lambda t: scans.append(t.p.path) or real(t))
    fs.ls("/v/3/sales")
    fs.ls("/v/3/sales")
    assert scans == ["/v/3/sales"]
    fs.invalidate_cache("/v/3")
    fs.ls("/v/3/sales")
    assert scans == ["/v/3/sales", "/v/3/sales"]
    fs.invalidate_cache()
    assert fs.ls("/sales", detail=False) == ["/sales/big_orders", "/sales/orders"]


def test_walk(sample):
    walked = {top: (dirs, files) for top, dirs, files in sample.walk("/")}
    assert walked["/"] == (["sales", "staging"], [])
    assert walked["/sales"] == ([], ["big_orders", "orders"])


def _buffered_messages_by_level(lake) -> list[int]:
    snap = lake.snapshot().snapshot  # the tree under the catalog view
    counts: list[int] = []
    level = [snap.root]
    while level:
        counts.append(sum(len(node.buffer) for node in level))
        level = [snap.nodes.resolve(c) for node in level for c in node.children or ()]
    return counts


def test_names_only_ls_applies_buffered_changes_at_every_level(tmp_path):
    """Creates and drops still in the root's and internal nodes' buffers show in a
    names-only listing of many pages (tables and views merged by name), as in the
    detailed listing and the catalog's paged lists."""
    path = str(tmp_path / "lake")
    lake = Lakehouse.create(path, storage_options=NO_FSYNC, order=8, node_file_max_size_bytes=4096)
    lake.create_namespace("ns")
    expected = {f"t{i:05d}": "table" for i in range(2500)}
    with lake.transaction() as txn:
        for name in expected:
            txn.create_table("ns", name)
    for j in range(40):
        if j % 2:
            lake.drop_table("ns", f"t{j * 61:05d}")
            del expected[f"t{j * 61:05d}"]
        else:
            lake.create_table("ns", f"t{j * 61:05d}x")
            expected[f"t{j * 61:05d}x"] = "table"
        if j % 5 == 0:
            lake.create_view("ns", f"t{j * 50:05d}v", None)
            expected[f"t{j * 50:05d}v"] = "view"
    lake.drop_view("ns", "t00500v")
    del expected["t00500v"]
    buffered = _buffered_messages_by_level(lake)
    assert buffered[0] > 0 and buffered[1] > 0 and buffered[2] > 0, buffered
    names = sorted(expected)
    fs = make_fs(path)
    assert fs.ls("/ns", detail=False) == [f"/ns/{n}" for n in names]
    assert [(e["name"], e["kind"]) for e in make_fs(path).ls("/ns")] == [
        (f"/ns/{n}", expected[n]) for n in names
    ]
    snap = Lakehouse.open(path).snapshot()
    tables = [n for n in names if expected[n] == "table"]
    assert snap.list_tables("ns") == tables
    assert snap.list_views("ns") == [n for n in names if expected[n] == "view"]
    for after, limit in [(None, 1000), (tables[999], 1000), ("t00061", 5), ("t01830x", 3)]:
        start = 0 if after is None else bisect.bisect_right(tables, after)
        assert snap.list_tables("ns", start_after=after, limit=limit) == tables[start:][:limit]


def test_root_listing_names_and_entries_of_many_namespaces(fs, lake):
    """`/` hides a namespace "v" (it is /v/latest/v); names are encoded; the names-only
    and detailed listings agree, bulk-loaded and buffered namespaces alike."""
    with lake.transaction() as txn:
        for i in range(1500):
            txn.create_namespace(f"n{i:04d}")
    for ns in ("v", "a%b", "c/d", "zz"):
        lake.create_namespace(ns)
    lake.drop_namespace("n0007")
    version = lake.latest_version()
    spaces = sorted(["v", "a%b", "c/d", "zz", *(f"n{i:04d}" for i in range(1500))])
    spaces.remove("n0007")
    encoded = {"a%b": "a%25b", "c/d": "c%2Fd"}
    for root, hidden in (("/", {"v"}), ("/v/latest", set())):
        base = root.rstrip("/")
        paths = [f"{base}/{encoded.get(ns, ns)}" for ns in spaces if ns not in hidden]
        assert fs.ls(root, detail=False) == paths
        assert make_fs(fs.root).ls(root) == [
            {"name": path, "type": "directory", "size": 0, "kind": "namespace", "version": version}
            for path in paths
        ]
