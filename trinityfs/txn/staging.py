"""What a transaction stages before it commits: reads at its base version that see its
own writes, the buffered writes, and the dependencies they record.

`Staged` holds no commit logic: `trinityfs.txn.transaction.Transaction` adds the
commit, and decides (`_check_open`) whether writes are still accepted.

One transaction shared by threads: its reads, writes and commit take turns (`lock`),
so a write staged while another thread commits waits, and is then refused as the
transaction is closed, rather than being left out of the version the commit
acknowledged.
"""

from __future__ import annotations

import threading

from trinityfs.format.keys import KeyCodec
from trinityfs.format.trinitylake_pb2 import IsolationLevel, LakehouseDef
from trinityfs.txn.commute import Reapply, describe_key
from trinityfs.txn.conflicts import LAKEHOUSE_DEF_KEY, Dependencies
from trinityfs.txn.engine import Engine
from trinityfs.txn.pending import PendingWrites
from trinityfs.txn.snapshot import Snapshot, range_of_prefix, scan_overlaid

# protobuf's enum wrapper resolves attributes through __getattr__ (~1 us): read once
_SERIALIZABLE = IsolationLevel.SERIALIZABLE

# KeyCodecs by name size limits: every transaction describes its keys with one (only
# conflict messages use it), and building one checks its limits each time. Shared
# codecs are fine: describing a key only decodes it.
_CODECS: dict[tuple[int, int, int], KeyCodec] = {}
_CODECS_MAX = 64


def _codec_of(ldef: LakehouseDef) -> KeyCodec:
    """The KeyCodec of `ldef`'s name size limits (KeyCodec.from_lakehouse_def's)."""
    limits = (
        ldef.namespace_name_max_size_bytes,
        ldef.table_name_max_size_bytes,
        ldef.view_name_max_size_bytes,
    )
    codec = _CODECS.get(limits)
    if codec is None:
        codec = KeyCodec(*limits)  # raises on limits it refuses, as before
        if len(_CODECS) < _CODECS_MAX:
            _CODECS[limits] = codec
    return codec


class Staged:
    """A transaction's reads (read-your-writes at `base`) and buffered writes."""

    def __init__(self, engine: Engine, base: Snapshot, isolation: int | None = None):
        self.engine = engine
        self.base = base
        self.isolation = base.lakehouse_def.txn_isolation_level if isolation is None else isolation
        self.pending = PendingWrites()
        self.files: dict[str, bytes] = {}
        self.deps = Dependencies()
        codec = _codec_of(base.lakehouse_def)
        self.deps.describe = lambda key: describe_key(key, codec)
        self.new_lakehouse_def: LakehouseDef | None = None
        #: held by every read, write and commit of this transaction (re-entrant): a
        #: caller composing several into one change may hold it around them
        self.lock = threading.RLock()

    def _check_open(self) -> None:
        """Raise TransactionClosedError when writes are no longer accepted (the
        transaction defines when)."""
        raise NotImplementedError

    # -- reads ----------------------------------------------------------------------

    @property
    def base_version(self) -> int:
        return self.base.version

    @property
    def lakehouse_def(self) -> LakehouseDef:
        return self.new_lakehouse_def or self.base.lakehouse_def

    def get(self, key: str) -> str | None:
        """Read-your-writes lookup of `key`'s definition location."""
        with self.lock:
            if key in self.pending:
                return self.pending[key]
            if self.isolation == _SERIALIZABLE:  # only it validates reads
                self.deps.read_keys.add(key)
        return self.base.get(key)

    def scan_prefix(
        self, prefix: str, after: str | None = None, limit: int | None = None
    ) -> list[tuple[str, str]]:
        """Keys with `prefix` (after `after`, at most `limit`), pending changes applied."""
        with self.lock:
            if self.isolation == _SERIALIZABLE:
                self.deps.read_ranges.append(range_of_prefix(prefix))
            mine = self.pending.in_prefix(prefix, after)
            if not mine:
                return self.base.scan_prefix(prefix, after, limit)
            return scan_overlaid(self.base, prefix, after, limit, mine)

    def read_file(self, location: str) -> bytes:
        """An immutable definition file (one written by this transaction included)."""
        if location in self.files:
            return self.files[location]
        return self.engine.storage.read_immutable(location)

    # -- writes ---------------------------------------------------------------------

    def put(self, key: str, location: str, data: bytes, reapply: Reapply | None = None) -> None:
        """Point `key` at a new definition file `location` holding `data`.

        With `reapply`, a concurrent change of `key` is not a conflict by itself: after
        a lost race the write is re-applied onto the newer definition (txn/commute.py).
        """
        with self.lock:
            self._check_open()
            self.pending[key] = location
            self.files[location] = data
            self.deps.written.add(key)
            if reapply is None:
                self.deps.reapply.pop(key, None)
            else:
                self.deps.reapply[key] = reapply

    def reapply_of(self, key: str) -> Reapply | None:
        """The re-applicable form of this transaction's write of `key`, if it has one."""
        return self.deps.reapply.get(key)

    def delete(self, key: str) -> None:
        with self.lock:
            self._check_open()
            self.pending[key] = None
            self.deps.written.add(key)
            self.deps.reapply.pop(key, None)

    def require_exists(self, key: str) -> None:
        """Conflict if another commit deletes `key` (a namespace we create objects in)."""
        with self.lock:
            self.deps.must_exist.add(key)

    def require_unchanged(self, key: str) -> None:
        """Conflict if another commit changes `key` (e.g. must stay absent)."""
        with self.lock:
            self.deps.unchanged_keys.add(key)  # a set: bulk loads check many names

    def require_unchanged_prefix(self, prefix: str) -> None:
        """Conflict if another commit changes any key with `prefix` (a dropped namespace)."""
        with self.lock:
            self.deps.unchanged_ranges.append(range_of_prefix(prefix))

    def set_lakehouse_def(self, ldef: LakehouseDef) -> None:
        with self.lock:
            self._check_open()
            self.new_lakehouse_def = ldef
            self.deps.written.add(LAKEHOUSE_DEF_KEY)

    @property
    def has_changes(self) -> bool:
        return bool(self.pending) or self.new_lakehouse_def is not None
