"""A key whose value points at another object's definition file (written by a buggy or
hostile writer: the node file's checksum is valid, every file is intact) was read as its
own: `describe_table("ns", "t1")` answered with a view's definition (protobuf reads a
ViewDef's bytes as a TableDef) or the namespace's, and fsck found nothing, although
FORMAT.md names every definition file after its kind, namespace and object.

Now a definition file whose name says another kind is refused by every reader
(CorruptFileError naming the file: `decode_definition` checks the kind), the catalog
reader refuses one of another object of the same kind, and fsck reports a key pointing at
any other object's definition file (kind, namespace or name), naming the file and the
key's object. Names are compared only where trinityfs wrote them (a
content-hash UUID); the kind for every optimized definition path."""

from __future__ import annotations

from pathlib import Path

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import root_node_file


def _lake_pointing_t1_at(tmp_path: Path, target: str) -> Lakehouse:
    """Namespace ns, tables t1 and t2, view v1 (all in the root's buffer); then the root
    is rewritten (valid checksum) so that t1's key points at `target`'s definition."""
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t1", {"properties": {"who": "t1"}})
    lake.create_table("ns", "t2", {"properties": {"who": "t2"}})
    lake.create_view("ns", "v1", {"properties": {"sql": "select 1"}})
    name = root_node_file(lake.latest_version())
    path = Path(url) / name
    nf = decode_node(path.read_bytes(), None, name)
    by_name = {key.split()[-1]: i for i, (key, _v, _n) in enumerate(nf.buffer)}
    by_name["ns"] = by_name.pop("B===ns")  # the namespace key: its type prefix, no space
    key, _value, version = nf.buffer[by_name["t1"]]
    nf.buffer[by_name["t1"]] = (key, nf.buffer[by_name[target]][1], version)
    path.write_bytes(encode_node(nf, lake.engine.snapshot().lakehouse_def.order))
    return lake


@pytest.mark.parametrize("target", ["v1", "ns"])
def test_a_table_key_pointing_at_another_kinds_definition_is_refused(tmp_path, target):
    lake = _lake_pointing_t1_at(tmp_path, target)
    fresh = Lakehouse.open(lake.url)
    kind = "view" if target == "v1" else "namespace"
    with pytest.raises(CorruptFileError, match=rf"{kind}-ns-.*is a {kind} definition file"):
        fresh.describe_table("ns", "t1")
    assert fresh.describe_table("ns", "t2").properties["who"] == "t2"
    report = fresh.fsck()
    assert not report.ok
    assert any("table ns.t1" in p.message and kind in p.location for p in report.errors)


def test_fsck_reports_a_table_key_pointing_at_another_tables_definition(tmp_path):
    lake = _lake_pointing_t1_at(tmp_path, "t2")
    report = Lakehouse.open(lake.url).fsck()
    assert not report.ok
    [problem] = report.errors
    assert "table-ns-t2-" in problem.location
    assert "table ns.t1" in problem.message and "'table-ns-t1-'" in problem.message
    assert problem.versions  # attributed to the versions that reach it


def test_a_table_key_pointing_at_another_tables_definition_is_refused(tmp_path):
    """Same kind, another name: describe_table and the catalog's definition reads (fs
    cat, Spark, reclaim) answered t2's definition for t1."""
    lake = _lake_pointing_t1_at(tmp_path, "t2")
    fresh = Lakehouse.open(lake.url)
    with pytest.raises(CorruptFileError, match=r"table-ns-t2-.*not a definition file of table"):
        fresh.describe_table("ns", "t1")
    view = fresh.at(fresh.latest_version())
    ref = next(r for r in view.iter_objects("ns") if r.name == "t1")
    with pytest.raises(CorruptFileError, match=r"ns\.t1"):
        view.read_definition(ref, view.object_location("table", "ns", "t1"))
    assert fresh.describe_table("ns", "t2").properties["who"] == "t2"
