"""Fixtures for the PyIceberg catalog tests (need the `iceberg` extra)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import frontend_fixtures
import pytest

if importlib.util.find_spec("pyiceberg") is None:  # the core installs without it
    collect_ignore_glob = ["test_*.py"]

IMPL = "trinityfs.iceberg.TrinityCatalog"


lake_root = frontend_fixtures.lake_root  # the shared fixture: a new, empty lakehouse


@pytest.fixture
def open_catalog(lake_root: str) -> Callable[..., Any]:
    """load_catalog() over `lake_root`, with extra properties."""
    from pyiceberg.catalog import load_catalog

    def make(**props: str) -> Any:
        return load_catalog("lake", **{"py-catalog-impl": IMPL, "root": lake_root, **props})

    return make


@pytest.fixture
def catalog(open_catalog: Callable[..., Any]) -> Any:
    cat = open_catalog()
    cat.create_namespace("sales", {"owner": "analytics"})
    return cat
