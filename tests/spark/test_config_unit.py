"""The Spark source on the catalog surface (issue 12), driven without a JVM: versions
chosen by the catalog's one precedence (`Lakehouse.resolve`), root / storage options /
version pin by the catalog's one configuration reader (`read_config`), and catalog errors
translated in one place (trinityfs/spark/errors.py) into typed errors naming the table."""

from __future__ import annotations

import pickle
import time
from datetime import UTC, datetime

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError, NotFoundError, ObjectNotFoundError
from trinityfs.iceberg import TrinityCatalog
from trinityfs.spark.source import TrinityLakeDataSource


def _ids(**options: str) -> list[int]:
    ds = TrinityLakeDataSource({"path": "ns.t", **options})
    reader = pickle.loads(pickle.dumps(ds.reader(ds.schema())))
    return sorted(
        i for p in reader.partitions() for b in reader.read(p) for i in b["id"].to_pylist()
    )


@pytest.fixture
def history(lake_root):
    """ns.t with rows [0], then [0, 1], then [0, 1, 2]; the catalog version after each."""
    table = TrinityCatalog("t", root=lake_root).create_table(
        "ns.t", pa.schema([pa.field("id", pa.int64())])
    )
    lake = Lakehouse.open(lake_root)
    versions, times = [], []
    for i in range(3):
        table.append(pa.table({"id": pa.array([i], pa.int64())}))
        versions.append(lake.latest_version())
        time.sleep(0.01)
        times.append(datetime.now(UTC))
        time.sleep(0.01)
    return versions, times


def test_version_option_takes_every_selector_resolve_takes(lake_root, history):
    versions, times = history
    lake = Lakehouse.open(lake_root)
    lake.export("first", versions[0])
    assert _ids(root=lake_root, version=str(versions[1])) == [0, 1]
    assert _ids(root=lake_root, version="export:first") == [0]
    assert _ids(root=lake_root, version="first") == [0]  # a bare export name
    assert _ids(root=lake_root, version="time:" + times[1].isoformat()) == [0, 1]
    assert _ids(root=lake_root, version=times[0].isoformat()) == [0]
    assert _ids(root=lake_root, version="latest") == [0, 1, 2]
    millis = str(int(times[1].timestamp() * 1000))
    assert _ids(root=lake_root, timestamp=millis) == [0, 1]
    for selector in (lake.resolve(f"time:{times[0].isoformat()}").version, "export:first"):
        assert lake.resolve(str(selector)).version in versions
    with pytest.raises(NotFoundError, match=r"option 'version'.*no-such-export"):
        _ids(root=lake_root, version="export:no-such-export")
    with pytest.raises(NotFoundError, match=r"option 'version' \('-3'\).*not 'latest'"):
        _ids(root=lake_root, version="-3")


