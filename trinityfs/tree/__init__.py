"""The B-epsilon tree of the TrinityLake format, over node files in a `Storage`."""

from trinityfs.tree.check import TreeStats, check_tree
from trinityfs.tree.node import Node
from trinityfs.tree.reader import lookup, prefix_upper_bound, scan, scan_prefix
from trinityfs.tree.store import NodeStore
from trinityfs.tree.writer import TreeWriter

__all__ = [
    "Node",
    "NodeStore",
    "TreeStats",
    "TreeWriter",
    "check_tree",
    "lookup",
    "prefix_upper_bound",
    "scan",
    "scan_prefix",
]
