"""A sorted spill: (key, value) string pairs added in any order, read back sorted.

Pairs are kept in memory up to `run_size`, then sorted and written as one run (an Arrow
IPC file in a private temporary directory); reading merges the runs, one small batch of
each at a time. Memory is O(run_size + runs * batch), independent of how many pairs
were added: what a bulk load of millions of objects needs to stage its keys.
"""

from __future__ import annotations

import heapq
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

_SCHEMA = pa.schema([("key", pa.string()), ("value", pa.string())])
DEFAULT_RUN_SIZE = 65_536
READ_BATCH = 4_096


class SortedSpill:
    """Pairs added with `add`; `sorted_pairs()` yields them in key order (equal keys in
    the order they were added). `close()` removes the temporary files."""

    def __init__(self, directory: str | Path | None = None, run_size: int = DEFAULT_RUN_SIZE):
        if run_size < 1:
            raise ValueError("run_size must be at least 1")
        self.run_size = run_size
        self._dir = Path(tempfile.mkdtemp(prefix="trinityfs-spill-", dir=directory))
        self._buffer: list[tuple[str, str]] = []
        self._runs: list[Path] = []
        self.count = 0

    @property
    def in_memory(self) -> int:
        """Pairs held in memory now (at most run_size)."""
        return len(self._buffer)

    @property
    def runs(self) -> int:
        return len(self._runs)

    def add(self, key: str, value: str) -> None:
        self._buffer.append((key, value))
        self.count += 1
        if len(self._buffer) >= self.run_size:
            self._spill()

    def _spill(self) -> None:
        if not self._buffer:
            return
        self._buffer.sort(key=_first)  # stable: equal keys stay in the order added
        path = self._dir / f"run-{len(self._runs):06d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, _SCHEMA) as writer:
            for start in range(0, len(self._buffer), READ_BATCH):
                part = self._buffer[start : start + READ_BATCH]
                writer.write_batch(
                    pa.record_batch(
                        [
                            pa.array([p[0] for p in part], pa.string()),
                            pa.array([p[1] for p in part], pa.string()),
                        ],
                        schema=_SCHEMA,
                    )
                )
        self._runs.append(path)
        self._buffer = []

    def sorted_pairs(self) -> Iterator[tuple[str, str]]:
        """Every pair in key order; may be called more than once (a commit that lost a
        race validates and rebuilds again)."""
        self._spill()
        if len(self._runs) == 1:
            yield from _read_run(self._runs[0])
            return
        yield from heapq.merge(*(_read_run(p) for p in self._runs), key=_first)

    def close(self) -> None:
        self._buffer = []
        self._runs = []
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> SortedSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first(pair: tuple[str, str]) -> str:
    return pair[0]


def _read_run(path: Path) -> Iterator[tuple[str, str]]:
    # read, not memory-mapped: mapped pages would stay resident as the merge proceeds
    with pa.OSFile(str(path), "rb") as source:
        reader = pa.ipc.open_file(source)
        for i in range(reader.num_record_batches):
            batch = reader.get_batch(i)
            yield from zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True)
