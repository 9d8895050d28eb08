"""`_latest_hint.txt` is advisory (FORMAT.md: readers probe the roots it points to), but
a store answering an error for that one file (a persistent 500 on S3 after the retries,
found by txn5's fault probe) made `Lakehouse.open` and every cold `latest_version` fail
with StorageError. The hint is now passed over with a warning and the latest version is
found from the oldest marker, as when the hint is missing."""

from __future__ import annotations

import logging

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import StorageError
from trinityfs.format.paths import LATEST_HINT
from trinityfs.storage import Storage


@pytest.fixture
def failing_hint(monkeypatch):
    real = Storage.read_if_regular

    def read_if_regular(self, location, *args, **kwargs):
        if location == LATEST_HINT:
            raise StorageError(f"read of {location!r} failed: 500 InternalError")
        return real(self, location, *args, **kwargs)

    monkeypatch.setattr(Storage, "read_if_regular", read_if_regular)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_open_and_latest_pass_over_an_unreadable_hint(tmp_path, failing_hint):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    for i in range(5):
        lake.create_namespace(f"ns{i}")
    records = _Records()
    logger = logging.getLogger("trinityfs.txn.roots")  # other tests may stop propagation
    logger.addHandler(records)
    try:
        fresh = Lakehouse.open(root)
        assert fresh.latest_version() == 5
        assert fresh.list_namespaces() == [f"ns{i}" for i in range(5)]
    finally:
        logger.removeHandler(records)
    assert any(LATEST_HINT in m for m in records.messages), records.messages
    assert fresh.create_namespace("more") == 6