def test_root_storage_options_and_pin_come_from_read_config(lake_root, history, monkeypatch):
    versions, _ = history
    monkeypatch.setenv("TRINITYFS_ROOT", lake_root)
    assert _ids() == [0, 1, 2]  # no root option: $TRINITYFS_ROOT
    monkeypatch.setenv("TRINITYFS_VERSION", str(versions[0]))
    assert _ids() == [0]  # the environment pins reads
    assert _ids(version=str(versions[1])) == [0, 1]  # the option wins
    schema = T.StructType([T.StructField("id", T.LongType())])
    with pytest.raises(InvalidArgumentError, match=r"TRINITYFS_VERSION|environment"):
        TrinityLakeDataSource({"path": "ns.t"}).writer(schema, False)  # never a silent write
    monkeypatch.setenv("TRINITYFS_VERSION", "latest")
    TrinityLakeDataSource({"path": "ns.t"}).writer(schema, False)  # latest is writable
    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", "{not json")
    with pytest.raises(
        InvalidArgumentError,
        match=r"storage options from the environment|TRINITYFS_STORAGE_OPTIONS",
    ):
        _ids()


def test_catalog_errors_name_the_table(lake_root):
    with pytest.raises(ObjectNotFoundError, match=r"reading ns\.nope"):
        TrinityLakeDataSource({"root": lake_root, "path": "ns.nope"}).schema()
    schema = T.StructType([T.StructField("id", T.LongType())])
    with pytest.raises(InvalidArgumentError, match=r"namespace 'nons' does not exist"):
        TrinityLakeDataSource({"root": lake_root, "path": "nons.t"}).writer(schema, False)


def test_every_typed_error_keeps_its_type_and_attributes():
    from trinityfs.errors import LocationNotAllowedError, TrinityError
    from trinityfs.spark.errors import spark_errors

    for exc in (
        LocationNotAllowedError("/etc/passwd", "location '/etc/passwd' is outside"),
        ObjectNotFoundError("no table x"),
    ):
        with pytest.raises(type(exc)) as got, spark_errors("writing ns.t"):
            raise exc
        assert str(got.value).startswith("writing ns.t: ") and isinstance(got.value, TrinityError)
        assert got.value.__dict__ == exc.__dict__


def test_readme_options_table_is_the_sources_own():
    """The README's option table is exactly OPTIONS (python -m trinityfs.spark.options)."""
    from pathlib import Path

    from trinityfs.spark.options import markdown_table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert markdown_table() in readme


def _flip_definition(lake: Lakehouse, name: str) -> str:
    """Create table ns.<name>, then flip one byte of its definition file; the file name."""
    from pathlib import Path

    lake.create_table("ns", name, {"table_format": "ICEBERG"})
    location = lake.snapshot().object_location("table", "ns", name)
    path = Path(lake.storage.url.removeprefix("file://")) / location
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
    return location.rpartition("/")[2]


def test_verify_option_is_validated_and_reaches_the_commit(lake_root, monkeypatch):
    """The source took the verify mode only from $TRINITYFS_VERIFY (an option 'verify'
    was refused as unknown)."""
    import pickle

    from pyspark.sql import types as T

    from trinityfs.errors import CorruptFileError
    from trinityfs.spark.options import READ, WRITE, parse_options
    from trinityfs.spark.write import TableWriter

    monkeypatch.delenv("TRINITYFS_VERIFY", raising=False)

    def opts(**options: str):
        return parse_options({"root": lake_root, "path": "ns.t", **options}, WRITE)

    assert opts(verify="tree").catalog["verify"] == "tree"
    assert opts(verify="READS").catalog["verify"] == "reads"
    assert opts().catalog["verify"] == "reads"
    monkeypatch.setenv("TRINITYFS_VERIFY", "tree")  # resolved on the driver, passed along
    assert opts().catalog["verify"] == "tree"
    assert opts(verify="reads").catalog["verify"] == "reads"  # the option wins
    monkeypatch.delenv("TRINITYFS_VERIFY")
    for bad in ("all", "", "none"):
        with pytest.raises(InvalidArgumentError, match=r"option 'verify': .* 'reads' or 'tree'"):
            opts(verify=bad)
    with pytest.raises(InvalidArgumentError, match=r"'verify': applies to write only"):
        parse_options({"root": lake_root, "path": "ns.t", "verify": "tree"}, READ)

    lake = Lakehouse.open(lake_root)
    victim = _flip_definition(lake, "other")  # a file a commit to ns.t never reads
    latest = lake.latest_version()
    schema = T.StructType([T.StructField("id", T.LongType(), True)])
    batch = pa.RecordBatch.from_pylist([{"id": 1}], pa.schema([pa.field("id", pa.int64())]))

    def write(**options: str) -> None:
        writer = pickle.loads(pickle.dumps(TableWriter.plan(opts(**options), schema, False)))
        message = pickle.loads(pickle.dumps(writer.write(iter([batch]))))
        writer.commit([message])

    with pytest.raises(CorruptFileError, match=victim):
        write(verify="tree")
    assert Lakehouse.open(lake_root).latest_version() == latest
    write()  # the default mode carries the damage forward: what 'tree' is for
    assert Lakehouse.open(lake_root).latest_version() > latest
