"""PyIceberg's own shared catalog behaviour tests, run against the REST server through
PyIceberg's RestCatalog. Reuses the machinery of tests/iceberg/test_pyiceberg_shared.py
(the sdist of the installed PyIceberg, extracted to a temporary directory, run in a
subprocess) with tests/rest/pyiceberg_shared/conftest_rest.py as the catalog fixture."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = [pytest.mark.rest, pytest.mark.slow]

HERE = Path(__file__).parent
SHARED = HERE.parent / "iceberg" / "test_pyiceberg_shared.py"
TRINITY_CONFTEST = HERE.parent / "iceberg" / "pyiceberg_shared" / "conftest_trinity.py"


def _shared_module():
    spec = importlib.util.spec_from_file_location("_pyiceberg_shared_machinery", SHARED)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pyiceberg_shared_catalog_behaviour_over_rest(tmp_path, record_property):
    pytest.importorskip("pytest_lazy_fixtures", reason="pip install '.[test]'")
    pytest.importorskip("sqlalchemy", reason="pip install '.[test]'")
    shared = _shared_module()
    version = importlib.metadata.version("pyiceberg")
    work = tmp_path / "pyiceberg-tests"
    shared._extract(shared._sdist(version), version, work)
    catalog_dir = work / "tests" / "catalog"
    shutil.copy(TRINITY_CONFTEST, catalog_dir / "conftest_trinity.py")
    shutil.copy(HERE / "pyiceberg_shared" / "conftest_rest.py", catalog_dir / "conftest.py")
    report = tmp_path / "junit.xml"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "-W",
        "ignore::pytest.PytestUnknownMarkWarning",
        f"--junitxml={report}",
        "--basetemp",
        str(tmp_path / "basetemp"),
        "tests/catalog/test_catalog_behaviors.py",
    ]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=1500)
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite is not None
    total = int(suite.get("tests", 0))
    failures = int(suite.get("failures", 0))
    errors = int(suite.get("errors", 0))
    xfailed = skipped = 0
    for case in suite.iter("testcase"):
        skip = case.find("skipped")
        if skip is not None:
            xfailed += skip.get("type") == "pytest.xfail"
            skipped += skip.get("type") != "pytest.xfail"
    passed = total - failures - errors - xfailed - skipped
    counts = {
        "pyiceberg": version,
        "cases": total,
        "passed": passed,
        "xfailed": xfailed,
        "skipped (not applicable)": skipped,
        "failed": failures,
        "errors": errors,
    }
    record_property("pyiceberg_shared_rest", counts)
    print(f"\nPyIceberg shared catalog tests over REST: {counts}")
    assert failures == 0 and errors == 0, proc.stdout[-8000:] + proc.stderr[-3000:]
    assert passed >= 75, counts
