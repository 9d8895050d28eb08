"""Regression (life5): `trinityfs get` (and `sync` down) named its temporary file.

A destination that cannot be written, e.g. `get /sales/orders /proc/version`, failed
with "trinityfs: /proc/.version.kln6us3y: No such file or directory": the name of the
temporary file written beside the target, which the user never gave. Now the line
names the destination."""

from __future__ import annotations

import sys

import pytest
from regression_cli import run, sample


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc takes no new files")
def test_get_into_a_place_that_takes_no_file(tmp_path) -> None:
    root = str(tmp_path / "lake")
    sample(root)
    result = run(root, "get", "/sales/orders", "/proc/version")
    assert result.status == 1
    assert result.err.startswith("trinityfs: /proc/version: cannot write it: "), result.err
    result = run(root, "sync", "trinity://sales", "/proc/self")
    assert result.status == 1
    assert result.err.startswith("trinityfs: /proc/self/big_orders.json: cannot write it"), (
        result.err
    )
