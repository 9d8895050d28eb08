"""A session-scoped local Spark (`local[2]`) with the `trinitylake` data source.

Spark tests are marked `spark`; the unit tests of the data source's reader and writer
(test_source_unit.py) call it without a JVM. Workers run this interpreter
(PYSPARK_PYTHON), so they import the same trinityfs.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("pyiceberg") is None:
    collect_ignore_glob = ["test_*.py"]  # the core installs without the extras


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME)")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import trinityfs.spark

    session = (
        SparkSession.builder.master("local[2]")
        .appName("trinityfs-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "1g")
        # not UTC on purpose: instants must survive the session time zone
        .config("spark.sql.session.timeZone", "America/Los_Angeles")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    trinityfs.spark.register(session)
    yield session
    session.stop()


@pytest.fixture
def lake_root(tmp_path: Path) -> str:
    from trinityfs import Lakehouse

    root = tmp_path / "lake"
    lake = Lakehouse.create(str(root))
    lake.create_namespace("ns")
    return str(root)
