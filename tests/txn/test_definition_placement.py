"""New definition files go where their directories already exist (txn/placement.py).

On local disk with fsync on, a definition in a hash directory no commit used before costs
a mkdir and an fsync of its parent; a young lakehouse paid that on most creates (5.7
fsyncs per create against 4 in steady state). Of 16 candidate names the writer keeps the
first whose directory exists.
"""

from __future__ import annotations

import os
from itertools import islice

import pytest

from trinityfs import Lakehouse
from trinityfs.format.integrity import has_content_name
from trinityfs.format.paths import definition_locations, new_definition_location
from trinityfs.txn.placement import place_definition

CREATES = 200


def _count(monkeypatch, name: str) -> list[int]:
    calls = [0]
    real = getattr(os, name)

    def counting(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, counting)
    return calls


def test_a_young_lakehouse_makes_fewer_directories_and_fsyncs(tmp_path, monkeypatch):
    """With 16 choices (off by default: docs/FORMAT-CHOICES.md "Definition placement").
    Fails without placement: 1.7 mkdirs and 5.7 fsyncs per create (measured)."""
    import trinityfs.storage.localdirs as localdirs

    monkeypatch.setattr(localdirs, "PLACEMENT_CHOICES", 16)
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    mkdirs, fsyncs = _count(monkeypatch, "mkdir"), _count(monkeypatch, "fsync")
    for i in range(CREATES):
        lake.create_table("ns", f"t{i:04d}", {"table_format": "ICEBERG"})
    assert mkdirs[0] / CREATES < 1.25, mkdirs[0] / CREATES
    assert fsyncs[0] / CREATES < 5.25, fsyncs[0] / CREATES
    assert len(lake.list_tables("ns")) == CREATES


def test_placed_definitions_keep_verifiable_content_names(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    for i in range(40):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG"})
    snapshot = lake.snapshot()
    for i in range(40):
        location = snapshot.object_location("table", "ns", f"t{i}")
        assert has_content_name(location)
        assert f"-ns-t{i}-" in location
    assert Lakehouse.open(lake.url).describe_table("ns", "t39")


class FakeStore:
    def __init__(self, choices: int, cheap_at: int | None) -> None:
        self.placement_choices = choices
        self.cheap_at = cheap_at
        self.asked: list[tuple[str, bool]] = []

    def directories_to_make(self, loc: str, *, probe: bool = False) -> int:
        self.asked.append((loc, probe))
        return 0 if len(self.asked) - 1 == self.cheap_at else 3 - (len(self.asked) == 3)


def test_the_first_candidate_whose_directory_exists_is_taken():
    store = FakeStore(16, cheap_at=5)
    chosen = place_definition(store, "table", "ns", "t", b"bytes")
    assert chosen == store.asked[5][0]
    assert [probe for _, probe in store.asked] == [True] + [False] * 5


def test_with_no_existing_directory_the_fewest_new_ones_win():
    store = FakeStore(16, cheap_at=None)
    chosen = place_definition(store, "table", "ns", "t", b"bytes")
    assert len(store.asked) == 16
    assert chosen == store.asked[2][0]  # the one needing 2 new directories, not 3


def test_one_choice_asks_nothing():
    store = FakeStore(1, cheap_at=None)
    place_definition(store, "table", "ns", "t", b"bytes")
    assert store.asked == []


@pytest.mark.parametrize(
    ("url", "options", "choices"),
    [
        ("memory://placement-choices", {}, 1),
        (None, {"fsync": False}, 1),
        (None, {}, 16),
    ],
)
def test_only_durable_local_disk_may_draw_more_than_one_name(
    tmp_path, monkeypatch, url, options, choices
):
    import trinityfs.storage.localdirs as localdirs

    lake = Lakehouse.create(url or str(tmp_path / "lake"), storage_options=options)
    assert lake.engine.storage.placement_choices == 1  # off today
    monkeypatch.setattr(localdirs, "PLACEMENT_CHOICES", 16)
    assert lake.engine.storage.placement_choices == choices


def test_candidates_differ_only_in_random_bits_and_are_checked_like_one():
    first, *rest = islice(definition_locations("table", "ns", "t", b"data"), 8)
    heads = {loc.rpartition("/")[2].split("-", 1)[1][: len("table-ns-t-") + 19] for loc in rest}
    assert len({first, *rest}) == 8
    assert heads == {first.rpartition("/")[2].split("-", 1)[1][: len("table-ns-t-") + 19]}
    assert all(has_content_name(loc) for loc in (first, *rest))
    assert has_content_name(new_definition_location("namespace", "ns", None, b"data"))


def test_a_probe_never_goes_through_a_link(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    storage = lake.engine.storage
    elsewhere = tmp_path / "elsewhere" / "0000" / "0000"
    elsewhere.mkdir(parents=True)
    loc = next(
        loc
        for loc in definition_locations("table", "ns", "t", b"x")
        if not (tmp_path / "lake" / loc.split("/")[0]).exists()
    )
    os.symlink(tmp_path / "elsewhere", tmp_path / "lake" / loc.split("/")[0])
    os.makedirs(tmp_path / "elsewhere" / "/".join(loc.split("/")[1:3]), exist_ok=True)
    assert storage.directories_to_make(loc, probe=True) > 0
    assert storage.directories_to_make(loc) > 0


def test_the_directories_remembered_are_bounded(tmp_path, monkeypatch):
    import trinityfs.storage.localdirs as localdirs

    monkeypatch.setattr(localdirs, "KNOWN_DIRS_MAX", 5)
    monkeypatch.setattr(localdirs, "PLACEMENT_CHOICES", 16)  # remembered only when on
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    for i in range(30):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG"})
    assert 0 < len(lake.engine.storage.backend._known_dirs) <= 5
    assert len(lake.list_tables("ns")) == 30
