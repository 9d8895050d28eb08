"""TrinityCatalog: PyIceberg tables whose catalog is a TrinityLake lakehouse."""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceNotEmptyError,
    NoSuchIcebergTableError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import SortField, SortOrder
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from trinityfs import Lakehouse
from trinityfs.catalog import ObjectRef
from trinityfs.errors import LakehouseNotFoundError, ReadOnlyError
from trinityfs.format.trinitylake_pb2 import DataType
from trinityfs.iceberg import (
    METADATA_LOCATION,
    PREVIOUS_METADATA_LOCATION,
    TrinityCatalog,
    UnsupportedIdentifierError,
    from_tabledef_schema,
    to_tabledef_schema,
)

IMPL = "trinityfs.iceberg.TrinityCatalog"

ORDERS = pd.DataFrame(
    {
        "order_id": pd.array([1, 2, 3, 4], dtype="int64"),
        "customer": ["ann", "bob", None, "cy"],
        "amount": [12.5, 7.0, 30.25, None],
        "paid": [True, False, True, None],
        "day": [date(2026, 1, 1), date(2026, 1, 2), None, date(2026, 1, 4)],
        "at": pd.to_datetime(
            ["2026-01-01T10:00:00Z", "2026-01-02T11:30:00Z", None, "2026-01-04T00:00:01Z"]
        ),
    }
)


