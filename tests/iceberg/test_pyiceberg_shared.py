"""PyIceberg's own shared catalog behaviour tests, run against TrinityCatalog
(tests/pyiceberg_shared_suite.py: the sdist's cases in a subprocess), with
tests/iceberg/pyiceberg_shared/conftest_trinity.py as the catalog fixture and the list of
cases that cannot apply. Counts (PyIceberg 0.12.0): see the README.
"""

from __future__ import annotations

from pyiceberg_shared_suite import TRINITY_CONFTEST, run_shared_suite


def test_pyiceberg_shared_catalog_behaviour(tmp_path, record_property):
    counts, output = run_shared_suite(tmp_path, {"conftest.py": TRINITY_CONFTEST}, timeout=900)
    record_property("pyiceberg_shared", counts)
    print(f"\nPyIceberg shared catalog tests: {counts}")
    assert counts["failed"] == 0 and counts["errors"] == 0, output
    assert counts["passed"] >= 80, counts
