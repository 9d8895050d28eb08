"""8 writers updating different property names of one namespace, against the baseline.

Each of --writers threads (own Lakehouse instance, one local lakehouse) sets its own
property name --rounds times. trinityfs: `set_namespace_properties`, whose writes
commute with concurrent ones on other names. Baseline (same run, after it): the same
updates as a read-modify-write of the whole definition (`replace_namespace` in a
transaction), which is what every property update was before issue 13. Prints the
success rate and checks that nothing was lost: every acknowledged update is in the
version it was acknowledged with, and every version changes exactly one property.

    python benchmarks/bench_commute.py --writers 8 --rounds 20
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time

from trinityfs import Lakehouse
from trinityfs.errors import CommitConflictError, CommitRetriesExhaustedError


def run(url: str, writers: int, rounds: int, commuting: bool) -> None:
    Lakehouse.create(url).create_namespace("ns")
    acked: list[tuple[int, str, str]] = []
    failed: list[str] = []
    lock = threading.Lock()

    def writer(w: int) -> None:
        lake = Lakehouse.open(url)
        for r in range(rounds):
            name, value = f"w{w}", str(r)
            try:
                with lake.transaction() as txn:
                    if commuting:
                        txn.set_namespace_properties("ns", {name: value})
                    else:
                        msg = txn.describe_namespace("ns")
                        msg.properties[name] = value
                        txn.replace_namespace("ns", msg)
                with lock:
                    acked.append((txn.txn.committed_version, name, value))
            except (CommitConflictError, CommitRetriesExhaustedError) as exc:
                with lock:
                    failed.append(type(exc).__name__)

    start = time.perf_counter()
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    lake = Lakehouse.open(url)
    lost = [a for a in acked if lake.at(a[0]).describe_namespace("ns").properties.get(a[1]) != a[2]]
    bad_versions = 0
    for v in range(2, lake.latest_version() + 1):
        before = dict(lake.at(v - 1).describe_namespace("ns").properties)
        after = dict(lake.at(v).describe_namespace("ns").properties)
        if len({k for k in after if before.get(k) != after[k]}) != 1 or set(before) - set(after):
            bad_versions += 1
    total = writers * rounds
    label = "trinityfs (commuting)" if commuting else "baseline (read-modify-write)"
    print(
        f"  {label:<30} succeeded {len(acked)}/{total} = {100 * len(acked) / total:5.1f}%   "
        f"failed {len(failed)}   lost acknowledged {len(lost)}   versions not one update "
        f"{bad_versions}   {total / elapsed:6.1f} attempts/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(f"== {args.writers} writers x {args.rounds} updates of their own property name ==")
    with tempfile.TemporaryDirectory() as tmp:
        run(f"{tmp}/commuting", args.writers, args.rounds, commuting=True)
        run(f"{tmp}/baseline", args.writers, args.rounds, commuting=False)


if __name__ == "__main__":
    main()
