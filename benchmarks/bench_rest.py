"""The Iceberg REST server against TrinityCatalog used directly, in one run.

Builds a fresh local lakehouse with one Iceberg table (--snapshots appends, so the
metadata has that many snapshots), starts `python -m trinityfs.rest` twice as real
processes on 127.0.0.1 (one with its version-keyed table cache, one with
--cache-entries 0), and times, interleaved in --rounds rounds so that machine noise hits
every variant alike:

loadTable
- direct:      TrinityCatalog.load_table (catalog lookup + metadata file read + parse)
- rest:        PyIceberg RestCatalog.load_table through the caching server
- rest-nocache RestCatalog.load_table through the server without cache
- http:        a bare GET /v1/latest/namespaces/bench/tables/events (httpx, keep-alive:
               server time + loopback HTTP, no client-side parsing)
- http-floor:  GET of an unknown path (a 404 answered without any catalog work): what
               loopback HTTP and the event loop cost on this machine
- server-work: the server's own work for that GET, called in-process (no HTTP):
               RestCatalogService.load_table with and without its cache

commits (a set-properties change: one catalog version each, no data files)
- direct:      TrinityCatalog table transaction
- rest:        RestCatalog table transaction through the server

It prints median and p90 per operation, the REST overhead per loadTable (rest minus
direct, medians), commits/s, and the HTTP requests each client call made.

    python benchmarks/bench_rest.py --snapshots 20 --rounds 5 --loads 100 --commits 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


class Server:
    def __init__(self, root: str, *args: str):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        cmd = [sys.executable, "-m", "trinityfs.rest", "--root", root, "--port", "0", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit(f"server did not start: {line!r}")
        self.url = line.split()[-1]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshots", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--loads", type=int, default=100, help="loadTable calls per variant per round")
    ap.add_argument("--commits", type=int, default=20, help="commits per variant per round")
    args = ap.parse_args()

    import httpx
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog

    from trinityfs import Lakehouse
    from trinityfs.iceberg import TrinityCatalog

    tmp = tempfile.mkdtemp(prefix="bench-rest-")
    root = f"{tmp}/lake"
    Lakehouse.create(root)
    direct = TrinityCatalog("direct", root=root)
    direct.create_namespace("bench")
    table = direct.create_table("bench.events", pa.schema([("id", pa.int64())]))
    for i in range(args.snapshots):
        table.append(pa.table({"id": list(range(i * 10, i * 10 + 10))}))
    direct.create_table("bench.props", pa.schema([("id", pa.int64())]))

    cached, uncached = Server(root), Server(root, "--cache-entries", "0")
    try:
        rest = RestCatalog("rest", uri=cached.url)
        rest_nocache = RestCatalog("rest-nocache", uri=uncached.url)
        requests_made: list[str] = []
        rest._session.hooks["response"].append(
            lambda r, *a, **k: requests_made.append(f"{r.request.method} {r.status_code}")
        )
        http = httpx.Client(base_url=cached.url)
        path = "/v1/latest/namespaces/bench/tables/events"
        metadata_bytes = len(http.get(path).content)

        loads: dict[str, Callable[[], object]] = {
            "direct": lambda: direct.load_table("bench.events"),
            "rest": lambda: rest.load_table("bench.events"),
            "rest-nocache": lambda: rest_nocache.load_table("bench.events"),
            "http": lambda: http.get(path).raise_for_status(),
            "http-floor": lambda: http.get("/v1/no-such-endpoint"),
        }
        counter = [0]

        def commit_with(catalog) -> Callable[[], object]:
            def commit() -> None:
                counter[0] += 1
                t = catalog.load_table("bench.props")
                with t.transaction() as tx:
                    tx.set_properties(n=str(counter[0]))

            return commit

        from trinityfs.rest.options import ServerConfig
        from trinityfs.rest.selector import Pin
        from trinityfs.rest.server import build_service

        latest = Pin(None, "latest")
        svc = build_service(ServerConfig(root=root))
        svc_nocache = build_service(ServerConfig(root=root, cache_entries=0))
        loads["server-work"] = lambda: svc.load_table(latest, "bench", "events")
        loads["server-work-nocache"] = lambda: svc_nocache.load_table(latest, "bench", "events")
        commits = {"direct": commit_with(direct), "rest": commit_with(rest)}
        for fn in (*loads.values(), *commits.values()):  # warm up both servers and caches
            fn()

        load_samples: dict[str, list[float]] = {k: [] for k in loads}
        commit_samples: dict[str, list[float]] = {k: [] for k in commits}
        for _ in range(args.rounds):
            for name, fn in loads.items():
                load_samples[name] += timed(fn, args.loads)
            for name, fn in commits.items():
                commit_samples[name] += timed(fn, args.commits)

        requests_made.clear()
        rest.load_table("bench.events")
        per_load = len(requests_made)
        requests_made.clear()
        commit_with(rest)()
        per_commit = len(requests_made)
    finally:
        cached.stop()
        uncached.stop()

    load1, _, _ = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load1:.1f} (figures scale with load)")
    print(
        f"table: {args.snapshots} snapshots, loadTable response {metadata_bytes} bytes; "
        f"{args.rounds} interleaved rounds x {args.loads} loads / {args.commits} commits"
    )
    print(f"{'loadTable':<20} {'median ms':>10} {'p90 ms':>10}")
    medians = {}
    for name, samples in load_samples.items():
        med, p90 = summary(samples)
        medians[name] = med
        print(f"{name:<20} {med * 1e3:>10.3f} {p90 * 1e3:>10.3f}")
    print(
        f"REST overhead per loadTable (rest - direct, medians): "
        f"{(medians['rest'] - medians['direct']) * 1e3:+.3f} ms with the server's cache, "
        f"{(medians['rest-nocache'] - medians['direct']) * 1e3:+.3f} ms without"
    )
    print(f"{'commit':<20} {'median ms':>10} {'p90 ms':>10} {'commits/s':>10}")
    for name, samples in commit_samples.items():
        med, p90 = summary(samples)
        rate = len(samples) / sum(samples)
        print(f"{name:<20} {med * 1e3:>10.3f} {p90 * 1e3:>10.3f} {rate:>10.1f}")
    print(
        f"HTTP requests per RestCatalog call: load_table {per_load}, "
        f"load + set-properties commit {per_commit}"
    )


if __name__ == "__main__":
    main()
