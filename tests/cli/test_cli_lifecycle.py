"""Lifecycle commands, registered only where the engine has them."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse

needs = lambda name: pytest.mark.skipif(  # noqa: E731
    not hasattr(Lakehouse, name), reason=f"Lakehouse.{name} does not exist yet"
)


@needs("export")
def test_export_and_read_it(sample):
    result = sample("export", "nightly", "--version", "2")
    assert result.status == 0, result.err
    assert "nightly" in sample("exports").out
    assert sample("ls", "/v/nightly/sales").out == "orders  table\n"
    assert sample("--json", "exports").json()[0]["name"] == "nightly"
    if hasattr(Lakehouse, "drop_export"):
        assert sample("drop-export", "nightly").status == 0
        assert sample("exports").out == "no exports\n"


@needs("expire")
def test_expire_dry_run(sample):
    result = sample("--json", "expire", "--dry-run", "--max-age-millis", "0", "--min-versions", "1")
    assert result.status == 0, result.err
    assert result.json()["dry_run"] is True
    assert sample("expire", "--dry-run").status == 0


@needs("fsck")
def test_fsck(sample):
    result = sample("fsck")
    assert result.status == 0, result.err
    assert sample("--json", "fsck").json()["ok"] is True


@needs("begin_distributed")
def test_distributed_transaction(sample):
    txn_id = sample("txn", "begin").out.strip()
    assert txn_id
    assert sample("txn", "mkdir", txn_id, "/dist").status == 0
    assert sample("txn", "put", txn_id, "-", "/dist/t", stdin=b"").status == 0
    assert sample("ls", "/").out == "sales/  namespace\n"  # not committed yet
    shown = sample("--json", "txn", "show", txn_id).json()
    assert shown["id"] == txn_id and shown["base_version"] == 3
    assert sample("txn", "commit", txn_id).out == f"txn {txn_id}: version 4\n"
    assert sample("find", "/dist").out == "/dist/t\n"
    other = sample("txn", "begin").out.strip()
    assert sample("txn", "abort", other).status == 0
    assert sample("txn", "commit", other).status == 1
    assert sample("txn").status == 2


def test_lifecycle_commands_match_the_engine(run):
    from trinityfs.cli.app import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    for name, command in (
        ("export", "export"),
        ("expire", "expire"),
        ("fsck", "fsck"),
        ("begin_distributed", "txn"),
    ):
        assert (command in commands) == hasattr(Lakehouse, name)


@needs("fsck")
def test_lifecycle_through_the_real_command(sample, run_process):
    result = run_process("fsck")
    assert result.status == 0, result.err
