"""Issue 13: tree/budget.py's buffer_bytes re-summed the whole root buffer twice per
commit (31% of a commit's time). A commit now costs O(its own messages) in size
accounting, whatever the size of the root buffer it starts from."""

from __future__ import annotations

import uuid

import trinityfs.tree.budget as budget
from trinityfs.storage import Storage
from trinityfs.tree import Node, NodeStore, TreeWriter


def test_commit_does_not_resum_a_large_root_buffer(monkeypatch) -> None:
    store = NodeStore(Storage(f"memory://resum-{uuid.uuid4().hex}"), 128)
    root = Node.empty_leaf()
    for i in range(3000):
        root.buffer[f"k{i:05d}".ljust(200)] = (f"loc/{i}", 1)
    root.location = "committed-root"  # as decoded: shared, copied by the writer
    calls = 0
    real = budget.message_bytes

    def counting(key, message):
        nonlocal calls
        calls += 1
        return real(key, message)

    monkeypatch.setattr(budget, "message_bytes", counting)
    writer = TreeWriter(store, 128, 10**7, 2, budget.FlushPolicy(10**7, 10**7))
    new = writer.commit(root, {"new-key": "loc/new"})
    assert len(new.buffer) == 3001
    assert calls <= 5, f"{calls} message size computations for a one-key commit"
