"""The crash workload for trees that rebalance by rotation (B*-style, docs/FORMAT-CHOICES.md).

Production rotates only in trees of order >= 256, which a crash suite cannot afford to
fill. This workload turns rotation on for an order-4 tree with a buffer of about one
message, so that single-table commits flush to the leaves at once and an overflowing
node often has a neighbour with room. The setup (one commit per operation, never
crashed) brings the tree to a shape where the crashed steps rotate leaves and internal
nodes; `count_rotations` lets the suite check that they really do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import workload

from trinityfs import Lakehouse
from trinityfs.format.definitions import MIN_ORDER
from trinityfs.tree import writer

STORAGE_OPTIONS = workload.STORAGE_OPTIONS
LAKE_OPTIONS = dict(workload.LAKE_OPTIONS, node_file_max_size_bytes=4 * (16 + 16 + 204) + 250)


def _ops(text: str) -> list[str]:
    return text.split()


# "+17" creates table a.t17, "-17" drops it; found by a seeded random walk (seed 1)
SETUP_OPS = _ops(
    "+17 +97 -17 +57 +48 +12 +49 +89 +92 +75 +40 -12 +01 +54 +67 -75 +70 -49 +37 +53 "
    "+71 +12 -89 +15 +64 +85 -64 +63 +64 +04 +95 +46 +89 +94 +56 +13 +66 +47 +03"
)
# the crashed steps: the 2nd and 8th rotate an internal node, the 3rd and 4th a leaf
STEPS = _ops("+39 +78 +50 +21 +69 -69 +73 +34 +77")


@contextmanager
def rotations_on() -> Iterator[None]:
    """Every tree writer made inside rebalances by rotation, whatever the order."""
    saved = writer.REDISTRIBUTE_MIN_ORDER
    writer.REDISTRIBUTE_MIN_ORDER = MIN_ORDER
    try:
        yield
    finally:
        writer.REDISTRIBUTE_MIN_ORDER = saved


@contextmanager
def count_rotations() -> Iterator[list[bool]]:
    """Collects whether each rotation attempt moved keys (True) or found no room."""
    attempts: list[bool] = []
    original = writer.TreeWriter._rotate

    def counted(self: writer.TreeWriter, node: writer.Node, i: int) -> bool:
        moved = original(self, node, i)
        attempts.append(moved)
        return moved

    writer.TreeWriter._rotate = counted  # type: ignore[method-assign]
    try:
        yield attempts
    finally:
        writer.TreeWriter._rotate = original  # type: ignore[method-assign]


def _apply(lake: Lakehouse, *, op: str) -> None:
    name = f"t{op[1:]}"
    if op[0] == "-":
        lake.drop_table("a", name)
    else:
        lake.create_table("a", name, workload.props(gen=op))


def setup(lake: Lakehouse) -> int:
    with rotations_on():
        lake.create_namespace("a")
        for op in SETUP_OPS:
            _apply(lake, op=op)
    return lake.latest_version()


def run_steps(lake: Lakehouse, ack_path: str | None = None) -> None:
    """One commit per step, rotations on; acknowledged steps go to `ack_path` as in
    `workload.run_steps`."""
    with rotations_on():
        workload.run_steps(lake, ack_path, [(op, partial(_apply, op=op)) for op in STEPS])


def crash_child(url: str, kind: str, at: int, ack_path: str) -> None:
    """Entry point of a crash run: the steps with SIGKILL at counted operation `at`."""
    workload.crash_child(url, kind, at, ack_path, run=run_steps)