def arrow(df: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(df, preserve_index=False)


def files_under(path: Path) -> set[Path]:
    return {p for p in path.rglob("*") if p.is_file()}


# -- loading --------------------------------------------------------------------------


def test_load_catalog_defaults_and_errors(lake_root, tmp_path):
    cat = load_catalog("lake", **{"py-catalog-impl": IMPL, "root": lake_root})
    assert isinstance(cat, TrinityCatalog)
    # table data lives inside the root, under a prefix GC never touches
    assert cat.properties["warehouse"] == Lakehouse.open(lake_root).url + "warehouse"
    assert cat.current_version() == 0 and not cat.read_only

    with pytest.raises(ValueError, match="root"):
        TrinityCatalog("lake")
    with pytest.raises(LakehouseNotFoundError, match="create"):
        TrinityCatalog("lake", root=str(tmp_path / "nothing"))
    made = TrinityCatalog("lake", root=str(tmp_path / "new"), create="true")
    assert made.lakehouse.latest_version() == 0
    with pytest.raises(ValueError, match="not both"):
        TrinityCatalog("lake", root=lake_root, version="0", timestamp="0")


# -- pandas round trip, append, overwrite -------------------------------------------


def test_pandas_round_trip_append_overwrite(catalog):
    lake = catalog.lakehouse
    tbl = catalog.create_table("sales.orders", schema=arrow(ORDERS).schema)
    v_created = lake.latest_version()

    tbl.append(arrow(ORDERS))
    assert lake.latest_version() == v_created + 1  # one catalog commit per table commit
    back = catalog.load_table("sales.orders").scan().to_pandas()
    pd.testing.assert_frame_equal(back, ORDERS, check_dtype=False)

    tbl.append(arrow(ORDERS.iloc[:2]))
    assert len(catalog.load_table("sales.orders").scan().to_pandas()) == 6

    new = ORDERS.iloc[1:3].reset_index(drop=True)
    tbl.overwrite(arrow(new))
    v_over = lake.latest_version()
    assert v_over == v_created + 3
    back = catalog.load_table("sales.orders").scan().to_pandas()
    pd.testing.assert_frame_equal(back, new, check_dtype=False)

    # a filtered scan and a partial overwrite
    got = catalog.load_table("sales.orders").scan(row_filter="order_id == 2").to_pandas()
    assert got["order_id"].tolist() == [2]
    tbl.overwrite(arrow(ORDERS.iloc[:1]), overwrite_filter="order_id == 2")
    ids = sorted(catalog.load_table("sales.orders").scan().to_pandas()["order_id"].tolist())
    assert ids == [1, 3]


def test_table_def_mirrors_schema_and_pointers(catalog):
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), doc="who"),
        NestedField(3, "price", DecimalType(10, 2)),
        NestedField(4, "ts", TimestamptzType()),
        NestedField(5, "local_ts", TimestampType()),
        NestedField(6, "day", DateType()),
        NestedField(7, "tod", TimeType()),
        NestedField(8, "key", UUIDType()),
        NestedField(9, "hash", FixedType(8)),
        NestedField(10, "blob", BinaryType()),
        NestedField(11, "ok", BooleanType()),
        NestedField(12, "f", FloatType()),
        NestedField(13, "d", DoubleType()),
        NestedField(14, "i", IntegerType()),
        NestedField(15, "tags", ListType(16, StringType(), element_required=False)),
        NestedField(17, "attrs", MapType(18, StringType(), 19, LongType(), value_required=True)),
        NestedField(20, "addr", StructType(NestedField(21, "city", StringType(), required=True))),
        identifier_field_ids=[1],
    )
    spec = PartitionSpec(PartitionField(4, 1000, DayTransform(), "ts_day"))
    order = SortOrder(SortField(source_id=2, transform=IdentityTransform()))
    tbl = catalog.create_table("sales.wide", schema, partition_spec=spec, sort_order=order)

    tdef = catalog.lakehouse.describe_table("sales", "wide")
    assert tdef.table_format == "ICEBERG" and tdef.table_type == "MANAGED"
    assert tdef.format_properties[METADATA_LOCATION] == tbl.metadata_location
    assert PREVIOUS_METADATA_LOCATION not in tdef.format_properties
    assert list(tdef.primary_keys) == [1]
    assert list(tdef.distribution_keys) == [4]
    assert list(tdef.sort_keys) == [2]
    cols = {c.name: c for c in tdef.schema.columns}
    actual = tbl.schema()  # PyIceberg assigns fresh field ids at creation
    assert [c.id for c in tdef.schema.columns] == [f.field_id for f in actual.fields]
    expect = {
        "id": DataType.INT8,
        "name": DataType.VARCHAR,
        "price": DataType.DECIMAL,
        "ts": DataType.TIMESTAMPTZ6,
        "local_ts": DataType.TIMESTAMP6,
        "day": DataType.DATE,
        "tod": DataType.TIME6,
        "key": DataType.FIXED,
        "hash": DataType.FIXED,
        "blob": DataType.BINARY,
        "ok": DataType.BOOLEAN,
        "f": DataType.FLOAT4,
        "d": DataType.FLOAT8,
        "i": DataType.INT4,
        "tags": DataType.LIST,
        "attrs": DataType.MAP,
        "addr": DataType.STRUCT,
    }
    assert {n: c.type for n, c in cols.items()} == expect
    assert not cols["id"].nullable and cols["name"].nullable
    assert cols["name"].properties["doc"] == "who"
    assert dict(cols["price"].properties) == {
        "iceberg.type": "decimal(10, 2)",
        "precision": "10",
        "scale": "2",
    }
    assert cols["key"].properties["iceberg.type"] == "uuid"
    assert cols["hash"].properties["length"] == "8"
    assert cols["tags"].list_element.id == actual.find_field("tags").field_type.element_id
    assert cols["attrs"].map_key.id == actual.find_field("attrs").field_type.key_id
    assert not cols["attrs"].map_value.nullable
    assert cols["addr"].struct_fields[0].name == "city"
    # the mapping is lossless
    assert from_tabledef_schema(tdef.schema) == Schema(*actual.fields)
    assert to_tabledef_schema(from_tabledef_schema(tdef.schema)) == tdef.schema

    # schema evolution: the mirror follows, the previous pointer is kept
    first = tbl.metadata_location
    with tbl.update_schema() as update:
        update.add_column("note", StringType())
    tdef = catalog.lakehouse.describe_table("sales", "wide")
    assert tdef.format_properties[PREVIOUS_METADATA_LOCATION] == first
    assert tdef.format_properties[METADATA_LOCATION] == tbl.metadata_location != first
    assert tdef.schema.columns[-1].name == "note"


