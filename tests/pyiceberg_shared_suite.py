"""Running PyIceberg's own shared catalog behaviour tests against a catalog of ours.

They ship in PyIceberg's source distribution, not in the wheel. `run_shared_suite` fetches
the sdist of the installed version (`pip download --no-binary :all: --no-deps`, cached in
$TRINITYFS_PYICEBERG_SDIST_DIR or ~/.cache/trinityfs/pyiceberg-sdist), extracts
`tests/conftest.py` and `tests/catalog/test_catalog_behaviors.py` into a temporary
directory, adds our catalog fixture files next to them, runs them in a subprocess and
counts the outcomes from its JUnit report. Nothing of PyIceberg's test code is stored in
this repository. Used by tests/iceberg/test_pyiceberg_shared.py (TrinityCatalog) and
tests/rest/test_pyiceberg_shared_rest.py (RestCatalog over our server).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import pytest

MEMBERS = ("tests/conftest.py", "tests/catalog/test_catalog_behaviors.py")
TESTS = Path(__file__).parent
TRINITY_CONFTEST = TESTS / "iceberg" / "pyiceberg_shared" / "conftest_trinity.py"


def _sdist(version: str) -> Path:
    cache = Path(
        os.environ.get("TRINITYFS_PYICEBERG_SDIST_DIR")
        or Path.home() / ".cache" / "trinityfs" / "pyiceberg-sdist"
    )
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"pyiceberg-{version}.tar.gz"))
    if found:
        return found[0]
    cmd = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
    cmd += ["--no-build-isolation", f"pyiceberg=={version}", "-d", str(cache)]
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


def run_shared_suite(
    tmp_path: Path, fixtures: Mapping[str, Path], timeout: float
) -> tuple[dict[str, object], str]:
    """Run the shared cases with `fixtures` (file name in tests/catalog/ -> our file;
    "conftest.py" provides the `catalog` fixtures). Returns the counts and the output."""
    pytest.importorskip("pytest_lazy_fixtures", reason="pip install '.[test]'")
    pytest.importorskip("sqlalchemy", reason="pip install '.[test]'")
    version = importlib.metadata.version("pyiceberg")
    work = tmp_path / "pyiceberg-tests"
    _extract(_sdist(version), version, work)
    for name, source in fixtures.items():
        shutil.copy(source, work / "tests" / "catalog" / name)
    report = tmp_path / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    cmd += ["-W", "ignore::pytest.PytestUnknownMarkWarning", f"--junitxml={report}"]
    cmd += ["--basetemp", str(tmp_path / "basetemp"), "tests/catalog/test_catalog_behaviors.py"]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout)
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
    counts: dict[str, object] = {
        "pyiceberg": version,
        "cases": total,
        "passed": total - failures - errors - xfailed - skipped,
        "xfailed (another catalog's wording)": xfailed,
        "skipped (not applicable)": skipped,
        "failed": failures,
        "errors": errors,
    }
    return counts, proc.stdout[-8000:] + proc.stderr[-3000:]


__all__ = ["TRINITY_CONFTEST", "run_shared_suite"]
