"""PyIceberg's own shared catalog behaviour tests, run against the REST server through
PyIceberg's RestCatalog (tests/pyiceberg_shared_suite.py), with
tests/rest/pyiceberg_shared/conftest_rest.py as the catalog fixture (it reuses
conftest_trinity.py's lists of cases that cannot apply)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg_shared_suite import TRINITY_CONFTEST, run_shared_suite

pytestmark = [pytest.mark.rest, pytest.mark.slow]

REST_CONFTEST = Path(__file__).parent / "pyiceberg_shared" / "conftest_rest.py"


def test_pyiceberg_shared_catalog_behaviour_over_rest(tmp_path, record_property):
    fixtures = {"conftest_trinity.py": TRINITY_CONFTEST, "conftest.py": REST_CONFTEST}
    counts, output = run_shared_suite(tmp_path, fixtures, timeout=1500)
    record_property("pyiceberg_shared_rest", counts)
    print(f"\nPyIceberg shared catalog tests over REST: {counts}")
    assert counts["failed"] == 0 and counts["errors"] == 0, output
    assert counts["passed"] >= 75, counts