# -- commits: compare-and-swap, PyIceberg's retry, concurrency ----------------------


def _one_row(i: int) -> pa.Table:
    return pa.table({"n": pa.array([i], pa.int64())})


def test_stale_table_object_is_retried_by_pyiceberg(catalog):
    a = catalog.create_table("sales.t", schema=_one_row(0).schema)
    b = catalog.load_table("sales.t")
    a.append(_one_row(1))
    b.append(_one_row(2))  # requirement fails on b's stale snapshot -> PyIceberg retries
    rows = sorted(catalog.load_table("sales.t").scan().to_pandas()["n"])
    assert rows == [1, 2]

    with a.transaction() as txn:
        txn.set_properties({"commit.retry.num-retries": "0"})
    stale = catalog.load_table("sales.t")
    a.refresh().append(_one_row(3))
    with pytest.raises(CommitFailedException):
        stale.append(_one_row(4))


def test_lost_race_inside_the_catalog_commit(catalog, open_catalog, monkeypatch):
    """A commit landing between reading the pointer and swapping it: the catalog commit
    conflicts (compare-and-swap), CommitFailedException, PyIceberg retries: both land."""
    tbl = catalog.create_table("sales.t", schema=_one_row(0).schema)
    other = open_catalog()
    real_write = TrinityCatalog._write_metadata
    raced = []

    def racing_write(metadata, io, path):
        real_write(metadata, io, path)
        if not raced:
            raced.append(path)
            other.load_table("sales.t").append(_one_row(99))  # lands first

    monkeypatch.setattr(catalog, "_write_metadata", racing_write)
    before = catalog.lakehouse.latest_version()
    tbl.append(_one_row(1))
    assert sorted(catalog.load_table("sales.t").scan().to_pandas()["n"]) == [1, 99]
    assert catalog.lakehouse.latest_version() == before + 2
    # the metadata file of the attempt that lost was removed
    assert not Path(raced[0].removeprefix("file://")).exists()


def test_lost_race_without_requirements_raises_commit_failed(catalog, open_catalog, monkeypatch):
    tbl = catalog.create_table("sales.t", schema=_one_row(0).schema)
    other = open_catalog()
    real_write = TrinityCatalog._write_metadata

    def racing_write(metadata, io, path):
        real_write(metadata, io, path)
        other.load_table("sales.t").append(_one_row(99))

    monkeypatch.setattr(catalog, "_write_metadata", racing_write)
    from pyiceberg.table.update import SetPropertiesUpdate

    with pytest.raises(CommitFailedException, match="lost a race"):
        catalog.commit_table(tbl, (), (SetPropertiesUpdate(updates={"k": "v"}),))


def test_concurrent_appends_from_threads_lose_nothing(catalog, open_catalog):
    """Four writers, PyIceberg's default retry budget. Under load a writer can exhaust
    it: PyIceberg backs a loser off 100 ms, 200 ms, ... (10% jitter) while each winner
    goes straight on to its next append, so one writer may lose 5 rounds in a row and get
    CommitFailedException. That is starvation, not a race: every lost round names a
    commit that landed to the same table inside the loser's window (checked while
    investigating, 2026-11-23). The property that matters, and what this asserts: an
    append that raised landed nothing, an acknowledged one landed exactly once, as its
    own catalog version. Writers retry like an application would."""
    catalog.create_table("sales.t", schema=_one_row(0).schema)
    start = catalog.lakehouse.latest_version()
    acked: list[int] = []
    errors: list[str] = []
    lock = threading.Lock()

    def worker(w: int) -> None:
        cat = open_catalog()
        for i in range(3):
            for _ in range(50):
                try:
                    cat.load_table("sales.t").append(_one_row(w * 10 + i))
                except CommitFailedException:
                    continue  # lost every round of PyIceberg's retries: nothing landed
                except BaseException as exc:  # pragma: no cover - reported below
                    errors.append(f"{w}/{i}: {type(exc).__name__}: {exc}")
                    return
                with lock:
                    acked.append(w * 10 + i)
                break
            else:  # pragma: no cover
                errors.append(f"{w}/{i}: never committed")

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(acked) == sorted(w * 10 + i for w in range(4) for i in range(3))
    tbl = catalog.load_table("sales.t")
    assert sorted(tbl.scan().to_pandas()["n"]) == sorted(acked)  # each exactly once
    assert len(tbl.metadata.snapshots) == 12
    lake, target = catalog.lakehouse, ObjectRef("sales", "t", "table")
    replaced = [
        v
        for v in range(start + 1, lake.latest_version() + 1)
        if any(c.object == target and c.action == "replaced" for c in lake.changes(v))
    ]
    assert len(replaced) == 12 == lake.latest_version() - start


