"""Namespace properties through the catalog API:

- a value None, 1 or b"\\xff", a name 1, a lone surrogate, or properties given as a str
  raised bare TypeError / UnicodeEncodeError / ValueError from protobuf;
- removals given as a str ("key") removed the properties "k", "e" and "y";
- setting a property to the value it has, or removing one that is absent, committed a
  new version reported as "replaced namespace" (a put of equal bytes commits nothing);
- the size limit's message spoke of nesting depth.
Now each bad input is InvalidArgumentError naming the property, and a change that
changes nothing commits nothing and returns the latest version.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import DefinitionLimitError, InvalidArgumentError


@pytest.fixture
def lake(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns", {"a": "1", "key": "v"})
    return lake


BAD = [{"k": None}, {"k": 1}, {1: "v"}, {"k": b"\xff"}, {"k": "\ud800"}, "k=v", [("k", "v")]]


@pytest.mark.parametrize("properties", BAD, ids=repr)
def test_bad_properties_are_refused_by_name(lake, properties):
    before = lake.latest_version()
    with pytest.raises(InvalidArgumentError, match="propert"):
        lake.create_namespace("other", properties)
    with pytest.raises(InvalidArgumentError, match="propert"):
        lake.set_namespace_properties("ns", properties)
    assert lake.latest_version() == before
    assert lake.list_namespaces() == ["ns"]


@pytest.mark.parametrize("removals", ["key", b"key", 5, ["k", None]], ids=repr)
def test_removals_must_be_a_list_of_names(lake, removals):
    with pytest.raises(InvalidArgumentError, match="property"):
        lake.set_namespace_properties("ns", None, removals)
    assert dict(lake.describe_namespace("ns").properties) == {"a": "1", "key": "v"}


def test_a_change_that_changes_nothing_commits_nothing(lake):
    version = lake.latest_version()
    assert lake.set_namespace_properties("ns", {"a": "1"}) == version
    assert lake.set_namespace_properties("ns", {}, ["absent"]) == version
    assert lake.set_namespace_properties("ns", None) == version
    assert lake.latest_version() == version
    assert lake.set_namespace_properties("ns", {"a": "2"}, ["absent"]) == version + 1
    assert lake.set_namespace_properties("ns", {}, ["key"]) == version + 2
    assert dict(lake.describe_namespace("ns").properties) == {"a": "2"}


def test_the_size_limit_says_size(lake):
    with pytest.raises(DefinitionLimitError, match="8 MiB") as info:
        lake.create_namespace("huge", {"k": "x" * (9 * 2**20)})
    assert "deep" not in str(info.value)


def test_every_one_change_shortcut_returns_a_version(lake):
    """rename_table / rename_view onto their own name committed nothing and returned
    None, against their `-> int`; now the version they were checked against."""
    lake.create_table("ns", "t")
    lake.create_view("ns", "v")
    version = lake.latest_version()
    assert lake.rename_table("ns", "t", "ns", "t") == version
    assert lake.rename_view("ns", "v", "ns", "v") == version
    assert lake.latest_version() == version


def test_the_filesystem_gets_the_same_rules(lake):
    """trinity:// and the mount set properties through the catalog's one rule (the path
    model had its own no-change test and type check, the filesystem a third)."""
    from trinityfs.fs import TrinityFileSystem

    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True)
    assert fs.set_properties("/ns", {"a": "1"}) is None  # unchanged: no commit
    with pytest.raises(ValueError, match="property 'k'"):
        fs.set_properties("/ns", {"k": 1})
    with pytest.raises(ValueError, match="list of names"):
        fs.set_properties("/ns", None, "key")
    assert dict(lake.describe_namespace("ns").properties) == {"a": "1", "key": "v"}


def test_no_change_is_never_answered_from_a_stale_base(tmp_path):
    """A one-change shortcut begins at the latest version this process confirmed within
    the trust window, unprobed. Setting a=1 where that base had a=1 answered "no change"
    although another process had set a=2 meanwhile: a=1 was silently lost. A "no change"
    on an unprobed base now stands only if that base is still the latest; else the
    change is redone on the latest version."""
    url = str(tmp_path / "shared")
    mine = Lakehouse.create(url)
    mine.create_namespace("ns", {"a": "1"})
    assert mine.engine.roots.trusted_latest() == mine.latest_version()  # warm, unprobed
    other = Lakehouse.open(url)
    other.set_namespace_properties("ns", {"a": "2"})
    version = mine.set_namespace_properties("ns", {"a": "1"})
    assert dict(Lakehouse.open(url).describe_namespace("ns").properties) == {"a": "1"}
    assert version == Lakehouse.open(url).latest_version() == 3
    # and a true no-op on a fresh base still commits nothing
    assert mine.set_namespace_properties("ns", {"a": "1"}) == 3
