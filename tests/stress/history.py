"""A history recorder and checker for concurrent transactions (Jepsen style, in small).

Worker processes run transactions on one lakehouse and record every operation twice:
an ``invoke`` record just before commit (base version, what it read, what it will
write) and a completion record: ``ok`` (with the version), ``fail`` (nothing may be
visible: a conflict, an error that says nothing landed), ``info`` (unknown outcome:
AmbiguousWriteError, or no completion record at all) or ``aborted``.

Every table holds a token in its properties: ``op`` (the operation that wrote it) and
``n`` (a counter that each write increments, a read-modify-write). The checker then
reads every version of the lakehouse and proves:

- versions are dense (probing and listing agree) and every tree passes `check`;
- each version after the setup is the writes of exactly one operation, completed ok or
  unknown, and every acknowledged operation is the version it was told (nothing lost);
- failed and aborted operations left no trace in any version;
- reads were a snapshot: what a transaction read equals the state at its base version;
- SNAPSHOT: no lost update (first committer wins): every key a committed transaction
  wrote is unchanged between its base and the version before its own, and each counter
  is the previous one plus one;
- SERIALIZABLE: ordered by version the committed transactions explain the history
  serially: everything a serializable transaction read (keys and whole namespaces)
  equals the state at the version just before its own.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lakecheck import check_versions

from trinityfs import Lakehouse
from trinityfs.errors import (
    AmbiguousWriteError,
    CommitConflictError,
    CommitRetriesExhaustedError,
    TrinityError,
)
from trinityfs.format.definitions import decode_definition
from trinityfs.format.keys import KeyCodec
from trinityfs.format.trinitylake_pb2 import TableDef

HOT = "hot"
Tokens = dict[str, str]  # "ns/table" -> "op#n"


@dataclass(frozen=True)
class Workload:
    """Shape of the transactions every worker runs."""

    hot_tables: int = 6
    own_tables: int = 3
    temp_tables: int = 3  # names created and dropped again (in hot and own namespaces)
    hot_fraction: float = 0.5  # transactions on the shared namespace (overlapping keys)
    serializable_fraction: float = 0.3
    abort_fraction: float = 0.03
    scan_fraction: float = 0.3
    max_transactions_factor: int = 8  # give up after commits * this many transactions
    think_seconds: float = 0.0  # pause between transactions, up to this (less wasted races)
    duration_seconds: float = 0.0  # > 0: each worker stops starting transactions after this


def own_ns(proc: int) -> str:
    return f"own{proc}"


def hot_names(w: Workload) -> list[str]:
    return [f"h{i}" for i in range(w.hot_tables)]


def own_names(w: Workload) -> list[str]:
    return [f"o{i}" for i in range(w.own_tables)]


def temp_names(w: Workload) -> list[str]:
    return [f"tmp{i}" for i in range(w.temp_tables)]


def setup(lake: Lakehouse, procs: int, w: Workload) -> int:
    """Namespaces and tables every worker starts from, in one commit; returns its version."""
    props = {"properties": {"op": "setup", "n": "0"}}
    with lake.transaction() as t:
        t.create_namespace(HOT)
        for name in hot_names(w):
            t.create_table(HOT, name, props)
        for p in range(procs):
            t.create_namespace(own_ns(p))
            for name in own_names(w):
                t.create_table(own_ns(p), name, props)
    return t.txn.committed_version


def token(props: Any) -> str:
    return f"{props['op']}#{props['n']}"


def counter(tok: str) -> int:
    return int(tok.rpartition("#")[2])


class PlannedAbort(Exception):
    """Raised inside a transaction the workload chose to abort."""


# ---------------------------------------------------------------------------- workers


def worker(
    url: str,
    storage_options: dict | None,
    proc: int,
    commits: int,
    seed: int,
    out: str,
    w: Workload,
    fault_plan: Any = None,
) -> None:
    """Run transactions until `commits` are acknowledged; append records to `out`."""
    rng = random.Random(seed * 1000 + proc)
    lake = Lakehouse.open(url, storage_options=storage_options)
    if fault_plan is not None:
        from faults import inject

        inject(lake.storage, fault_plan)
    acked = 0
    with open(out, "a", buffering=1) as log:

        def record(**fields: Any) -> None:
            log.write(json.dumps(fields) + "\n")

        deadline = time.monotonic() + w.duration_seconds if w.duration_seconds else None
        for i in range(commits * w.max_transactions_factor):
            if acked >= commits or (deadline is not None and time.monotonic() > deadline):
                break
            op_id = f"p{proc}-{i}"
            if w.think_seconds:
                time.sleep(rng.uniform(0, w.think_seconds))
            if _one(lake, rng, proc, op_id, w, record) == "ok":
                acked += 1
        record(type="stats", proc=proc, stats=lake.storage.stats.snapshot())


def _one(lake: Lakehouse, rng: random.Random, proc: int, op_id: str, w: Workload, record) -> str:
    hot = rng.random() < w.hot_fraction
    ns = HOT if hot else own_ns(proc)
    pool = hot_names(w) if hot else own_names(w)
    iso = "SERIALIZABLE" if rng.random() < w.serializable_fraction else "SNAPSHOT"
    abort = rng.random() < w.abort_fraction
    reads: dict[str, str | None] = {}
    scans: dict[str, list[str]] = {}
    writes: dict[str, str | None] = {}
    common = {"id": op_id, "proc": proc, "group": "hot" if hot else "own", "isolation": iso}
    t = None
    try:
        t = lake.transaction(isolation=iso)

        def read(name: str) -> str | None:
            key = f"{ns}/{name}"
            if key in writes:
                return writes[key]
            if t.object_location("table", ns, name) is None:
                value = None
            else:
                value = token(t.describe_table(ns, name).properties)
            reads.setdefault(key, value)
            return value

        if rng.random() < w.scan_fraction:
            scans[ns] = t.list_tables(ns)
        for name in rng.sample(pool, rng.randint(1, 2)):
            read(name)
        for name in rng.sample(pool, rng.randint(1, 2)):
            n = counter(read(name)) + 1
            t.replace_table(ns, name, {"properties": {"op": op_id, "n": str(n)}})
            writes[f"{ns}/{name}"] = f"{op_id}#{n}"
        if rng.random() < 0.3:
            name = rng.choice(temp_names(w))
            if read(name) is None:
                t.create_table(ns, name, {"properties": {"op": op_id, "n": "0"}})
                writes[f"{ns}/{name}"] = f"{op_id}#0"
            else:
                t.drop_table(ns, name)
                writes[f"{ns}/{name}"] = None
        base = t.version
        if abort:
            raise PlannedAbort()
    except PlannedAbort:
        t.abort()
        record(type="aborted", base=base, reads=reads, scans=scans, writes=writes, **common)
        return "aborted"
    except TrinityError as exc:  # a read failed (fault injection): nothing was committed
        if t is not None:
            t.abort()
        record(type="fail", phase="read", error=type(exc).__name__, writes=writes, **common)
        return "fail"
    record(type="invoke", base=base, reads=reads, scans=scans, writes=writes, **common)
    started = time.monotonic()
    outcome: dict[str, Any] = {}
    try:
        version = t.commit()
        outcome = {"type": "ok", "version": version}
    except CommitConflictError as exc:
        outcome = {"type": "fail", "error": "conflict", "key": exc.key, "winner": exc.version}
    except CommitRetriesExhaustedError:
        outcome = {"type": "fail", "error": "retries-exhausted"}
    except AmbiguousWriteError as exc:
        outcome = {"type": "info", "error": type(exc).__name__}
    except TrinityError as exc:
        outcome = {"type": "fail", "error": type(exc).__name__, "message": str(exc)[:300]}
    record(
        id=op_id,
        attempts=t.txn.attempts,
        replays=t.txn.replays,
        seconds=round(time.monotonic() - started, 4),
        **outcome,
    )
    return outcome["type"]


# ---------------------------------------------------------------------------- running


@dataclass
class Op:
    id: str
    proc: int
    group: str
    isolation: str
    status: str  # ok, fail, info, aborted
    base: int | None = None
    reads: dict[str, str | None] = field(default_factory=dict)
    scans: dict[str, list[str]] = field(default_factory=dict)
    writes: dict[str, str | None] = field(default_factory=dict)
    version: int | None = None
    error: str | None = None
    attempts: int = 0
    replays: int = 0
    invoked: bool = False
    committed_at: int | None = None  # filled in by the checker


def load_ops(paths: list[Path]) -> list[Op]:
    """Merge invoke and completion records; an invocation without one is unknown."""
    ops: dict[str, Op] = {}
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if r["type"] == "stats":
                continue
            if "proc" in r:  # an invocation, an abort or a failure before commit
                ops[r["id"]] = Op(
                    id=r["id"],
                    proc=r["proc"],
                    group=r["group"],
                    isolation=r["isolation"],
                    status="info" if r["type"] == "invoke" else r["type"],
                    base=r.get("base"),
                    reads=r.get("reads", {}),
                    scans=r.get("scans", {}),
                    writes=r.get("writes", {}),
                    error=r.get("error"),
                    invoked=r["type"] == "invoke",
                )
            else:  # completion of an invocation
                op = ops[r["id"]]
                op.status = r["type"]
                op.version = r.get("version")
                op.error = r.get("error")
                op.attempts = r["attempts"]
                op.replays = r["replays"]
    return list(ops.values())


def run_history(
    url: str,
    storage_options: dict | None,
    workdir: Path,
    *,
    procs: int = 8,
    commits: int = 200,
    seed: int = 0,
    workload: Workload | None = None,
    fault_plan: Any = None,
    lake_options: dict | None = None,
    timeout: float = 900,
) -> dict[str, Any]:
    """Set up, run `procs` workers to `commits` acknowledged commits each, check it all."""
    w = workload or Workload()
    lake = Lakehouse.create(url, storage_options=storage_options, **(lake_options or {}))
    setup_version = setup(lake, procs, w)
    ctx = multiprocessing.get_context("spawn")
    logs = [workdir / f"history-{proc}.jsonl" for proc in range(procs)]
    started = time.monotonic()
    workers = [
        ctx.Process(
            target=worker,
            args=(url, storage_options, p, commits, seed, str(logs[p]), w, fault_plan),
        )
        for p in range(procs)
    ]
    for p in workers:
        p.start()
    deadline = time.monotonic() + timeout
    for p in workers:
        p.join(max(1.0, deadline - time.monotonic()))
    hung = [p.pid for p in workers if p.is_alive()]
    for p in workers:
        if p.is_alive():
            p.kill()
            p.join()
    assert not hung, f"workers still running after {timeout} s: {hung}"
    assert all(p.exitcode == 0 for p in workers), [p.exitcode for p in workers]
    run_seconds = time.monotonic() - started
    ops = load_ops(logs)
    fresh = Lakehouse.open(url, storage_options=storage_options)
    started = time.monotonic()
    summary = check_history(fresh, ops, setup_version)
    summary["check_seconds"] = round(time.monotonic() - started, 1)
    summary["run_seconds"] = round(run_seconds, 1)
    summary["procs"] = procs
    summary["storage_requests"] = sum(s["requests"] for s in worker_stats(logs))
    return summary


def worker_stats(paths: list[Path]) -> list[dict[str, int]]:
    """The storage request counters each worker reported when it finished."""
    out = []
    for path in paths:
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if r["type"] == "stats":
                out.append(r["stats"])
    return out


# ---------------------------------------------------------------------------- checking


def state_reader(lake: Lakehouse) -> Callable[[int], Tokens]:
    """state(v): every table of version v as "ns/table" -> token (definitions memoized)."""
    memo: dict[str, str] = {}

    def state(version: int) -> Tokens:
        snap = lake.engine.snapshot(version)
        keys = KeyCodec.from_lakehouse_def(snap.lakehouse_def)
        out: Tokens = {}
        for key, location in snap.items():
            decoded = keys.decode(key)
            if decoded.kind != "table":
                continue
            if location not in memo:
                tdef = decode_definition(lake.storage.read_immutable(location), TableDef, location)
                memo[location] = token(tdef.properties)
            out[f"{decoded.namespace}/{decoded.name}"] = memo[location]
        return out

    return state


def names_in(state: Tokens, ns: str) -> list[str]:
    return sorted(k.partition("/")[2] for k in state if k.partition("/")[0] == ns)


def check_history(lake: Lakehouse, ops: list[Op], setup_version: int) -> dict[str, Any]:
    """Check the recorded operations against every version; return the figures."""
    latest = check_versions(lake)  # dense, every tree valid
    read = state_reader(lake)
    states = [read(v) for v in range(latest + 1)]
    by_id = {op.id: op for op in ops}

    # every version after the setup is exactly the writes of one op that may have landed
    for v in range(setup_version + 1, latest + 1):
        before, after = states[v - 1], states[v]
        delta = {
            k: after.get(k) for k in before.keys() | after.keys() if before.get(k) != after.get(k)
        }
        writers = {tok.rpartition("#")[0] for tok in delta.values() if tok is not None}
        assert len(writers) == 1, f"version {v} holds writes of {sorted(writers)}: {delta}"
        op = by_id.get(writers.pop())
        assert op is not None, f"version {v} was written by an unrecorded op: {delta}"
        assert op.status in ("ok", "info"), f"version {v} holds {op.status} op {op.id}"
        assert op.committed_at is None, f"op {op.id} is in versions {op.committed_at} and {v}"
        assert delta == op.writes, f"version {v} is not exactly op {op.id}: {delta} vs {op.writes}"
        if op.status == "ok":
            assert op.version == v, f"op {op.id} acknowledged version {op.version}, is {v}"
        op.committed_at = v

    lost = [op.id for op in ops if op.status == "ok" and op.committed_at is None]
    assert not lost, f"acknowledged commits lost: {lost[:10]}"
    assert len({op.version for op in ops if op.status == "ok"}) == sum(
        op.status == "ok" for op in ops
    ), "two commits acknowledged one version"

    # isolation
    for op in ops:
        v = op.committed_at
        if v is None:
            continue
        base, prev = states[op.base], states[v - 1]
        assert op.base < v, f"op {op.id}: base {op.base} not before its version {v}"
        for k, tok in op.reads.items():
            assert base.get(k) == tok, (
                f"op {op.id} read {k}={tok}, base {op.base} has {base.get(k)}"
            )
        for ns, names in op.scans.items():
            assert names_in(base, ns) == names, f"op {op.id}: scan of {ns} is not its snapshot"
        for k, tok in op.writes.items():
            assert prev.get(k) == base.get(k), (
                f"lost update: op {op.id} (base {op.base}, version {v}) wrote {k}, which "
                f"changed from {base.get(k)} to {prev.get(k)} after its base"
            )
            if tok is not None:
                expected = 0 if prev.get(k) is None else counter(prev[k]) + 1
                assert counter(tok) == expected, f"op {op.id}: counter of {k} skipped"
        if op.isolation == "SERIALIZABLE":
            for k, tok in op.reads.items():
                assert prev.get(k) == tok, (
                    f"not serializable: op {op.id} read {k}={tok} but version {v - 1}, "
                    f"just before its own, has {prev.get(k)}"
                )
            for ns, names in op.scans.items():
                assert names_in(prev, ns) == names, (
                    f"not serializable: op {op.id}'s scan of {ns} differs from version {v - 1}"
                )

    # the figures
    status = Counter(op.status for op in ops)
    conflicts = [op for op in ops if op.status == "fail" and op.error == "conflict"]
    own_conflicts = [op.id for op in conflicts if op.group == "own"]
    assert not own_conflicts, f"transactions on disjoint keys conflicted: {own_conflicts[:5]}"
    return {
        "versions": latest + 1,
        "transactions": len(ops),
        "invoked": sum(op.invoked for op in ops),
        "ok": status["ok"],
        "failed": status["fail"],
        "unknown": status["info"],
        "unknown_landed": sum(1 for op in ops if op.status == "info" and op.committed_at),
        "aborted": status["aborted"],
        "conflicts": len(conflicts),
        "errors": dict(Counter(op.error for op in ops if op.status == "fail" and op.error)),
        "attempts": sum(op.attempts for op in ops),
        "replays": sum(op.replays for op in ops),
        "max_replays": max((op.replays for op in ops), default=0),
        "retries_exhausted": sum(op.error == "retries-exhausted" for op in ops),
        "ok_overlapping": sum(1 for op in ops if op.status == "ok" and op.group == "hot"),
        "ok_disjoint": sum(1 for op in ops if op.status == "ok" and op.group == "own"),
        "ok_serializable": sum(
            1 for op in ops if op.status == "ok" and op.isolation == "SERIALIZABLE"
        ),
        "reads_checked": sum(len(op.reads) + len(op.scans) for op in ops if op.committed_at),
    }
