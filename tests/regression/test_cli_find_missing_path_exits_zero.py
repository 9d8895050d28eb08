"""`trinityfs find /nope` printed nothing and exited 0, as if the namespace were empty.

find(1) names a missing starting point and exits non-zero; a script testing the exit
status could not tell a missing namespace (a typo, or one dropped meanwhile) from an
empty one.
"""

from __future__ import annotations

import pytest
from regression_cli import run
from regression_cli import sample as make_sample


@pytest.fixture
def sample(tmp_path):
    root = str(tmp_path / "lake")
    make_sample(root)
    return lambda *args: run(root, *args)


def test_find_of_a_missing_namespace_fails_naming_it(sample):
    result = sample("find", "/nope")
    assert result.status == 1
    assert "nope" in result.err and "does not exist" in result.err


def test_find_of_a_missing_table_fails(sample):
    result = sample("find", "/sales/nope")
    assert result.status == 1 and "nope" in result.err


def test_find_of_an_empty_namespace_is_empty_and_succeeds(sample):
    assert sample("mkdir", "/empty").status == 0
    result = sample("find", "/empty")
    assert (result.status, result.out) == (0, "")
    assert sample("find", "-d", "/empty").out == "/empty\n"