# -- multi-table transactions -------------------------------------------------------


def test_multi_table_transaction_is_one_version(catalog, open_catalog):
    catalog.create_table("sales.a", schema=_one_row(0).schema)
    catalog.create_table("sales.b", schema=_one_row(0).schema)
    lake = catalog.lakehouse
    before = lake.latest_version()
    with catalog.multi_table_transaction() as mt:
        a, b = mt.load_table("sales.a"), mt.load_table("sales.b")
        a.append(_one_row(1))
        a.append(_one_row(2))
        b.append(_one_row(3))
        c = mt.create_table("sales.c", schema=_one_row(0).schema)
        c.append(_one_row(4))
        # staged: visible inside, not outside
        assert len(mt.load_table("sales.a").scan().to_pandas()) == 2
        assert len(open_catalog().load_table("sales.a").scan().to_pandas()) == 0
        assert not open_catalog().table_exists("sales.c")
    assert mt.committed_version == before + 1 == lake.latest_version()
    changed = {(c.action, c.object.name) for c in lake.changes(mt.committed_version)}
    assert changed == {("replaced", "a"), ("replaced", "b"), ("created", "c")}
    fresh = open_catalog()
    assert sorted(fresh.load_table("sales.a").scan().to_pandas()["n"]) == [1, 2]
    assert fresh.load_table("sales.b").scan().to_pandas()["n"].tolist() == [3]
    assert fresh.load_table("sales.c").scan().to_pandas()["n"].tolist() == [4]


def test_multi_table_transaction_failure_changes_nothing(catalog, lake_root):
    catalog.create_table("sales.a", schema=_one_row(0).schema)
    before_files = files_under(Path(lake_root) / "warehouse")
    before = catalog.lakehouse.latest_version()
    with pytest.raises(RuntimeError, match="boom"), catalog.multi_table_transaction() as mt:
        mt.load_table("sales.a").append(_one_row(1))
        mt.create_table("sales.new", schema=_one_row(0).schema).append(_one_row(2))
        raise RuntimeError("boom")
    assert catalog.lakehouse.latest_version() == before
    assert not catalog.table_exists("sales.new")
    assert files_under(Path(lake_root) / "warehouse") == before_files  # files removed


def test_multi_table_transaction_conflict(catalog, open_catalog, lake_root):
    catalog.create_table("sales.a", schema=_one_row(0).schema)
    mt = catalog.multi_table_transaction()
    mt.load_table("sales.a").append(_one_row(1))
    open_catalog().load_table("sales.a").append(_one_row(2))  # commits first
    after_other = files_under(Path(lake_root) / "warehouse")
    with pytest.raises(CommitFailedException, match="multi-table"):
        mt.commit()
    assert catalog.load_table("sales.a").scan().to_pandas()["n"].tolist() == [2]
    leftover = files_under(Path(lake_root) / "warehouse") - after_other
    assert leftover == set()


# -- time travel ----------------------------------------------------------------------


