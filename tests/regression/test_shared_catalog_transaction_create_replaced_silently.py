"""One CatalogTransaction used by two threads: `create_table` is a name check and then a
put, so two threads creating one name could both pass the check and both return, the
second silently replacing the first's definition (sequentially the second gets
AlreadyExistsError). Each write of a CatalogTransaction now holds the transaction's lock
(found by helper txn3)."""

from __future__ import annotations

import threading
import time

import trinityfs.catalog.writer as writer_module
from trinityfs import Lakehouse
from trinityfs.errors import AlreadyExistsError


def test_two_threads_creating_one_name_in_one_transaction(tmp_path, monkeypatch):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    real_place = writer_module.place_definition
    first = threading.Event()

    def slow_place(*args, **kwargs):
        if not first.is_set():  # the first writer pauses between its name check and its put
            first.set()
            time.sleep(0.3)
        return real_place(*args, **kwargs)

    monkeypatch.setattr(writer_module, "place_definition", slow_place)
    outcomes: dict[str, object] = {}
    with lake.transaction() as txn:

        def create(who: str) -> None:
            try:
                txn.create_table("ns", "t", {"properties": {"who": who}})
                outcomes[who] = "created"
            except AlreadyExistsError:
                outcomes[who] = "exists"

        a = threading.Thread(target=create, args=("a",))
        a.start()
        assert first.wait(5)
        b = threading.Thread(target=create, args=("b",))
        b.start()
        a.join(10)
        b.join(10)
    assert sorted(outcomes.values()) == ["created", "exists"], outcomes
    winner = next(who for who, what in outcomes.items() if what == "created")
    assert lake.describe_table("ns", "t").properties["who"] == winner
