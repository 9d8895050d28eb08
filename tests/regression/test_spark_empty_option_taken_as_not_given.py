"""Regression: the `trinitylake` Spark source took an option given with an empty value
as not given at all: `.option("root", "")` read and wrote the lakehouse of
$TRINITYFS_ROOT (or ./lakehouse), `.option("root", "  ")` a directory named by the
spaces, `.option("transaction", "")` committed a write meant to be staged into a
distributed transaction, and an empty `branch` / `tag` / `version` read the latest
main snapshot. Every other bad value is refused before any work; an empty one now is
too, naming the option. Found 2026-11-24 (helper adversary2); 7 of 8 fail on 19421b2.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")
from pyspark.sql import types as T

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError
from trinityfs.spark.options import READ, WRITE, parse_options
from trinityfs.spark.source import TrinityLakeDataSource

SCHEMA = T.StructType([T.StructField("id", T.LongType(), True)])


@pytest.fixture
def roots(tmp_path, monkeypatch) -> tuple[str, str]:
    """The lakehouse meant, and another one the environment names."""
    meant, other = str(tmp_path / "meant"), str(tmp_path / "other")
    for root in (meant, other):
        Lakehouse.create(root).create_namespace("ns")
    monkeypatch.setenv("TRINITYFS_ROOT", other)
    monkeypatch.chdir(tmp_path)
    return meant, other


@pytest.mark.parametrize("root", ["", "   "])
def test_an_empty_root_is_refused_for_a_write(roots, root) -> None:
    source = TrinityLakeDataSource({"root": root, "path": "ns.t"})
    with pytest.raises(InvalidArgumentError, match="'root': is empty"):
        source.writer(SCHEMA, False)


def test_an_empty_transaction_is_refused(roots) -> None:
    meant, _ = roots
    with pytest.raises(InvalidArgumentError, match="'transaction': is empty"):
        parse_options({"root": meant, "path": "ns.t", "transaction": ""}, WRITE)


@pytest.mark.parametrize("name", ["branch", "tag", "version", "root"])
def test_an_empty_read_option_is_refused(roots, name) -> None:
    meant, _ = roots
    options = {"root": meant, "path": "ns.t", name: " "}
    with pytest.raises(InvalidArgumentError, match=f"'{name}': is empty"):
        parse_options(options, READ)


def test_options_with_values_still_parse(roots) -> None:
    meant, _ = roots
    opts = parse_options({"root": meant, "path": "ns.t", "transaction": "abc"}, WRITE)
    assert opts.transaction == "abc" and opts.catalog["root"].rstrip("/").endswith("meant")
