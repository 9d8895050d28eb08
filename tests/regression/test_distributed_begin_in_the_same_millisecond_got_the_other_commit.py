"""Regression: two begins of one transaction id in the same millisecond on the same base
were indistinguishable (a commit is recognized by the id and `began`: began_at_millis
and the beginning root). When the first was committed, above that base, before the
second created its file (its begin took the base and the time first), the second's
commit found the first's root and said "already committed as version N": its changes
never landed, and the caller was told they had. A random nonce would need a field
TransactionDef does not have (FORMAT.md), so instead a begin of a given id checks,
right after creating its file, that no version above its base names that id and that
beginning, and otherwise begins again on a newer base, in a later millisecond.
"""

from __future__ import annotations

from trinityfs import Lakehouse
from trinityfs.lifecycle import dtxn
from trinityfs.lifecycle.dtxn import transaction_location

CREATES = ("create_if_absent", "create_if_absent_after", "create_noting_identity")


def test_a_begin_beside_an_identical_committed_one_commits_its_own_changes(
    where, monkeypatch
) -> None:
    url, options = where
    lake = Lakehouse.create(url, storage_options=options)
    lake.create_namespace("ns")  # version 1, the base of both
    other = Lakehouse.open(lake.url, storage_options=options)
    real_now = dtxn.now_millis
    frozen = real_now()
    monkeypatch.setattr(dtxn, "now_millis", lambda: frozen)  # both begin in one millisecond
    backend = lake.engine.storage.backend
    location = transaction_location("t1")
    raced: list[int] = []

    def hook(real):
        def create(loc, *args, **kwargs):
            if loc == location and not raced:
                # between this begin's snapshot and the create of its file, another
                # process begins the same id on the same base, and commits it
                theirs = other.begin_distributed(txn_id="t1")
                theirs.create_table("ns", "theirs")
                raced.append(theirs.commit())
                monkeypatch.setattr(dtxn, "now_millis", real_now)
            return real(loc, *args, **kwargs)

        return create

    for name in CREATES:
        if hasattr(backend, name):
            setattr(backend, name, hook(getattr(backend, name)))
    mine = lake.begin_distributed(txn_id="t1")
    assert raced == [2]
    mine.create_table("ns", "mine")
    version = mine.commit()
    assert version == 3
    assert sorted(lake.at(version=version).list_tables("ns")) == ["mine", "theirs"]