def test_pinned_catalog_reads_old_tables_and_is_read_only(catalog, open_catalog):
    tbl = catalog.create_table("sales.t", schema=_one_row(0).schema)
    tbl.append(_one_row(1))
    v1 = catalog.lakehouse.latest_version()
    t1 = datetime.fromtimestamp(catalog.lakehouse.version_info(v1).created_at_millis / 1000, UTC)
    tbl.append(_one_row(2))
    catalog.drop_table("sales.t")

    for old in (
        open_catalog(version=str(v1)),
        open_catalog(timestamp=t1.isoformat()),
        open_catalog(timestamp=str(int(t1.timestamp() * 1000))),
        catalog.at(v1),
    ):
        assert old.read_only and old.pinned_version == v1
        assert old.load_table("sales.t").scan().to_pandas()["n"].tolist() == [1]
        assert old.list_tables("sales") == [("sales", "t")]
        with pytest.raises(ReadOnlyError, match="read-only"):
            old.load_table("sales.t").append(_one_row(3))
        with pytest.raises(ReadOnlyError):
            old.create_namespace("x")
        with pytest.raises(ReadOnlyError):
            old.multi_table_transaction()
    with pytest.raises(NoSuchTableError):
        catalog.load_table("sales.t")


def test_table_version(catalog):
    tbl = catalog.create_table("sales.t", schema=_one_row(0).schema)
    tbl.append(_one_row(1))
    v = catalog.lakehouse.latest_version()
    catalog.create_namespace("other")
    assert catalog.table_version("sales.t") == v
    assert catalog.at(v - 1).table_version("sales.t") == v - 1


# -- identifiers, namespaces, other objects ---------------------------------------------


def test_two_levels_only(catalog):
    with pytest.raises(UnsupportedIdentifierError, match="one level"):
        catalog.create_namespace(("a", "b"))
    with pytest.raises(UnsupportedIdentifierError, match="exactly two"):
        catalog.load_table("a.b.c")
    with pytest.raises(UnsupportedIdentifierError):
        catalog.create_table(("a", "b", "c"), schema=_one_row(0).schema)
    with pytest.raises(NoSuchNamespaceError, match="no namespace"):
        catalog.create_table("lonely", schema=_one_row(0).schema)
    assert catalog.list_namespaces() == [("sales",)]
    assert catalog.list_namespaces("sales") == []


def test_namespaces_and_table_lifecycle(catalog, open_catalog):
    lake = catalog.lakehouse
    assert catalog.load_namespace_properties("sales") == {"owner": "analytics"}
    summary = catalog.update_namespace_properties("sales", {"owner", "gone"}, {"tier": "gold"})
    assert (summary.removed, summary.updated, summary.missing) == (["owner"], ["tier"], ["gone"])
    assert dict(lake.describe_namespace("sales").properties) == {"tier": "gold"}
    catalog.create_namespace("bare")
    assert catalog.load_namespace_properties("bare") == {}
    with pytest.raises(ValueError, match="strings"):
        catalog.create_namespace("bad", {"k": None})
    catalog.drop_namespace("bare")

    tbl = catalog.create_table("sales.t", schema=_one_row(0).schema)
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("sales.t", schema=_one_row(0).schema)
    with pytest.raises(NamespaceNotEmptyError, match="sales"):
        catalog.drop_namespace("sales")
    catalog.create_namespace("archive")
    moved = catalog.rename_table("sales.t", "archive.t2")
    assert moved.metadata_location == tbl.metadata_location
    assert catalog.list_tables("archive") == [("archive", "t2")]

    # register the same metadata under another name: an EXTERNAL table
    reg = catalog.register_table("sales.copy", tbl.metadata_location)
    assert reg.metadata_location == tbl.metadata_location
    assert lake.describe_table("sales", "copy").table_type == "EXTERNAL"
    catalog.drop_table("sales.copy")
    with pytest.raises(NoSuchTableError, match=r"sales\.copy"):
        catalog.load_table("sales.copy")

    # a TrinityLake table that is not an Iceberg table
    lake.create_table("sales", "plain", {"table_format": "DELTA"})
    with pytest.raises(NoSuchIcebergTableError, match="not an Iceberg table"):
        catalog.load_table("sales.plain")
    assert catalog.list_views("sales") == []


