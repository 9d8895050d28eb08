"""Fairness of commit retries under contention, on S3 (moto on 127.0.0.1).

W writer processes commit transactions on disjoint keys (each its own namespace) for S
seconds against one lakehouse on a real S3 API server (moto, one request at a time
like `tests/s3_server.py`); every transaction still races for the next version. Then
the history checker of `tests/stress/history.py` proves nothing was lost (every
acknowledged commit is the version it was told, versions are dense, trees check).

Printed per run: transactions, acknowledged commits, transactions that gave up
(CommitRetriesExhaustedError) or would have under the old rule (64 attempts), attempts
per commit (mean, p99, max), commit latency p50/p99/max, per-writer acknowledged
commits and min/max, storage requests per commit.

Runs, interleaved in one process: `current` (the shipped retry timing of
trinityfs/txn/backoff.py: priority by lost races in a row, waits in attempt durations,
total budget COMMIT_BUDGET_SECONDS) and a baseline (--compare): `capped-jitter` (the
previous session's uniform(0, min(50 ms, 2 ms * 2^n))) or `old-backoff` (937923f:
5 ms doubling to a 0.5 s cap); --only runs one of them.

    python benchmarks/bench_fairness.py [--writers 8] [--seconds 120] [--only current]
        [--compare capped-jitter|old-backoff]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "stress"))

BUCKET = "bench-fairness"


def _patch_backoff(base: float, cap: float) -> None:
    """Make this process retry like an earlier version: uniform(0, min(cap, base * 2^n))
    after the n-th lost race, no priority by losses, no yielding of fresh commits."""
    import random

    from trinityfs.txn import backoff

    def wait(self, losses: int) -> float:
        return random.uniform(0, min(cap, base * 2 ** min(losses - 1, 30)))

    backoff.Contention.wait = wait
    backoff.Backoff.should_defer_fresh = lambda self: False


def capped_jitter_worker(*args, **kwargs) -> None:
    """history.worker with the backoff of the previous session (2 ms doubling, 50 ms cap)."""
    _patch_backoff(0.002, 0.05)
    from history import worker

    worker(*args, **kwargs)


def legacy_worker(*args, **kwargs) -> None:
    """history.worker with the backoff of 937923f (5 ms doubling, 0.5 s cap)."""
    _patch_backoff(0.005, 0.5)
    from history import worker

    worker(*args, **kwargs)


WORKERS = {"capped-jitter": capped_jitter_worker, "old-backoff": legacy_worker}


def run(label: str, options: dict, writers: int, seconds: float) -> dict:
    import history
    from history import Workload, load_ops, run_history

    url = f"s3://{BUCKET}/{label}-{uuid.uuid4().hex[:8]}"
    workload = Workload(
        hot_fraction=0.0,  # disjoint keys: no transaction conflicts with another
        abort_fraction=0.0,
        duration_seconds=seconds,
        max_transactions_factor=1,
    )
    real_worker = history.worker
    if label in WORKERS:
        history.worker = WORKERS[label]
    try:
        with tempfile.TemporaryDirectory() as work:
            started = time.monotonic()
            summary = run_history(
                url,
                options,
                Path(work),
                procs=writers,
                commits=100_000,
                workload=workload,
                timeout=seconds + 600,
            )
            elapsed = time.monotonic() - started
            logs = sorted(Path(work).glob("history-*.jsonl"))
            ops = load_ops(logs)
            latency = sorted(
                r["seconds"]
                for log in logs
                for line in log.read_text().splitlines()
                if "seconds" in (r := json.loads(line)) and r.get("type") == "ok"
            )
    finally:
        history.worker = real_worker
    committed = [op for op in ops if op.status == "ok"]
    per_writer = [sum(1 for op in committed if op.proc == p) for p in range(writers)]
    attempts = sorted(op.attempts for op in ops if op.invoked and op.status != "info")
    exhausted = sum(1 for op in ops if op.error == "retries-exhausted")
    return {
        "label": label,
        "writers": writers,
        "seconds": seconds,
        "transactions": sum(1 for op in ops if op.invoked),
        "committed": len(committed),
        "retries_exhausted": exhausted,
        "over_64_attempts": sum(1 for a in attempts if a > 64),
        "attempts_mean": round(statistics.fmean(attempts), 2) if attempts else 0,
        "attempts_p99": attempts[int(0.99 * (len(attempts) - 1))] if attempts else 0,
        "attempts_max": attempts[-1] if attempts else 0,
        "per_writer": per_writer,
        "min_over_max": round(min(per_writer) / max(per_writer), 3) if max(per_writer) else 0,
        "history_checked": True,  # check_history raised otherwise (lost, partial, ...)
        "unknown": summary["unknown"],
        "failed": summary["failed"],
        "requests_per_commit": round(summary["storage_requests"] / max(1, len(committed)), 1),
        "run_seconds": summary["run_seconds"],
        "check_seconds": summary["check_seconds"],
        "elapsed_seconds": round(elapsed, 1),
        "latency_p50": _pct(latency, 0.5),
        "latency_p99": _pct(latency, 0.99),
        "latency_max": latency[-1] if latency else 0,
    }


def _pct(values: list[float], q: float) -> float:
    return round(values[int(q * (len(values) - 1))], 3) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--only", choices=["current", *WORKERS])
    parser.add_argument(
        "--compare", default="capped-jitter", choices=list(WORKERS), help="baseline run"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log
    from s3_server import moto_s3

    from trinityfs.txn.backoff import (
        BACKOFF_CAP_SECONDS,
        COMMIT_BUDGET_SECONDS,
        PRIORITY_LOSSES,
    )

    labels = [args.only] if args.only else ["current", args.compare]
    results = []
    with moto_s3(BUCKET) as options:
        for label in labels:
            result = run(label, options, args.writers, args.seconds)
            results.append(result)
            print(json.dumps(result), flush=True)
    print()
    print(
        f"current: after n lost races wait (K - n + U)/K attempt durations (K = "
        f"{PRIORITY_LOSSES}, capped at {BACKOFF_CAP_SECONDS:g}s), fresh commits under "
        f"contention wait K/K; commit budget {COMMIT_BUDGET_SECONDS:g}s"
    )
    header = (
        f"{'run':<12} {'txns':>6} {'commits':>8} {'exhausted':>9} {'>64 att':>8} "
        f"{'att mean':>8} {'att p99':>8} {'att max':>8} {'lat p50':>8} {'lat p99':>8} "
        f"{'lat max':>8} {'min/max':>8} {'req/commit':>10}  per writer"
    )
    print(header)
    for r in results:
        print(
            f"{r['label']:<12} {r['transactions']:>6} {r['committed']:>8} "
            f"{r['retries_exhausted']:>9} {r['over_64_attempts']:>8} {r['attempts_mean']:>8} "
            f"{r['attempts_p99']:>8} {r['attempts_max']:>8} {r['latency_p50']:>8} "
            f"{r['latency_p99']:>8} {r['latency_max']:>8} {r['min_over_max']:>8} "
            f"{r['requests_per_commit']:>10}  {r['per_writer']}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
