"""Sizes that drive flushing: the byte estimate of buffered messages."""

from __future__ import annotations

from trinityfs.tree.node import Message

ROW_OVERHEAD_BYTES = 12  # Arrow offsets and validity bits of one row, roughly


def message_bytes(key: str, message: Message) -> int:
    value, txn = message
    size = len(key.encode()) + len(str(txn)) + ROW_OVERHEAD_BYTES
    if value is not None:
        size += len(value.encode())
    return size


def buffer_bytes(buffer: dict[str, Message]) -> int:
    return sum(message_bytes(k, m) for k, m in buffer.items())
