"""A distributed transaction whose saved state on storage lies was loaded and committed.

The transaction file is checked (checksum, id = name), but what it points to was taken
as it was: a staged definition pointing at the transaction's own file (deleted by the
commit), a root node file or the latest-version hint landed a version whose table
could not be read; a staged definition that is not there landed too; a running root
saved by another transaction committed that one's changes under this id; a beginning
root moved to a later version than the running root was built on committed nothing and
said "committed"; a staged lakehouse definition changing the lakehouse's id, tree order
or name limits (which `set_lakehouse_def` refuses) landed; a table staged at another
object's definition file landed and made the catalog
unreadable ("namespace 'ns' does not exist"); an unknown isolation level was committed
as SNAPSHOT; fields a newer trinityfs added were ignored; a beginning root above the
latest version was reported as "expired".

Now each is refused before anything is written, with an error naming the file, and the
lakehouse is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import (
    CorruptFileError,
    StorageFileNotFoundError,
    UnsupportedFormatVersionError,
)
from trinityfs.format.definitions import encode_definition, node_file_compression
from trinityfs.format.integrity import add_checksum_trailer, split_checksum_trailer
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF, KeyCodec
from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import (
    LATEST_HINT,
    new_lakehouse_def_location,
    new_node_location,
    root_node_file,
    transaction_location,
)
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lifecycle import dtxn
from trinityfs.tree import Node
from trinityfs.txn.engine import Engine

NO_FSYNC = {"fsync": False}
Lie = Callable[[Lakehouse], None]


def _saved(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    return lake


def _rewrite(lake: Lakehouse, txn_id: str = "t1", *, running=None, tdef=None) -> None:
    """Save a changed running root (`running(node, engine)`) and TransactionDef
    (`tdef(tdef, engine)`) for `txn_id`, with a valid checksum."""
    engine = lake.engine
    saved = dtxn.read_transaction_def(engine, txn_id)
    if running is not None:
        node = engine.roots.load_location(saved.running_root_node_file_path)
        running(node, engine)
        ldef = engine.snapshot().lakehouse_def
        node.location = None
        data = encode_node(node.to_file(), ldef.order, compression=node_file_compression(ldef))
        saved.running_root_node_file_path = new_node_location(data)
        engine.storage.write_immutable(saved.running_root_node_file_path, data)
    if tdef is not None:
        tdef(saved, engine)
    engine.storage.write(transaction_location(txn_id), dtxn.encode_transaction_def(saved))


def _staged_at(where: Callable[[Engine], str]) -> Lie:
    def lie(lake: Lakehouse) -> None:
        def point(node: Node, engine: Engine) -> None:
            (key,) = [k for k, (_v, version) in node.buffer.items() if version == 2]
            node.buffer[key] = (where(engine), 2)

        _rewrite(lake, running=point)

    return lie


def _namespace_key(engine: Engine) -> str:
    return KeyCodec.from_lakehouse_def(engine.snapshot().lakehouse_def).namespace_key("ns")


def _lakehouse_def_with(field: str, value: object) -> Lie:
    def lie(lake: Lakehouse) -> None:
        def stage(node: Node, engine: Engine) -> None:
            ldef = LakehouseDef()
            ldef.CopyFrom(engine.snapshot().lakehouse_def)
            setattr(ldef, field, value)
            data = encode_definition(ldef)
            location = new_lakehouse_def_location(data)
            engine.storage.write_immutable(location, data)
            node.system[KEY_LAKEHOUSE_DEF] = location

        _rewrite(lake, running=stage)

    return lie


def _running_root_of_another(lake: Lakehouse) -> None:
    other = lake.begin_distributed(txn_id="other")
    other.create_table("ns", "others")
    other.save()
    theirs = dtxn.read_transaction_def(lake.engine, "other").running_root_node_file_path
    _rewrite(lake, tdef=lambda t, e: setattr(t, "running_root_node_file_path", theirs))


def _beginning_moved_on(lake: Lakehouse) -> None:
    lake.create_table("ns", "meanwhile")  # version 2: the running root was built on 1
    _rewrite(lake, tdef=lambda t, e: setattr(t, "beginning_root_node_file_path", root_node_file(2)))


def _newer_fields(lake: Lakehouse) -> None:
    location = transaction_location("t1")
    body, verified = split_checksum_trailer(location, lake.engine.storage.read(location))
    assert verified
    field_31 = b"\xf8\x01\x05"  # a varint field this trinityfs does not know
    lake.engine.storage.write(location, add_checksum_trailer(body + field_31))


def _isolation(level: int) -> Lie:
    return lambda lake: _rewrite(lake, tdef=lambda t, e: setattr(t, "isolation_level", level))


def _beginning_at(version: int) -> Lie:
    def lie(lake: Lakehouse) -> None:
        where = root_node_file(version)
        _rewrite(lake, tdef=lambda t, e: setattr(t, "beginning_root_node_file_path", where))

    return lie


LIES: dict[str, tuple[Lie, type[Exception], str]] = {
    "definition at its own transaction file": (
        _staged_at(lambda e: transaction_location("t1")),
        CorruptFileError,
        "transaction file",
    ),
    "definition at a root node file": (
        _staged_at(lambda e: root_node_file(1)),
        CorruptFileError,
        "root node",
    ),
    "definition at the latest-version hint": (
        _staged_at(lambda e: LATEST_HINT),
        CorruptFileError,
        "hint",
    ),
    "definition at a lakehouse definition": (
        _staged_at(lambda e: e.snapshot().lakehouse_def_location),
        CorruptFileError,
        "lakehouse definition",
    ),
    "definition of another object": (
        _staged_at(lambda e: e.snapshot().get(_namespace_key(e))),
        CorruptFileError,
        "namespace",
    ),
    "definition that is not there": (
        _staged_at(lambda e: "0000/0000/0000/00000000-table-ns-a-gone.binpb"),
        (CorruptFileError, StorageFileNotFoundError),
        "00000000-table-ns-a-gone.binpb",
    ),
    "running root of another transaction": (
        _running_root_of_another,
        CorruptFileError,
        "'other'",
    ),
    "beginning root moved past the running root's base": (
        _beginning_moved_on,
        CorruptFileError,
        "version 1",
    ),
    "lakehouse definition with another id": (
        _lakehouse_def_with("id", "another-lakehouse"),
        CorruptFileError,
        "id",
    ),
    "lakehouse definition with another tree order": (
        _lakehouse_def_with("order", 7),
        CorruptFileError,
        "order",
    ),
    "lakehouse definition with other name limits": (
        _lakehouse_def_with("namespace_name_max_size_bytes", 3),
        CorruptFileError,
        "namespace_name_max_size_bytes",
    ),
    "isolation level from the future": (
        _isolation(7),
        UnsupportedFormatVersionError,
        "isolation level 7",
    ),
    "fields a newer trinityfs added": (
        _newer_fields,
        UnsupportedFormatVersionError,
        "newer",
    ),
    "beginning root above the latest version": (
        _beginning_at(99),
        CorruptFileError,
        "version 99",
    ),
}


@pytest.mark.parametrize("name", sorted(LIES))
def test_lying_state_is_refused_and_nothing_lands(tmp_path, name):
    lie, error, says = LIES[name]
    lake = _saved(tmp_path)
    lie(lake)
    before = Lakehouse.open(lake.url).latest_version()
    with pytest.raises(error) as raised:
        Lakehouse.open(lake.url).load_distributed("t1").commit()
    assert says in str(raised.value)
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == before
    for table in fresh.list_tables("ns"):
        fresh.describe_table("ns", table)
    for version in range(before + 1):  # (fsck reports the lying transaction itself)
        fresh.check(version)


def test_the_true_state_still_commits(tmp_path):
    lake = _saved(tmp_path)
    _rewrite(lake, running=lambda node, engine: None, tdef=lambda t, e: None)  # same content
    version = Lakehouse.open(lake.url).load_distributed("t1").commit()
    assert Lakehouse.open(lake.url).at(version).list_tables("ns") == ["a"]


def test_a_transaction_saved_without_the_new_binding_still_loads(tmp_path):
    """Running roots saved before the row named the transaction and its base."""
    lake = _saved(tmp_path)

    def old_row(node: Node, engine: Engine) -> None:
        import json

        row = json.loads(node.system[dtxn.DEPENDENCIES_ROW])
        row.pop("txn", None)
        row.pop("base", None)
        node.system[dtxn.DEPENDENCIES_ROW] = json.dumps(row)

    _rewrite(lake, running=old_row)
    version = Lakehouse.open(lake.url).load_distributed("t1").commit()
    assert Lakehouse.open(lake.url).at(version).list_tables("ns") == ["a"]
