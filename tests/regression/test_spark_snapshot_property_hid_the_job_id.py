"""A Spark write's `snapshot-properties` option could set `trinitylake.spark.job-id`, the
summary property by which an abort after a commit of unknown outcome tells whether the
job's commit landed (9359f75): the user's value replaced the job's, so a landed commit
looked absent and the abort deleted the files it had landed (found in the session's
review). The option now refuses that key, and the job's own id wins in any case."""

from __future__ import annotations

import json

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError
from trinityfs.spark.options import WRITE, parse_options

JOB_ID = "trinitylake.spark.job-id"


def test_the_job_id_key_is_refused(tmp_path):
    root = str(tmp_path / "lake")
    Lakehouse.create(root)
    options = {"root": root, "path": "ns.t"}
    props = json.dumps({JOB_ID: "mine", "owner": "etl"})
    with pytest.raises(InvalidArgumentError, match="reserved"):
        parse_options({**options, "snapshot-properties": props}, WRITE)
    parsed = parse_options({**options, "snapshot-properties": '{"owner": "etl"}'}, WRITE)
    assert parsed.snapshot_properties == {"owner": "etl"}
