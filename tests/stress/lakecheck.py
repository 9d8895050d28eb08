"""Whole-lakehouse verification shared by the stress suites.

Independent of trinityfs.lifecycle on purpose: the reachability walk here is a second
implementation, so a bug in the engine's own garbage collector cannot hide a bug here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa

from trinityfs import Lakehouse
from trinityfs.format.node_decode import decode_node
from trinityfs.format.paths import (
    LATEST_HINT,
    OLDEST_VERSION,
    parse_root_node_file,
    root_node_file,
)
from trinityfs.storage import Storage

MARKERS = frozenset({LATEST_HINT, OLDEST_VERSION})

# {namespace: (namespace properties, {name: (kind, properties)})}
State = dict[str, tuple[dict[str, str], dict[str, tuple[str, dict[str, str]]]]]


def read_state(view) -> State:
    """Every namespace, table and view of a version, with their properties."""
    state: State = {}
    for ns in view.list_namespaces():
        objects: dict[str, tuple[str, dict[str, str]]] = {}
        for kind in ("table", "view"):
            for name in view.list_names(kind, ns):
                objects[name] = (kind, dict(view.describe(kind, ns, name).properties))
        state[ns] = (view.namespace_properties(ns), objects)
    return state


def root_versions(storage: Storage) -> list[int]:
    """Versions of the root node files at the top of the lakehouse, by listing."""
    return sorted(
        v
        for e in storage.list("")
        if "/" not in e.location and (v := parse_root_node_file(e.location)) is not None
    )


def check_versions(lake: Lakehouse) -> int:
    """Versions dense (by probing and by listing), every one with a valid tree.

    Returns the latest version.
    """
    latest = lake.latest_version()
    oldest = lake.oldest_version()
    assert [v.version for v in lake.versions()] == list(range(oldest, latest + 1))
    listed = root_versions(lake.storage)
    assert listed == list(range(oldest, latest + 1)), f"root files {listed} not dense"
    for v in range(oldest, latest + 1):
        lake.check(v)
    return latest


@dataclass
class Reach:
    """Files reachable from the roots of a lakehouse, by kind."""

    roots: set[str] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)
    definitions: set[str] = field(default_factory=set)

    @property
    def all(self) -> set[str]:
        return self.roots | self.nodes | self.definitions


def reachable(storage: Storage, versions: Iterable[int]) -> Reach:
    """Walk every node of the given versions: nodes, definitions, lakehouse definitions."""
    reach = Reach()
    todo: list[str] = []
    for v in versions:
        loc = root_node_file(v)
        reach.roots.add(loc)
        todo.append(loc)
    while todo:
        loc = todo.pop()
        node = decode_node(storage.read_immutable(loc), None, loc)
        if "lakehouse_def" in node.system:
            reach.definitions.add(node.system["lakehouse_def"])
        reach.definitions.update(node.values)
        reach.definitions.update(value for _k, value, _t in node.buffer if value is not None)
        for child in node.children or ():
            if child not in reach.nodes:
                reach.nodes.add(child)
                todo.append(child)
    return reach


_UUID_NAME = re.compile(r"([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})\.(?:arrow|binpb)$")
_SCHEME_TAG_BITS = format(0x7F1A1, "020b")  # docs/FORMAT-CHOICES.md, "Integrity"


def _name_hash_bits(location: str) -> str | None:
    """The 60 content-hash bits a trinityfs file name carries (bit strings, not ints:
    a second implementation of format/integrity.py's layout), or None."""
    match = _UUID_NAME.search(location)
    if match is None:
        return None
    bits = format(int(match.group(1).replace("-", ""), 16), "0128b")
    if bits[48:52] != "1000" or bits[64:66] != "10":
        return None
    free = bits[0:48] + bits[52:64] + bits[66:128]
    return free[:60] if free[60:80] == _SCHEME_TAG_BITS else None


def _rows_digest(data: bytes) -> str | None:
    """The rows checksum of a node file recomputed from Python values, or None if the
    file carries none."""
    with pa.ipc.open_file(pa.py_buffer(data)) as reader:
        table = reader.read_all()
    if b"trinityfs.rows-sha256" not in (table.schema.metadata or {}):
        return None
    h = hashlib.sha256(b"trinityfs node rows v1\x00")
    h.update(table.num_rows.to_bytes(8, "little"))
    for name in table.column_names:
        values = [None if v is None else v.encode() for v in table.column(name).to_pylist()]
        h.update(
            b"".join(
                (-1 if v is None else len(v)).to_bytes(4, "little", signed=True) for v in values
            )
        )
        h.update(b"".join(v for v in values if v is not None))
    return h.hexdigest()


def verify_files(storage: Storage, locations: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """(location, problem) for every file whose bytes disagree with the content hash in
    its name or, for node files, with the rows checksum they carry. Default: every file
    listed. Independent of trinityfs.format.integrity on purpose."""
    if locations is None:
        locations = [e.location for e in storage.list("")]
    problems: list[tuple[str, str]] = []
    for loc in sorted(locations):
        try:
            data = storage.read(loc)
        except Exception as exc:
            problems.append((loc, f"unreadable: {exc}"))
            continue
        expected = _name_hash_bits(loc)
        if expected is not None:
            digest = format(int.from_bytes(hashlib.sha256(data).digest()[:8], "big"), "064b")
            if digest[:60] != expected:
                problems.append((loc, "content does not match the hash in its name"))
            continue
        base = loc.rpartition("/")[2]
        if base.endswith(".arrow") and (parse_root_node_file(base) is not None or "/" not in loc):
            try:
                stored = pa.ipc.open_file(pa.py_buffer(data)).schema.metadata or {}
                digest = _rows_digest(data)
            except Exception as exc:
                problems.append((loc, f"not an Arrow file: {exc}"))
                continue
            if digest is not None and stored[b"trinityfs.rows-sha256"].decode() != digest:
                problems.append((loc, "rows do not match the checksum in the file"))
    return problems


def orphans(lake: Lakehouse) -> tuple[list[str], Reach]:
    """Files (temporary ones included) that no version, marker or export needs."""
    latest = lake.latest_version()
    reach = reachable(lake.storage, range(lake.oldest_version(), latest + 1))
    keep = reach.all | MARKERS
    listed = [e.location for e in lake.storage.list("", include_temporary=True)]
    return sorted(loc for loc in listed if loc not in keep), reach


def reclaim(lake: Lakehouse) -> int:
    """Reclaim every orphan, then prove nothing needed went: every version checks and
    reads in full. Returns how many files were reclaimed.

    With trinityfs.lifecycle present, its fsck must be clean and list exactly these
    orphans, and its garbage collection (expire with no grace period) must remove them
    all; otherwise they are deleted here.
    """
    found, reach = orphans(lake)
    assert not set(found) & reach.all, "an orphan is referenced"
    corrupt = verify_files(lake.storage, reach.all)
    assert not corrupt, f"reachable files fail verification: {corrupt[:3]}"
    if hasattr(lake, "fsck") and hasattr(lake, "expire"):
        report = lake.fsck()
        assert report.ok, f"fsck: {report.errors[:3]}"
        theirs = {f.location for f in (*report.orphans, *report.unknown_files)}
        assert theirs == set(found), f"fsck disagrees on orphans: {sorted(theirs ^ set(found))}"
        from expire_clock import expiring_later  # past the grace floor (longest commit)

        with expiring_later():
            lake.expire(grace_millis=0)
        left, _ = orphans(lake)
        assert not left, f"garbage collection left orphans: {left[:5]}"
    else:
        for loc in found:
            lake.storage.delete(loc)
    fresh = Lakehouse.open(lake.url, storage_options=lake.storage.storage_options)
    latest = check_versions(fresh)
    for v in range(fresh.oldest_version(), latest + 1):
        read_state(fresh.at(v))
    missing = [loc for loc in sorted(reach.all) if not fresh.storage.exists(loc)]
    assert not missing, f"reachable files gone: {missing[:5]}"
    return len(found)
