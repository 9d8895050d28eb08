"""A warm cat of one path is a path parse (remembered), one probe of the next root and
a cached render: no fsspec path expansion (issue 13 item 2: it was a third of a cat)."""

from __future__ import annotations

import pytest

from trinityfs.fs import TrinityFileSystem
from trinityfs.fs.paths import PathNameError, parse_path


def test_cat_of_one_path_does_not_expand_it(sample, monkeypatch):
    data = sample.cat("/sales/orders")

    def no_expansion(*args, **kwargs):
        raise AssertionError("expand_path called for one exact path")

    monkeypatch.setattr(TrinityFileSystem, "expand_path", no_expansion)
    assert sample.cat("/sales/orders") == data
    assert sample.cat("trinity://sales/orders") == data
    assert sample.cat("sales/./x/../orders") == data
    assert sample.cat("/sales/orders", start=1, end=4) == data[1:4]


def test_cat_of_many_paths_or_recursive_still_expands(sample):
    both = sample.cat(["/sales/orders", "/sales/big_orders"])
    assert set(both) == {"/sales/orders", "/sales/big_orders"}
    tree = sample.cat("/sales", recursive=True, on_error="omit")
    assert set(tree) >= {"/sales/orders", "/sales/big_orders"}


def test_cat_errors_are_the_same_without_expansion(sample):
    with pytest.raises(FileNotFoundError):
        sample.cat("/sales/nope")
    with pytest.raises(FileNotFoundError):
        sample.cat("/sales/*")  # names are literal: no table is called "*"
    with pytest.raises(IsADirectoryError):
        sample.cat("/sales")


def test_parsed_paths_are_remembered_and_bad_ones_refused_every_time():
    assert parse_path("/ns/t") is parse_path("/ns/t")
    assert parse_path("trinity://ns/t") == parse_path("/ns/t")
    for _ in range(2):
        with pytest.raises(PathNameError):
            parse_path("/ns/%ff")
