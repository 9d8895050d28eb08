"""Errors about export names and transaction ids read "invalid export name name ''"
and "may not appear in a export name": the kind was passed with its noun, and the name
check added " name" again. Now each noun appears once, with its article."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidNameError


@pytest.fixture
def lake(tmp_path):
    return Lakehouse.create(str(tmp_path / "lake"))


@pytest.mark.parametrize("name", ["", "a b", "x" * 300, "a/b", 3])
def test_export_name_errors_say_export_name_once(lake, name):
    with pytest.raises(InvalidNameError) as caught:
        lake.export(name)
    message = str(caught.value)
    assert message.startswith("invalid export name ")
    assert "name name" not in message and " a export" not in message


@pytest.mark.parametrize("txn_id", ["", "../x", "a b"])
def test_transaction_id_errors_say_transaction_id_once(lake, txn_id):
    with pytest.raises(InvalidNameError) as caught:
        lake.load_distributed(txn_id)
    message = str(caught.value)
    assert message.startswith("invalid transaction id ")
    assert "id name" not in message


def test_object_names_keep_their_noun(lake):
    with pytest.raises(InvalidNameError, match=r"^invalid namespace name ''"):
        lake.create_namespace("")
