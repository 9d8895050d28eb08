"""find, glob and du: one range scan over the catalog, never one ls per directory."""

from __future__ import annotations

import pytest


@pytest.fixture
def wide(sample, lake):
    with lake.transaction() as txn:
        for n in range(5):
            txn.create_namespace(f"ns{n}")
            for t in range(3):
                txn.create_table(f"ns{n}", f"t{t}")
        txn.create_view("ns0", "view")
    return sample


def no_ls(monkeypatch, fs):
    def boom(*args, **kwargs):
        raise AssertionError("ls called")

    monkeypatch.setattr(fs, "ls", boom)
    monkeypatch.setattr(fs, "walk", boom)


def test_find_everything(wide, monkeypatch):
    no_ls(monkeypatch, wide)
    found = wide.find("/")
    assert len(found) == 5 * 3 + 1 + 2
    assert found == sorted(found)
    assert found[:2] == ["/ns0/t0", "/ns0/t1"] and "/sales/orders" in found
    with_dirs = wide.find("/", withdirs=True)
    assert "/ns3" in with_dirs and "/staging" in with_dirs and "/" not in with_dirs
    assert wide.find("/", maxdepth=1) == []
    assert wide.find("/", maxdepth=1, withdirs=True) == [f"/ns{n}" for n in range(5)] + [
        "/sales",
        "/staging",
    ]


def test_find_detail(wide):
    detail = wide.find("/ns0", detail=True)
    assert set(detail) == {"/ns0/t0", "/ns0/t1", "/ns0/t2", "/ns0/view"}
    assert detail["/ns0/view"]["kind"] == "view" and detail["/ns0/view"]["size"] is None
    sized = wide.find("/ns0", detail=True, sizes=True)
    assert sized["/ns0/t1"]["size"] == len(wide.cat("/ns0/t1"))


def test_find_namespace_file_missing_and_old_version(wide, monkeypatch):
    no_ls(monkeypatch, wide)
    assert wide.find("/ns1") == ["/ns1/t0", "/ns1/t1", "/ns1/t2"]
    assert wide.find("/ns1", withdirs=True)[0] == "/ns1"
    assert wide.find("/ns1/t0") == ["/ns1/t0"]
    assert wide.find("/nope") == []
    assert wide.find("/v/2") == ["/v/2/sales/orders"]
    assert wide.find("/v/2", withdirs=True) == ["/v/2", "/v/2/sales", "/v/2/sales/orders"]


def test_find_over_versions(sample):
    found = sample.find("/v", maxdepth=2, withdirs=True)
    assert "/v/1/sales" in found and "/v/latest/staging" in found
    assert "/v/2/sales/orders" not in found
    assert "/v/2/sales/orders" in sample.find("/v")


def test_glob(wide, monkeypatch):
    no_ls(monkeypatch, wide)
    assert wide.glob("/ns1/*") == ["/ns1/t0", "/ns1/t1", "/ns1/t2"]
    assert wide.glob("/*/t2") == [f"/ns{n}/t2" for n in range(5)]
    assert wide.glob("/ns[0-1]") == ["/ns0", "/ns1"]
    assert wide.glob("/**/view") == ["/ns0/view"]
    assert wide.glob("/sales/*orders") == ["/sales/big_orders", "/sales/orders"]
    assert wide.glob("trinity://ns4/t?") == ["/ns4/t0", "/ns4/t1", "/ns4/t2"]
    assert wide.glob("/v/2/*/*") == ["/v/2/sales/orders"]
    assert wide.glob("/sales/orders") == ["/sales/orders"]
    assert wide.glob("/sales/nope") == []


def test_du(wide, monkeypatch):
    sizes = {path: len(wide.cat(path)) for path in wide.find("/")}
    no_ls(monkeypatch, wide)
    assert wide.du("/") == sum(sizes.values())
    assert wide.du("/ns2", total=False) == {p: s for p, s in sizes.items() if p.startswith("/ns2/")}
    with_dirs = wide.du("/ns2", total=False, withdirs=True)
    assert with_dirs["/ns2"] == 0
    assert wide.du("/sales/orders") == sizes["/sales/orders"]


def test_find_is_one_scan_not_one_per_namespace(wide, monkeypatch):
    scans = []
    real = wide._list
    monkeypatch.setattr(wide, "_list", lambda t: scans.append(t.p.path) or real(t))
    wide.find("/")
    wide.glob("/*/t1")
    wide.du("/")
    assert scans == []  # no per-directory listing at all
