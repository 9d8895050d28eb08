"""Names the catalog refuses to create: '.', '..' and non-NFC (confusable) names."""

from __future__ import annotations

import unicodedata

import pytest

from trinityfs.errors import InvalidNameError

NFC = unicodedata.normalize("NFC", "caf\u00e9")
NFD = unicodedata.normalize("NFD", NFC)


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_names_are_refused_everywhere_a_name_is_created(lake, name):
    with pytest.raises(InvalidNameError, match="reserved"):
        lake.create_namespace(name)
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    for create in (lake.create_table, lake.create_view):
        with pytest.raises(InvalidNameError, match="reserved"):
            create("ns", name)
    with pytest.raises(InvalidNameError, match="reserved"):
        lake.rename_table("ns", "t", "ns", name)
    with pytest.raises(InvalidNameError, match="reserved"):
        lake.put_object("table", "ns", name, {})
    assert lake.list_namespaces() == ["ns"] and lake.list_tables("ns") == ["t"]


def test_dots_inside_a_name_are_fine(lake):
    lake.create_namespace("...")
    lake.create_table("...", ".hidden")
    assert lake.list_tables("...") == [".hidden"]


def test_non_nfc_names_are_refused_naming_the_nfc_spelling(lake):
    with pytest.raises(InvalidNameError, match="NFC") as e:
        lake.create_namespace(NFD)
    assert repr(NFC) in str(e.value)
    lake.create_namespace(NFC)
    with pytest.raises(InvalidNameError, match="NFC"):
        lake.create_table(NFC, NFD)
    lake.create_table(NFC, NFC)
    assert lake.list_tables(NFC) == [NFC]


def test_an_nfc_twin_of_an_existing_nfd_name_is_refused(lake, monkeypatch):
    """Another writer may have created the NFD spelling; trinityfs will not add its twin."""
    from trinityfs.catalog import writer

    monkeypatch.setattr(writer, "check_new_name", lambda kind, name, exists=None: None)
    lake.create_namespace(NFD)  # as a foreign writer would
    lake.create_table(NFD, NFD)
    monkeypatch.undo()
    with pytest.raises(InvalidNameError, match="NFD form"):
        lake.create_namespace(NFC)
    with pytest.raises(InvalidNameError, match="NFD form"):
        lake.create_table(NFD, NFC)
    # names another writer created stay readable, changeable and movable
    lake.replace_table(NFD, NFD, {"properties": {"k": "v"}})
    lake.move_namespace(NFD, "plain")
    assert lake.list_tables("plain") == [NFD]
