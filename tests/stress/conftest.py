"""Fixtures of the stress suites: a lakehouse location on local disk or S3, and figures.

Every suite reports its figures (operations, faults, crashes, fuzz examples) through
the `figures` fixture; they are printed at the end of the run and, when
``TRINITYFS_STRESS_FIGURES`` names a file, appended to it as JSON lines.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from figures import FIGURES


@dataclass
class Store:
    """Where stress lakehouses live: `url()` gives a fresh root each call."""

    name: str
    url: Callable[[], str]
    options: dict[str, Any] | None


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path) -> Store:
    """A fresh lakehouse location on a local directory and on the moto S3 server."""
    if request.param == "local":
        return Store("local", lambda: str(tmp_path / uuid.uuid4().hex), None)
    options = request.getfixturevalue("s3_storage_options")
    bucket = request.getfixturevalue("s3_bucket")
    return Store("s3", lambda: f"s3://{bucket}/stress-{uuid.uuid4().hex}", options)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # a store parameter of "s3" needs the S3 server: mark it so `-m "not s3"` skips it
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("store") == "s3":
            item.add_marker(pytest.mark.s3)


@pytest.fixture
def figures(request) -> Callable[..., None]:
    """figures(**numbers) records this test's figures under its node id."""

    def record(**numbers: Any) -> None:
        FIGURES.setdefault(request.node.nodeid.split("::", 1)[-1], {}).update(numbers)

    return record


def pytest_terminal_summary(terminalreporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section("trinityfs stress figures")
    for name, numbers in sorted(FIGURES.items()):
        terminalreporter.write_line(f"{name}: {json.dumps(numbers, sort_keys=True)}")
    path = os.environ.get("TRINITYFS_STRESS_FIGURES")
    if path:
        with open(path, "a") as f:
            for name, numbers in sorted(FIGURES.items()):
                f.write(json.dumps({"test": name, **numbers}, sort_keys=True) + "\n")
