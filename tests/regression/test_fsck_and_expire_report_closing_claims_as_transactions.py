"""A distributed transaction's closing claim (`txn-<id>~closing.binpb`, fa27bbf) is
stored like a transaction file and born expired, so `fsck` warned "distributed
transaction t1~closing expired" for a claim of a commit in progress, and `expire` listed
it among the live transactions. Now fsck lists it with the state "claim" and warns only
when it is older than any commit may take (the process closing the transaction stopped:
the warning names the claim and the repair), and expire does not report it as a
transaction (it still keeps the claim's base for the grace period)."""

from __future__ import annotations

import importlib
import multiprocessing

from dtxn_close_workers import commit_dying_before_the_root

from trinityfs import Lakehouse

# the module, not the function of that name that trinityfs.lifecycle exports
fsck_module = importlib.import_module("trinityfs.lifecycle.fsck")


def _dead_committer(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=commit_dying_before_the_root, args=(lake.url, None, "t1", out))
    proc.start()
    assert out.get(timeout=120) == ("died", 2)
    proc.join(30)
    return Lakehouse.open(lake.url)


def test_claims_are_not_reported_as_transactions_and_old_ones_are_named(tmp_path, monkeypatch):
    lake = _dead_committer(tmp_path)
    report = lake.fsck()
    states = {t["id"]: t["state"] for t in report.transactions}
    assert states == {"t1": "live", "t1~closing": "claim"}
    assert not [w for w in report.warnings if "closing" in w.message], report.warnings
    assert lake.expire(dry_run=True).live_transactions == ["t1"]

    real_now = fsck_module.now_millis
    monkeypatch.setattr(fsck_module, "now_millis", lambda: real_now() + 3_600_000)
    late = Lakehouse.open(lake.url).fsck()
    claims = [w for w in late.warnings if "closing claim t1~closing" in w.message]
    assert len(claims) == 1, late.warnings
    assert "s ago" in claims[0].message and "remove this file" in claims[0].message
    assert not [w for w in late.warnings if "t1~closing expired" in w.message]
