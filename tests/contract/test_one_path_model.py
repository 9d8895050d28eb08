"""trinity:// and the FUSE mount are adapters over ONE path model (trinityfs.catalog.paths),
which calls the catalog's primitives (resolve, selectors, put, move_namespace,
last_changed) instead of re-deriving them (issue 12 items 1 and 2)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trinityfs import Lakehouse
from trinityfs.catalog.paths import PathModel
from trinityfs.errors import NotFoundError, ObjectNotFoundError, VersionNotFoundError
from trinityfs.fs import TrinityFileSystem
from trinityfs.fuse.operations import TrinityOperations

PACKAGE = Path(__file__).resolve().parents[2] / "trinityfs"


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("sales", {"tier": "gold"})  # 1
    lake.create_table("sales", "orders", {"table_format": "ICEBERG"})  # 2
    lake.create_view("sales", "big", {})  # 3
    lake.export("3", version=2)  # 4
    lake.replace_table("sales", "orders", {"table_format": "DELTA"})  # 5
    return lake


def test_both_front_ends_hold_the_path_model(lake: Lakehouse) -> None:
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True)
    ops = TrinityOperations(lake, prefetch_threads=0)
    assert type(fs.model) is PathModel and type(ops.model) is PathModel


def test_selectors_resolve_by_the_catalog_precedence(lake: Lakehouse) -> None:
    model = PathModel(lake)
    assert model.place("3").version == 3 and model.place("3").export is None
    exported = model.place("export:3", "sales")
    assert exported.export == "3" and exported.version == 2 and not exported.writable
    assert [r.name for r in model.objects(exported)] == ["orders"]
    assert model.place(None).writable and model.place("latest").version == 5
    with pytest.raises(VersionNotFoundError):
        model.place("nightly")
    with pytest.raises(VersionNotFoundError):  # a bad time: no such path, not EINVAL
        model.place("time:yesterday")
    listed = [e.selector for e in model.versions()]
    assert listed == [*map(str, range(6)), "latest", "export:3"]


def test_a_version_selector_is_resolved_once(lake: Lakehouse) -> None:
    model = PathModel(lake)
    model.place("2", "sales", "orders")
    lake.storage.stats.reset()
    model.place("2", "sales", "orders")
    assert lake.storage.stats.snapshot()["requests"] == 0


def test_stat_read_and_changed_agree_with_the_catalog(lake: Lakehouse) -> None:
    model = PathModel(lake)
    place = model.place(None, "sales", "orders")
    st = model.stat(place)
    assert (st.type, st.kind, st.version) == ("file", "table", 5)
    kind, _location, data = model.read(place)
    assert kind == "table" and b"DELTA" in data
    assert model.changed(place) == lake.last_changed("sales", "orders")
    assert model.changed(place).version == 5
    assert model.changed(place, created=True).version == 2
    ns = model.stat(model.place(None, "sales"))
    assert ns.properties == {"tier": "gold"} and ns.id
    assert model.changed(model.place("export:3", "sales", "orders")) is None  # an export
    with pytest.raises(ObjectNotFoundError):
        model.stat(model.place(None, "sales", "nope"))
    with pytest.raises(NotFoundError):
        model.read(model.place("1", "sales", "orders"))


def test_writes_go_through_the_catalog_put_and_move(lake: Lakehouse) -> None:
    model = PathModel(lake)
    sales_id = lake.snapshot().describe_namespace("sales").id
    orders_id = lake.snapshot().describe_table("sales", "orders").id
    with lake.transaction() as txn:
        same = model.parse(model.read(model.place(None, "sales", "orders"))[2])
        assert model.write(txn, "sales", "orders", same).action == "unchanged"
        view = model.parse(b'{"kind": "view", "definition": {}}')
        assert model.write(txn, "sales", "orders", view).previous_kind == "table"
        model.move_namespace(txn, "sales", "shop")
    snap = lake.snapshot()
    assert snap.describe_namespace("shop").id == sales_id
    assert snap.object_kind("shop", "orders") == "view"
    assert snap.describe_view("shop", "orders").id != orders_id  # another kind: new object
    with lake.transaction() as txn:
        model.move(txn, ("shop", "big"), ("shop", "orders"))  # replaces, keeps big's id
    assert lake.snapshot().object_kind("shop", "orders") == "view"


# Patterns that meant a front end re-implemented a catalog semantic (issue 12): selector
# precedence, /v listing, namespace move, history bisection, feature sniffing, own LRUs.
FORBIDDEN = {
    r"inspect\.signature": "feature sniffing",
    r"OrderedDict": "a hand-written LRU (use trinityfs.lru.LRU)",
    r"class _LRU": "a hand-written LRU (use trinityfs.lru.LRU)",
    r"exported_snapshots": "export names (Lakehouse.resolve / selectors)",
    r"\.version_at\(": "time selectors (Lakehouse.resolve)",
    r"replace_namespace\(": "a namespace move (CatalogTransaction.move_namespace)",
    r"while lo < hi": "a history bisection (Lakehouse.last_changed)",
    r"\btxn\.rename\(": "an object move (PathModel.move)",
    r"\.isdigit\(\)": "selector parsing (trinityfs.catalog.selector)",
}


@pytest.mark.parametrize("package", ["fs", "fuse"])
def test_front_ends_do_not_reimplement_catalog_semantics(package: str) -> None:
    found = []
    for path in sorted((PACKAGE / package).glob("*.py")):
        text = path.read_text()
        for pattern, what in FORBIDDEN.items():
            if package == "fuse" and path.name == "mount.py" and pattern == r"\.isdigit\(\)":
                continue  # option values (prefetch=N, uid=N), not version selectors
            for match in re.finditer(pattern, text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.name}:{line}: {what}")
    assert not found, "\n".join(found)
    assert not (PACKAGE / "fs" / "model.py").exists()
