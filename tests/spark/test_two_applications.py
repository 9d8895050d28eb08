"""Two Spark applications (two processes, two JVMs, two local Spark sessions) appending to
the same tables at the same time: nothing lost, nothing doubled, and a lost race either
retried by the commit (PyIceberg's commit retry) or failed cleanly (no files left, nothing
committed) and rerun by the application.

Each application's first commit to a table is held (sitecustomize below, active only in
these subprocesses and their Spark workers) until the other application's first commit
to that table has arrived, so the two commits really race on the same base snapshot.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

pytestmark = pytest.mark.spark

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

BARRIER = textwrap.dedent(
    """
    import os, time

    def _hold_first_commit():
        from pyiceberg.exceptions import CommitFailedException
        from trinityfs.iceberg import TrinityCatalog

        folder = os.environ["TRINITYFS_TEST_BARRIER"]
        app = os.environ["TRINITYFS_TEST_APP"]
        original = TrinityCatalog.commit_table

        def commit_table(self, table, requirements, updates):
            name = ".".join(table.name()[-2:])
            mine = os.path.join(folder, f"{app}@{name}")
            if not os.path.exists(mine):
                open(mine, "w").close()
                deadline = time.monotonic() + 240
                while not any(
                    f.endswith("@" + name) and not f.startswith(app + "@")
                    for f in os.listdir(folder)
                ):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the other application never committed")
                    time.sleep(0.05)
            try:
                result = original(self, table, requirements, updates)
                outcome = "ok"
                return result
            except CommitFailedException:
                outcome = "conflict"
                raise
            finally:
                with open(os.path.join(folder, "calls.log"), "a") as log:
                    log.write(f"{app} {name} {outcome}\\n")

        TrinityCatalog.commit_table = commit_table

    if os.environ.get("TRINITYFS_TEST_BARRIER"):
        _hold_first_commit()
    """
)


def _catalog(root: str):
    return load_catalog(
        "t", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )


def test_two_spark_applications_append_at_once_nothing_lost(lake_root, tmp_path):
    cat = _catalog(lake_root)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "app", StringType(), required=False),
    )
    cat.create_table("ns.noretry", schema, properties={"commit.retry.num-retries": "0"})
    cat.create_table("ns.retry", schema)

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BARRIER)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = {}
    for app, first in (("a", 0), ("b", 100_000)):
        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join([str(site), str(REPO)]),
            TRINITYFS_TEST_BARRIER=str(barrier),
            TRINITYFS_TEST_APP=app,
        )
        out = tmp_path / f"{app}.json"
        cmd = [
            sys.executable,
            str(HERE / "two_apps_child.py"),
            lake_root,
            app,
            str(first),
            str(out),
        ]
        procs[app] = (
            subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT),
            out,
        )
    reports = {}
    for app, (proc, out) in procs.items():
        try:
            log, _ = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            for p, _ in procs.values():
                p.kill()
            raise
        assert proc.returncode == 0, log.decode(errors="replace")[-4000:]
        reports[app] = json.loads(out.read_text())

    calls = Counter(
        tuple(line.split()) for line in (barrier / "calls.log").read_text().splitlines()
    )
    # the held first commits raced on one base: exactly one lost per table
    assert calls[("a", "ns.noretry", "conflict")] + calls[("b", "ns.noretry", "conflict")] == 1
    assert calls[("a", "ns.retry", "conflict")] + calls[("b", "ns.retry", "conflict")] >= 1

    # ns.noretry: the loser's job failed cleanly, said so, and its rerun landed
    conflicts = [c for r in reports.values() for c in r["conflicts"] if c[0] == "ns.noretry"]
    assert len(conflicts) == 1, reports
    assert "not committed" in conflicts[0][2] and "rerun the job" in conflicts[0][2]
    # ns.retry: the commit retried itself, no job failed
    assert not [c for r in reports.values() for c in r["conflicts"] if c[0] == "ns.retry"]

    cat = _catalog(lake_root)
    expected = {
        "ns.noretry": sorted(i for f in (0, 100_000) for i in range(f, f + 100)),
        "ns.retry": sorted(
            i
            for f in (0, 100_000)
            for k in (1, 2, 3, 4)
            for i in range(f + 1000 * k, f + 1000 * k + 100)
        ),
    }
    for name, ids in expected.items():
        table = cat.load_table(name)
        got: pa.Table = table.scan().to_arrow()
        assert sorted(got["id"].to_pylist()) == ids  # every row once: none lost, none doubled
        appends = [
            s
            for s in table.metadata.snapshots
            if s.summary and s.summary.operation.value == "append"
        ]
        assert len(appends) == {"ns.noretry": 2, "ns.retry": 8}[name]
        assert sum(int(s.summary["added-records"]) for s in appends) == len(ids)
        # the failed job's data files were removed: every file left is referenced
        referenced = {
            Path(t.file.file_path.removeprefix("file://")).resolve()
            for t in table.scan().plan_files()
        }
        data = Path(lake_root) / "warehouse" / "ns" / name.split(".")[1] / "data"
        on_disk = {p.resolve() for p in data.rglob("*.parquet")}
        assert on_disk == referenced, sorted(map(str, on_disk - referenced))
