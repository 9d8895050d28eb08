"""The commit path sends no probe before the conditional root write (issue 13 item 4):
a one-change shortcut begins at the latest version its process confirmed within the
trust window; a lost race is detected by the conditional write and replayed; a change
refused on a stale base is redone on the probed latest version."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from trinityfs.catalog import Lakehouse
from trinityfs.errors import AlreadyExistsError, NamespaceNotFoundError, ObjectNotFoundError
from trinityfs.format.paths import LATEST_HINT, root_node_file
from trinityfs.txn.roots import HINT_INTERVAL


def _pair(tmp_path) -> tuple[Lakehouse, Lakehouse]:
    """Two processes' worth of Lakehouse objects on one lakehouse, both warm."""
    one = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    one.create_namespace("ns")
    two = Lakehouse.open(one.url, storage_options={"fsync": False})
    two.create_table("ns", "warm")
    one.latest_version()
    return one, two


def _calls(lake: Lakehouse) -> list[tuple[str, str]]:
    calls: list[tuple[str, str]] = []
    storage = lake.storage
    for op in ("read", "exists", "identity", "write", "create_if_absent", "list"):
        real = getattr(storage, op)

        def recorded(loc, *args, _op=op, _real=real, **kwargs):
            calls.append((_op, loc))
            return _real(loc, *args, **kwargs)

        setattr(storage, op, recorded)
    return calls


def test_a_one_table_commit_sends_no_probe_before_its_root(tmp_path):
    """On local disk the one probe is the stat that the base's root is still the file
    this process read (`Backend.cheap_exists`: a lakehouse replaced in place, see
    tests/regression/test_lake_replaced_in_place_*.py); the new root's identity comes
    from the create itself (an fstat of its descriptor, no request); an object store
    sends none (the next test)."""
    one, _ = _pair(tmp_path)
    calls = _calls(one)
    base = one.snapshot().version  # its root is read once (another process wrote it)
    calls.clear()
    version = one.create_table("ns", "t")
    assert version == base + 1
    probes = [c for c in calls if c[0] in ("exists", "identity", "read", "list")]
    assert probes == [("identity", root_node_file(base))]
    assert ("create_if_absent", root_node_file(version)) in calls
    assert one.describe_table("ns", "t")


def test_a_one_table_commit_on_an_object_store_sends_no_probe_before_its_root():
    url = f"memory://commit-requests-{uuid.uuid4().hex}"
    one = Lakehouse.create(url)
    one.create_namespace("ns")
    Lakehouse.open(url).create_table("ns", "warm")
    one.latest_version()
    calls = _calls(one)
    base = one.snapshot().version
    calls.clear()
    version = one.create_table("ns", "t")
    assert version == base + 1
    assert [c for c in calls if c[0] in ("exists", "read", "list")] == []
    assert ("create_if_absent", root_node_file(version)) in calls


def test_a_stale_base_is_caught_by_the_conditional_write_and_replayed(tmp_path):
    one, two = _pair(tmp_path)
    calls = _calls(one)
    base = one.latest_version()
    for i in range(3):
        two.create_table("ns", f"other{i}")
    calls.clear()
    version = one.create_table("ns", "mine")
    assert version == base + 4
    creates = [loc for op, loc in calls if op == "create_if_absent"]
    assert creates == [root_node_file(base + 1), root_node_file(base + 4)]
    snap = one.at(version)
    assert {"mine", "other0", "other1", "other2", "warm"} <= set(snap.list_tables("ns"))


def test_a_change_refused_on_a_stale_base_is_redone_on_the_latest(tmp_path):
    one, two = _pair(tmp_path)
    two.create_namespace("new")  # one does not know about it
    two.create_table("ns", "dropme")
    assert one.create_table("new", "t") > 0  # not NamespaceNotFoundError
    assert one.drop_table("ns", "dropme") > 0  # not ObjectNotFoundError
    two.drop_table("ns", "warm")
    assert one.create_table("ns", "warm") > 0  # not AlreadyExistsError
    two.set_namespace_properties("new", {"a": "1"})
    one.set_namespace_properties("new", {"a": "2"})  # redone: no stale conflict
    assert one.describe_namespace("new").properties["a"] == "2"


def test_a_real_refusal_still_fails_with_the_right_error(tmp_path):
    one, two = _pair(tmp_path)
    two.create_table("ns", "taken")
    with pytest.raises(AlreadyExistsError):
        one.create_table("ns", "taken")
    with pytest.raises(ObjectNotFoundError):
        one.drop_table("ns", "never")
    with pytest.raises(NamespaceNotFoundError):
        one.create_table("nope", "t")
    # refused on a base that was the latest: one probe, no redo
    calls = _calls(one)
    one.latest_version()
    calls.clear()
    with pytest.raises(AlreadyExistsError):
        one.create_table("ns", "taken")
    assert [op for op, _ in calls] == ["exists"]


@pytest.mark.s3
def test_s3_commit_and_warm_lookup_request_counts(s3_bucket: str, s3_storage_options: Any):
    """On a real S3 API (moto): a one-table commit <= 3 requests on average (hint
    writes amortised), a warm lookup 1, counted by the S3 client itself."""
    from test_regression_s3_read_extra_requests import count_requests

    url = f"s3://{s3_bucket}/{uuid.uuid4().hex}"
    lake = Lakehouse.create(url, storage_options=s3_storage_options)
    lake.create_namespace("ns")
    lake.create_table("ns", "first")  # the conditional-write probe of this instance
    commits = 3 * HINT_INTERVAL
    with count_requests(lake.storage) as sent:
        for i in range(commits):
            lake.create_table("ns", f"t{i}")
    assert "HeadObject" not in sent and "GetObject" not in sent, sent
    assert len(sent) / commits <= 3, sent
    assert sent.count("PutObject") >= 2 * commits  # definition + root each time
    with count_requests(lake.storage) as sent:
        for i in range(commits):
            assert lake.describe_table("ns", f"t{i}")
    assert len(sent) == commits and set(sent) == {"HeadObject"}, sent
    latest = lake.latest_version()
    hint = int(lake.storage.read(LATEST_HINT))
    assert 0 <= latest - hint < HINT_INTERVAL
    cold = Lakehouse.open(url, storage_options=s3_storage_options)
    with count_requests(cold.storage) as sent:
        assert cold.latest_version() == latest
    assert sent.count("GetObject") == 2  # both markers: a cold reader
    assert sent.count("HeadObject") <= 2 * 3 + 2, sent  # O(1) probes past the hint
