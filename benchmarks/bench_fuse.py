"""FUSE mount benchmark: `ls -l` and `cat` of every file of a big namespace, against the
same tree as plain files on local disk, in the same run.

Builds a lakehouse with one namespace of N tables (loaded over several commits, so file
times come from different versions), writes the same definitions as plain JSON files in
a local directory, mounts the lakehouse (a real FUSE mount in a child process, as
`trinityfs mount` runs it), then times the shell tools on both trees. The first run on
the mount is cold (nothing rendered or cached by the mount process yet); the following
runs are warm. Each figure is the best of --repeat runs (the cold one is a single run).

    python benchmarks/bench_fuse.py                       # 10,000 tables
    python benchmarks/bench_fuse.py --tables 100000 --repeat 3 -o latest_ttl=0
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trinityfs import Lakehouse
from trinityfs.fs.content import render

NAMESPACE = "bench"


def build(root: str, plain: Path, tables: int, commits: int) -> None:
    lake = Lakehouse.create(root)
    lake.create_namespace(NAMESPACE, {"owner": "bench"})
    per_commit = max(1, tables // commits)
    for start in range(0, tables, per_commit):
        with lake.transaction() as txn:
            for i in range(start, min(tables, start + per_commit)):
                txn.create_table(
                    NAMESPACE,
                    f"t{i:06d}",
                    {
                        "table_format": "ICEBERG",
                        "properties": {"owner": f"team{i % 17}", "location": f"s3://b/t{i}"},
                    },
                )
    lake.create_table(NAMESPACE, "zz_flush")  # flush the last load into the tree
    snap = lake.snapshot()
    (plain / NAMESPACE).mkdir(parents=True)
    for name in snap.list_tables(NAMESPACE, limit=None):
        data = render("table", snap.describe_table(NAMESPACE, name))
        (plain / NAMESPACE / name).write_bytes(data)


def timed(cmd: str, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["sh", "-c", cmd], cwd=cwd, check=True, stdout=subprocess.DEVNULL, timeout=3600)
    return time.perf_counter() - start


def mount(root: str, mountpoint: Path, options: list[str]) -> subprocess.Popen:
    mountpoint.mkdir()
    args = [sys.executable, "-m", "trinityfs.fuse", root, str(mountpoint), "--foreground"]
    for option in options:
        args += ["-o", option]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not os.path.ismount(mountpoint):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"mount failed: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.02)
    return proc


def unmount(proc: subprocess.Popen, mountpoint: Path) -> None:
    subprocess.run(["fusermount", "-u", str(mountpoint)], check=False)
    proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=10, help="commits that load the tables")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("-o", dest="options", action="append", default=[], help="mount options")
    parser.add_argument("--workdir", help="where to build (default: a temporary directory)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        root, plain, mnt = str(work / "lake"), work / "plain", work / "mnt"
        start = time.perf_counter()
        build(root, plain, args.tables, args.commits)
        files = args.tables + 1
        print(
            f"built {files} tables over {args.commits + 2} commits and the plain copy "
            f"in {time.perf_counter() - start:.1f}s"
        )
        import mfusepy

        print(
            f"python {platform.python_version()}, libfuse "
            f"{mfusepy.fuse_version_major}.{mfusepy.fuse_version_minor}, "
            f"{os.cpu_count()} CPUs, mount options: {','.join(args.options) or '(defaults)'}"
        )
        commands = {
            "ls -l": "ls -l > /dev/null",
            "cat every file": "cat * > /dev/null",
        }
        rows = []
        proc = mount(root, mnt, args.options)
        try:
            ns_mnt, ns_plain = mnt / NAMESPACE, plain / NAMESPACE
            for label, cmd in commands.items():
                # cold: a fresh mount process has rendered nothing yet
                unmount(proc, mnt)
                mnt.rmdir()
                proc = mount(root, mnt, args.options)
                cold = timed(cmd, ns_mnt)
                warm = min(timed(cmd, ns_mnt) for _ in range(args.repeat))
                local = min(timed(cmd, ns_plain) for _ in range(args.repeat))
                rows.append((label, cold, warm, local))
        finally:
            unmount(proc, mnt)

    print()
    print(
        f"{'command (' + str(files) + ' files)':<28}{'mount cold':>12}{'mount warm':>12}"
        f"{'local disk':>12}{'warm/local':>12}{'per file warm':>15}"
    )
    for label, cold, warm, local in rows:
        print(
            f"{label:<28}{cold:>11.3f}s{warm:>11.3f}s{local:>11.3f}s"
            f"{warm / local:>11.1f}x{warm / files * 1e6:>13.0f}us"
        )


if __name__ == "__main__":
    main()