# -- storage: memory, S3, and what GC leaves alone ------------------------------------


def test_memory_root_round_trip():
    root = f"memory://lake-{uuid.uuid4().hex}"
    cat = TrinityCatalog("mem", root=root, create="true")
    assert cat.properties["warehouse"].startswith("memory://")
    cat.create_namespace("m")
    tbl = cat.create_table("m.t", schema=arrow(ORDERS).schema)
    tbl.append(arrow(ORDERS))
    back = cat.load_table("m.t").scan().to_pandas()
    pd.testing.assert_frame_equal(back, ORDERS, check_dtype=False)


@pytest.mark.s3
def test_s3_round_trip(s3_storage_options, s3_bucket):
    root = f"s3://{s3_bucket}/lake-{uuid.uuid4().hex}"
    Lakehouse.create(root, storage_options=s3_storage_options)
    cat = load_catalog(
        "lake",
        **{
            "py-catalog-impl": IMPL,
            "root": root,
            "storage-options": json.dumps(s3_storage_options),
        },
    )
    assert cat.properties["warehouse"] == root + "/warehouse"
    assert cat.properties["s3.endpoint"] == s3_storage_options["client_kwargs"]["endpoint_url"]
    cat.create_namespace("s")
    tbl = cat.create_table("s.orders", schema=arrow(ORDERS).schema)
    tbl.append(arrow(ORDERS))
    assert tbl.metadata_location.startswith(root + "/warehouse/s/orders/metadata/")
    # the same catalog from PyIceberg's s3.* properties alone
    endpoint = s3_storage_options["client_kwargs"]["endpoint_url"]
    again = load_catalog(
        "lake2",
        **{
            "py-catalog-impl": IMPL,
            "root": root,
            "s3.endpoint": endpoint,
            "s3.access-key-id": "testing",
            "s3.secret-access-key": "testing",
            "s3.region": "us-east-1",
        },
    )
    back = again.load_table("s.orders").scan().to_pandas()
    pd.testing.assert_frame_equal(back, ORDERS, check_dtype=False)


def test_expiration_never_deletes_iceberg_files(catalog, lake_root):
    lake = catalog.lakehouse
    if not hasattr(lake, "expire"):
        pytest.skip("this build has no expiration")
    tbl = catalog.create_table("sales.t", schema=arrow(ORDERS).schema)
    for _ in range(3):
        tbl.append(arrow(ORDERS))
    catalog.drop_table("sales.t")
    warehouse = files_under(Path(lake_root) / "warehouse")
    assert any(p.suffix == ".parquet" for p in warehouse)
    from expire_clock import expiring_later  # past the grace floor (longest commit)

    with expiring_later():
        report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert report.files_removed > 0  # the catalog's own files were collected
    assert files_under(Path(lake_root) / "warehouse") == warehouse
    # the dropped table's data is still readable from its metadata file
    from pyiceberg.table import StaticTable

    static = StaticTable.from_metadata(tbl.metadata_location)
    assert len(static.scan().to_pandas()) == 3 * len(ORDERS)


def test_decimal_and_time_values_round_trip(catalog):
    data = pa.table(
        {
            "price": pa.array([Decimal("1.25"), None], pa.decimal128(10, 2)),
            "at": pa.array([datetime(2026, 3, 1, 12, tzinfo=UTC), None], pa.timestamp("us", "UTC")),
        }
    )
    tbl = catalog.create_table("sales.money", schema=data.schema)
    tbl.append(data)
    assert catalog.load_table("sales.money").scan().to_arrow().equals(data)


def test_docs_pyiceberg_example_runs_as_written(tmp_path, monkeypatch, capsys):
    import re

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    code = re.search(r"### PyIceberg\n\n```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["mt"].committed_version == Lakehouse.open("./lakehouse").latest_version()
    assert len(scope["old"].load_table("sales.orders").scan().to_pandas()) == 2
    assert "order_id" in capsys.readouterr().out
