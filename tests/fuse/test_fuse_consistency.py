"""Readers of a mount see whole versions: 8+ threads (and `cat`) reading while another
process commits new definitions of very different sizes; every read is one version."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from fuse_helpers import FUSE, Mount

from trinityfs import Lakehouse

pytestmark = FUSE

FILES = ["f0", "f1", "f2", "f3"]
READERS = 10
CAT_READERS = 2
DURATION = 4.0

WRITER = r"""
import hashlib, sys, time
from trinityfs import Lakehouse
lake = Lakehouse.open(sys.argv[1])
deadline = time.monotonic() + float(sys.argv[2])
seq = 0
while time.monotonic() < deadline:
    seq += 1
    pad = "x" * ((seq * 7919) % 6000)    # sizes from 0 to 6 KB: reads span many chunks
    check = hashlib.sha256(f"{seq}:{pad}".encode()).hexdigest()
    with lake.transaction() as txn:
        for name in ("f0", "f1", "f2", "f3"):
            props = {"seq": str(seq), "pad": pad, "check": check, "name": name}
            txn.replace_table("c", name, {"table_format": "ICEBERG", "properties": props})
print(seq)
"""


def verify(data: bytes, name: str) -> int:
    """The seq of one complete, self-consistent definition (AssertionError otherwise)."""
    doc = json.loads(data)
    props = doc["definition"]["properties"]
    if not props:
        return 0  # the initial version
    seq, pad = props["seq"], props["pad"]
    assert props["name"] == name
    assert props["check"] == hashlib.sha256(f"{seq}:{pad}".encode()).hexdigest()
    return int(seq)


def test_readers_see_one_version_per_read_while_another_process_commits(
    tmp_path: Path, make_mount
) -> None:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("c")
    with lake.transaction() as txn:
        for name in FILES:
            txn.create_table("c", name)
    # latest_ttl=0: every open probes the latest version, so readers meet many versions
    m: Mount = make_mount(root, "-o", "latest_ttl=0")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, root, str(DURATION)], stdout=subprocess.PIPE, text=True
    )
    stop = threading.Event()
    seen: list[set[int]] = [set() for _ in range(READERS + CAT_READERS)]
    reads = [0] * (READERS + CAT_READERS)
    failures: list[str] = []

    def reader(i: int) -> None:
        n = 0
        while not stop.is_set():
            name = FILES[(i + n) % len(FILES)]
            n += 1
            try:
                with open(m.path / "c" / name, "rb", buffering=0) as f:
                    chunks = []
                    while chunk := f.read(509):  # many FUSE reads per file
                        chunks.append(chunk)
                seen[i].add(verify(b"".join(chunks), name))
                reads[i] += 1
            except Exception as exc:
                failures.append(f"reader {i} {name}: {type(exc).__name__}: {exc}")
                return

    def cat_reader(i: int) -> None:
        while not stop.is_set():
            paths = [str(m.path / "c" / name) for name in FILES]
            for path, name in zip(paths, FILES, strict=True):
                out = subprocess.run(["cat", path], capture_output=True, timeout=30)
                try:
                    assert out.returncode == 0, out.stderr
                    seen[i].add(verify(out.stdout, name))
                    reads[i] += 1
                except Exception as exc:
                    failures.append(f"cat {name}: {type(exc).__name__}: {exc}")
                    return

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(READERS)]
    threads += [
        threading.Thread(target=cat_reader, args=(READERS + i,)) for i in range(CAT_READERS)
    ]
    for t in threads:
        t.start()
    try:
        out, _ = writer.communicate(timeout=DURATION + 60)
    finally:
        time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert writer.returncode == 0
    commits = int(out.strip())
    assert not failures, failures[:5]
    everything = set().union(*seen)
    assert sum(reads) >= 200, reads
    assert commits >= 5 and len(everything) >= 5, (commits, sorted(everything))
    assert all(reads[i] > 0 for i in range(len(reads))), reads
    print("commits", commits, "reads", sum(reads), "versions seen", len(everything))
    assert "Traceback" not in m.log_text()
