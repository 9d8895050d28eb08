"""The root of a bulk load: the latest tree with the load's messages as Arrow columns.

FORMAT.md keeps a version's messages in its root, so a load of a million objects has a
root of a million buffer rows. They are streamed from the load's sorted spill into utf8
columns whose bytes are held once (about 0.3 KB per object, no Python object per row).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc

from trinityfs.errors import InvalidArgumentError
from trinityfs.format.definitions import node_file_compression
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF
from trinityfs.format.node_encode import encode_node_arrays, node_head_rows
from trinityfs.format.paths import root_node_file
from trinityfs.tree import Node, TreeWriter
from trinityfs.tree.node import MessageBuffer
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.publish import KEY_CREATED_AT, KEY_PREVIOUS_ROOT
from trinityfs.txn.snapshot import Snapshot

COLUMN_CHUNK = 65_536  # root buffer rows converted to Arrow at a time


PairSource = Callable[[], Iterable[tuple[str, str]]]


def build_bulk_root(
    engine: Engine, base: Snapshot, version: int, sorted_pairs: PairSource
) -> tuple[bytes, Node, list[str]]:
    """Root `version`: the base tree (older root messages flushed down as any commit
    does) with the load's messages appended to its buffer as Arrow columns, and the node
    files written for it. `sorted_pairs` yields the load's (key, location) pairs in key
    order; it is called twice at most."""
    ldef = base.lakehouse_def
    order = ldef.order
    compression = node_file_compression(ldef)
    nodes = engine.nodes(order)
    # The root may exceed its budget only with the latest commit's messages: flush
    # every older one down first (a root cap of 0 for this commit).
    verifier = engine.tree_verifier  # whole-tree verification (verify="tree")
    if verifier is not None:  # the load's own definitions were written by itself
        verifier.verify(base.root, nodes, base.lakehouse_def_location, version=base.version)
    policy = replace(TreeWriter.default_policy, root_buffer_bytes=0)
    writer = TreeWriter(nodes, order, engine.budget(ldef), version, policy)
    root = writer.commit(base.root, {})
    written = nodes.write_new_nodes(root, compression=compression)
    if verifier is not None:
        verifier.remember_written(written)
    root.system = {
        KEY_LAKEHOUSE_DEF: base.lakehouse_def_location,
        KEY_PREVIOUS_ROOT: root_node_file(base.version),
        KEY_CREATED_AT: str(max(now_millis(), base.created_at_millis + 1)),
    }
    older = dict(root.buffer)  # none left by that policy; kept correct if some were
    if older:  # one message per key: ours replace theirs (a pass over our keys)
        for key, _location in sorted_pairs():
            older.pop(key, None)
    ordered = sorted(older.items(), key=lambda item: (item[1][1], item[0]))
    root.buffer = MessageBuffer()
    head = node_head_rows(root.to_file(), order, compression=compression)
    # Rows: system and key table, older messages (oldest first), then ours.
    keys, values, txns = _StringColumn(), _StringColumn(), _StringColumn()
    keys.extend(head[0] + [k for k, _ in ordered])
    values.extend(head[1] + [m[0] for _, m in ordered])
    txns.extend(head[3] + [str(m[1]) for _, m in ordered])
    part_keys: list[str] = []
    part_values: list[str] = []
    for key, location in sorted_pairs():
        part_keys.append(key)
        part_values.append(location)
        if len(part_keys) >= COLUMN_CHUNK:
            keys.extend(part_keys)
            values.extend(part_values)
            part_keys, part_values = [], []
    keys.extend(part_keys)
    values.extend(part_values)
    n_head = len(head[0])
    txns.repeat(str(version), keys.rows - txns.rows)
    n_buf = keys.rows - n_head
    pnodes = pa.concat_arrays([pa.array(head[2], pa.string()), pa.nulls(n_buf, pa.string())])
    arrays = [keys.finish(), values.finish(), pnodes, txns.finish()]
    for array in arrays:
        array.validate(full=True)
    return encode_node_arrays(arrays, compression=compression), root, written


class _StringColumn:
    """A utf8 column appended to in parts of Python strings, its bytes held once (no
    chunks concatenated at the end: a bulk load's root columns are its memory peak)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.lengths: list[pa.Array] = []
        self.valid: list[pa.Array] = []
        self.rows = 0

    def extend(self, strings: list[str | None]) -> None:
        if not strings:
            return
        encoded = "".join(s for s in strings if s is not None).encode("utf-8")
        chars = sum(len(s) for s in strings if s is not None)
        if len(encoded) == chars:  # ASCII: a character is a byte
            lengths = [0 if s is None else len(s) for s in strings]
        else:
            lengths = [0 if s is None else len(s.encode("utf-8")) for s in strings]
        self.data += encoded
        self.lengths.append(pa.array(lengths, pa.int64()))
        self.valid.append(pa.array([s is not None for s in strings], pa.bool_()))
        self.rows += len(strings)

    def repeat(self, value: str, count: int) -> None:
        if count <= 0:
            return
        encoded = value.encode("utf-8")
        self.data += encoded * count
        self.lengths.append(pa.repeat(pa.scalar(len(encoded), pa.int64()), count))
        self.valid.append(pa.repeat(pa.scalar(True), count))
        self.rows += count

    def finish(self) -> pa.Array:
        if len(self.data) >= 2**31:
            raise InvalidArgumentError(
                f"the root of this bulk load would hold {len(self.data):,} bytes in one "
                "column, over Arrow's 2 GiB utf8 limit: load the objects in several parts"
            )
        lengths = pa.concat_arrays(self.lengths) if self.lengths else pa.array([], pa.int64())
        ends = pc.cumulative_sum(lengths).cast(pa.int32())
        offsets = pa.concat_arrays([pa.array([0], pa.int32()), ends])
        valid = pa.concat_arrays(self.valid) if self.valid else pa.array([], pa.bool_())
        nulls = self.rows - pc.sum(valid).as_py() if self.rows else 0
        validity = valid.buffers()[1] if nulls else None
        return pa.Array.from_buffers(
            pa.string(),
            self.rows,
            [validity, offsets.buffers()[1], pa.py_buffer(self.data)],
            null_count=nulls,
        )
