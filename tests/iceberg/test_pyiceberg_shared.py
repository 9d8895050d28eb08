"""PyIceberg's own shared catalog behaviour tests, run against TrinityCatalog.

They ship in PyIceberg's source distribution, not in the wheel. This test fetches the
sdist of the installed version (`pip download --no-binary :all: --no-deps`, cached in
$TRINITYFS_PYICEBERG_SDIST_DIR or ~/.cache/trinityfs/pyiceberg-sdist), extracts
`tests/conftest.py` and `tests/catalog/test_catalog_behaviors.py` into a temporary
directory, adds tests/iceberg/pyiceberg_shared/conftest_trinity.py as the catalog
fixture (and the list of cases that cannot apply), and runs them in a subprocess.
Nothing of PyIceberg's test code is stored in this repository.

Counts (PyIceberg 0.12.0): see the README.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).parent
MEMBERS = ("tests/conftest.py", "tests/catalog/test_catalog_behaviors.py")


def _sdist(version: str) -> Path:
    cache = Path(
        os.environ.get("TRINITYFS_PYICEBERG_SDIST_DIR")
        or Path.home() / ".cache" / "trinityfs" / "pyiceberg-sdist"
    )
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"pyiceberg-{version}.tar.gz"))
    if found:
        return found[0]
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-binary",
        ":all:",
        "--no-deps",
        "--no-build-isolation",
        f"pyiceberg=={version}",
        "-d",
        str(cache),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    found = sorted(cache.glob(f"pyiceberg-{version}.tar.gz"))
    if proc.returncode != 0 or not found:
        pytest.skip(f"cannot fetch the pyiceberg {version} sdist: {proc.stderr[-500:]}")
    return found[0]


def _extract(sdist: Path, version: str, into: Path) -> None:
    prefix = f"pyiceberg-{version}/"
    with tarfile.open(sdist) as tar:
        names = set(tar.getnames())
        for member in MEMBERS:
            if prefix + member not in names:
                pytest.skip(f"pyiceberg {version}'s sdist has no {member}")
            src = tar.extractfile(prefix + member)
            assert src is not None
            target = into / member
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(src.read())
    (into / "tests" / "__init__.py").touch()
    (into / "tests" / "catalog" / "__init__.py").touch()
    shutil.copy(
        HERE / "pyiceberg_shared" / "conftest_trinity.py", into / "tests/catalog/conftest.py"
    )


def test_pyiceberg_shared_catalog_behaviour(tmp_path, record_property):
    pytest.importorskip("pytest_lazy_fixtures", reason="pip install '.[test]'")
    pytest.importorskip("sqlalchemy", reason="pip install '.[test]'")
    version = importlib.metadata.version("pyiceberg")
    work = tmp_path / "pyiceberg-tests"
    _extract(_sdist(version), version, work)
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
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=900)
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite is not None
    total = int(suite.get("tests", 0))
    failures = int(suite.get("failures", 0))
    errors = int(suite.get("errors", 0))
    xfailed = skipped_na = 0
    for case in suite.iter("testcase"):
        skip = case.find("skipped")
        if skip is not None:
            if skip.get("type") == "pytest.xfail":
                xfailed += 1
            else:
                skipped_na += 1
    passed = total - failures - errors - xfailed - skipped_na
    counts = {
        "pyiceberg": version,
        "cases": total,
        "passed": passed,
        "xfailed (another catalog's wording)": xfailed,
        "skipped (not applicable)": skipped_na,
        "failed": failures,
        "errors": errors,
    }
    record_property("pyiceberg_shared", counts)
    print(f"\nPyIceberg shared catalog tests: {counts}")
    assert failures == 0 and errors == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert passed >= 80, counts
