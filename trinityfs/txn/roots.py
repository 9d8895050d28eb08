"""Root node files: finding the latest version, loading a version, the hint and marker.

Roots are named by version and created once (create-if-absent), so they are immutable and
cached like any node; the latest version is found from the hint by galloping forward over
the dense sequence of roots.

Freshness (warm readers): a RootStore remembers the latest version it confirmed and when
(a probe that found the next root missing, or a root it created on a base it had
confirmed). While that confirmation is younger than the *trust window* (half the
expiration grace floor, `commit_window_millis`), "latest" costs one request: probe the
next root; if it is missing the remembered version is still the latest, else gallop on
from it. Neither marker is read. Why no marker is needed within the window: the next
root was missing at the confirmation, so if it exists now it was created since, and
expiration never deletes a root younger than its grace (at least the floor, plus a
clock-skew margin); so "missing now" means "never created", and the remembered latest
root, the latest, is never deleted either. Past the window (or cold, or after this
process's own expiration forgot a root) the full path runs: oldest marker, hint, probes.

The hint is written by the commit of every version divisible by `HINT_INTERVAL` on object
stores (on every commit on local disk, where an unsynced overwrite is cheap; the interval
is `Backend.hint_interval`), and by a commit whose process found the hint missing,
malformed or lagging by more than that,
so it lags the latest by less than `HINT_INTERVAL` versions unless a writer crashed
between its root and its hint. A cold reader then needs at most
2*log2(HINT_INTERVAL)+1 root probes past the hint (O(1)); each version of lag costs a
cold reader about two more probes per doubling, never a wrong answer (the roots decide).
Warm readers never read the hint.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future

from trinityfs.errors import (
    CorruptFileError,
    LakehouseNotFoundError,
    StorageError,
    StorageFileNotFoundError,
    SymlinkInRootError,
    TrinityError,
    VersionNotFoundError,
)
from trinityfs.format.definitions import decode_lakehouse_def
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF
from trinityfs.format.node_decode import decode_node
from trinityfs.format.paths import (
    LATEST_HINT,
    OLDEST_VERSION,
    parse_root_node_file,
    root_node_file,
)
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lru import LRU
from trinityfs.storage import Storage
from trinityfs.storage.settle import create_settled
from trinityfs.tree import Node
from trinityfs.tree.budget import DEFAULT_REBUILD_MESSAGES
from trinityfs.tree.reader import version_of
from trinityfs.txn.backoff import commit_window_millis
from trinityfs.txn.outrun import OUTRUN_SLACK_SECONDS as OUTRUN_SLACK_SECONDS
from trinityfs.txn.outrun import created_millis, written_before_its_root
from trinityfs.txn.readahead import read_ahead

log = logging.getLogger(__name__)

MAX_VERSION = 2**63 - 1

#: The commit of every version divisible by this writes `_latest_hint.txt` (object
#: stores; local disk writes it on every commit: `Backend.hint_interval`).
HINT_INTERVAL = 8

#: A root buffer of at least this many messages (a bulk load's) is kept as Arrow
#: columns (trinityfs.tree.columns), not decoded into a dict: the root the writer
#: rebuilds from rather than flushes (FlushPolicy.rebuild_messages).
COLUMN_BUFFER_FROM = DEFAULT_REBUILD_MESSAGES

#: Root file names of the versions asked about lately (a pure function of the version:
#: a warm reader probes the same next root again and again).
_root_name = functools.lru_cache(maxsize=64, typed=True)(root_node_file)


def parse_marker(text: bytes) -> int | None:
    """The version a marker file holds, None when it is not a decimal version."""
    try:
        value = int(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        log.debug("ignoring a malformed marker %r", text[:40])
        return None
    return value if 0 <= value <= MAX_VERSION else None


class RootStore:
    """Versioned roots of one lakehouse in one storage location."""

    def __init__(
        self,
        storage: Storage,
        cached_roots: int = 16,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.storage = storage
        self._roots: LRU[int, Node] = LRU(cached_roots)
        self._lock = threading.Lock()
        self._clock = clock
        # (the latest version this store confirmed, the monotonic time it was latest):
        # replaced whole under the lock, so one read of it outside the lock is consistent
        self._trust: tuple[int | None, float] = (None, -math.inf)
        self._window = 0.0  # seconds a confirmation is trusted (0 until a def is read)
        self._hint_lags = True  # the hint seen last was missing, malformed or far behind
        self.hint_interval = max(1, getattr(storage.backend, "hint_interval", HINT_INTERVAL))
        # (location, definition, trust window in seconds) read last by `lakehouse_def`:
        # the definition checked, kept as a copy no caller holds
        self._last_def: tuple[str, LakehouseDef, float] | None = None
        # where a stat is cheap (local disk): the identity of each root file this store
        # read or created (`Storage.identity`), to tell it from a root of the same
        # version in a lakehouse created again in place (`root_unchanged`)
        self._cheap = bool(getattr(storage.backend, "cheap_exists", False))
        self._ids: LRU[int, tuple[int, ...]] = LRU(4 * max(cached_roots, 16))
        # set once the lakehouse was found replaced: every later question raises it
        self._replaced: str | None = None
        # (oldest marker value, monotonic time its root was last seen, the oldest version
        # answered for it): `oldest_version` skips the checks of the root a re-read
        # marker names while this is within the trust window (see there)
        self._oldest_seen: tuple[int, float, int] | None = None

    # -- markers --------------------------------------------------------------------

    def _read_marker(self, location: str) -> int | None:
        """A decimal marker file, or None when missing or malformed.

        Markers are advisory (a reader probes the roots they point to): a malformed one
        is ignored quietly (the next commit rewrites the hint; fsck reports both). One
        that is no regular file (a symbolic link, a directory, a FIFO: never followed
        or read) is ignored like a malformed one if it is the hint; the oldest marker
        bounds which versions may be read, so it is refused, by name (docs/
        FORMAT-CHOICES.md "A marker that is no regular file").
        """
        try:
            text = self.storage.read_if_regular(location)
        except StorageFileNotFoundError:
            return None
        if text is None:
            if location == LATEST_HINT:
                log.debug("ignoring %s: not a regular file", location)
                return None
            raise SymlinkInRootError(
                f"{location} under {self.storage.url} is a symbolic link or not a regular "
                "file: trinityfs never follows it, since it says which versions expiration "
                "may have deleted (one planted elsewhere could hide versions or expose "
                "expired ones). Replace it with a regular file holding the oldest version "
                "(a copy of the link's target, if that is right), or remove it and run "
                "`trinityfs expire`, which writes it again"
            )
        value = parse_marker(text)
        if value is None and location == OLDEST_VERSION:
            raise CorruptFileError(
                location,
                f"not a decimal version ({text[:40]!r}): it says which versions expiration "
                "may have deleted, so trinityfs never reads it as absent. Replace it with a "
                "regular file holding the oldest version, or remove it and run "
                "`trinityfs expire`, which writes it again",
            )
        return value

    def read_hint(self) -> int | None:
        """The latest-version hint, or None: it is advisory, so one that cannot be read
        (a store answering errors for that one file) is passed over, with a warning, and
        the latest version is found from the oldest marker instead."""
        try:
            return self._read_marker(LATEST_HINT)
        except StorageError as exc:
            log.warning("ignoring %s, which could not be read: %s", LATEST_HINT, exc)
            return None

    def hint_due(self, version: int) -> bool:
        """Whether the commit of `version` should write the hint (see the module doc)."""
        return version % self.hint_interval == 0 or self._hint_lags

    def oldest_marker(self) -> int | None:
        """What `_oldest_version.txt` says (None: absent or malformed), unchecked."""
        return self._read_marker(OLDEST_VERSION)

    def oldest_version(self) -> int:
        """The oldest readable version: the marker when its root exists and is not
        younger than the marker (`_outrun`), else the oldest root found by listing (a
        marker that names no root, or one written before its root existed, is a lie: a
        bit flip, a restored backup, or an expiration that raced another).

        The marker is read every time: it only moves up, and a version at or above
        what it said a moment ago may be below it now, so "v is readable" is never
        remembered. What is remembered is that the root the marker names existed: when
        the marker read now says the same value as when that root was last seen, within
        the trust window, its existence is not checked again (one request, not two, for
        a reader checking an old version on every use, `Lakehouse.check_readable`). A
        root at the marker is deleted only by an expiration that moved the marker above
        it first; a marker left behind by a racing expiration is at worst trusted for
        the window, as a confirmed latest version is. So is the answer for a marker
        found outrun (the oldest root listed)."""
        said = self.oldest_marker()
        marker = said or 0
        seen = self._oldest_seen
        if seen is not None and seen[0] == marker and self._clock() - seen[1] < self._seen_window():
            return seen[2]
        started = self._clock()
        stands = self._marker_stands(marker, said is not None)
        if stands:
            self._oldest_seen = (marker, started, marker)
            return marker
        if stands is None:
            self._oldest_seen = None
            log.debug("%s says %d but that root does not exist", OLDEST_VERSION, marker)
            return self._first_existing_root()
        oldest = self._first_existing_root()
        log.warning(
            "%s says %d but was written before that root existed (a lie the lakehouse "
            "caught up with): versions from %d are readable (run `trinityfs expire` to "
            "repair it)",
            OLDEST_VERSION,
            marker,
            oldest,
        )
        self._oldest_seen = (marker, started, oldest)
        return oldest

    def _marker_stands(self, marker: int, written: bool) -> bool | None:
        """Whether the oldest marker saying `marker` is the truth: None when its root does
        not exist, False when the marker file (`written`: it exists) is older than that
        root by more than OUTRUN_SLACK_SECONDS of the store's clock. Expiration writes the
        marker naming a root that exists, so such a marker said a version above the
        latest when written (lifecycle/markers.py applies the same rule); trusted, it
        would make every version below it, all still there, look expired. One request
        (the root's stat), and one more (the marker's) for a marker above 0."""
        try:
            root_mtime = self.storage.mtime(_root_name(marker), built=True)
        except StorageFileNotFoundError:
            return None
        if not written or marker == 0 or root_mtime is None:
            return True
        try:
            marker_mtime = self.storage.mtime(OLDEST_VERSION, built=True)
        except StorageFileNotFoundError:
            return True  # removed meanwhile: the next question reads it again
        if not written_before_its_root(marker_mtime, root_mtime):
            return True
        # by the mtimes, outrun; a copy made without them (cp -r, a sync) reorders them:
        # the root's own stamp, which copies keep, tells (one read, only here)
        try:
            created = created_millis(self.load(marker))
        except TrinityError:
            created = None
        return not written_before_its_root(marker_mtime, root_mtime, created)

    def _seen_window(self) -> float:
        """The trust window, or (a reader that only read the definition of an older
        version) the commit window half of the definition read last."""
        last = self._last_def
        return self._window or (last[2] if last is not None else 0.0)

    def marker_is_real(self, marker: int) -> bool:
        """Whether a marker value names an existing root and was not written before that
        root existed (`_marker_stands`: an expiration wrote it)."""
        return bool(self._marker_stands(marker, True))

    def write_hint(self, version: int) -> None:
        """Best effort: a stale hint only costs a few more probes."""
        try:
            self.storage.overwrite_advisory(LATEST_HINT, str(version).encode())
        except TrinityError as exc:
            log.warning("could not update %s: %s", LATEST_HINT, exc)
            return
        self._hint_lags = False

    # -- roots ----------------------------------------------------------------------

    def exists(self, version: int) -> bool:
        return self.storage.exists(_root_name(version), built=True)

    def create(
        self, version: int, data: bytes, first_durable: Callable[[], None] | None = None
    ) -> bool:
        """Create the root of `version`: True if ours landed, False if another one did.

        Unknown outcomes are settled by reading back (`trinityfs.storage.settle`).
        Only `trinityfs.txn.publish` calls this: every root is made there.
        `first_durable`: see `Storage.create_if_absent`.
        """
        started = self._clock()
        base_trusted = self.trusted_latest() == version - 1
        created = create_settled(
            self.storage,
            root_node_file(version),
            data,
            f"the root of version {version}",
            first_durable,
            # where a stat is cheap, the create itself tells the new root's identity
            # (best effort: unknown after a failed fstat or a create settled by reading
            # back; the next commit's check then falls back to existence)
            functools.partial(self._ids.put, version) if self._cheap else None,
        )
        if created and base_trusted:
            # Root version-1 was the latest within the trust window and root `version`
            # did not exist: it cannot have been created and expired since, so ours is
            # the latest (no hole below the oldest marker; see confirmed_latest).
            self._confirm(version, started)
        return created

    def load(self, version: int) -> Node:
        """The root node of `version`; VersionNotFoundError if there is none.

        Roots are immutable once created, so decoded ones are kept (a few, the newest
        being the ones every transaction begins from).
        """
        root = self._roots.get(version)
        if root is not None:
            return root
        if self._replaced is not None:
            raise LakehouseNotFoundError(self._replaced)
        location = _root_name(version)
        if self._cheap and self._ids.get(version) is None:
            self._note_identity(version)  # before the read: a file replaced in between
            # then differs from the one noted, and a commit on it is refused
        try:
            data = self.storage.read_immutable(location)
            decoded = decode_node(data, None, location, buffer_columns_from=COLUMN_BUFFER_FROM)
            root = Node.from_file(decoded, location)
        except StorageFileNotFoundError:
            self._distrust_from(version)
            raise VersionNotFoundError(f"version {version} does not exist") from None
        except CorruptFileError as exc:
            self.storage.forget(location)  # never keep bytes that did not decode
            raise exc.with_version(version) from None
        self.remember(version, root)
        return root

    def _note_identity(self, version: int) -> None:
        """Best effort: a failed stat leaves the identity unknown (the commit check then
        falls back to existence); an error here must never fail what called it."""
        try:
            found = self.storage.identity(_root_name(version), built=True)
        except StorageError as exc:
            log.debug("identity of the root of version %d unknown: %s", version, exc)
            return
        if found is not None:
            self._ids.put(version, found)

    def root_unchanged(self, version: int) -> bool | None:
        """Whether the root of `version` is still the file this store read or created:
        None when it is gone, False when another file is there now (the lakehouse was
        created again in place), True otherwise (also for a root this store never saw
        or has forgotten). One `Storage.identity` request; meant where it is cheap."""
        found = self.storage.identity(_root_name(version), built=True)
        if found is None:
            return None
        known = self._ids.get(version)
        return known is None or known == found

    def remember(self, version: int, root: Node) -> None:
        """Keep a committed root (one this process just created, say) decoded."""
        self._roots.put(version, root)

    def forget(self, version: int) -> None:
        """Drop a root from the cache (expiration deleted it): the remembered latest is
        no longer trusted either (the next question runs the full path)."""
        self._roots.pop(version, None)
        self._oldest_seen = None
        self._distrust_from(version)

    def load_location(self, location: str) -> Node:
        """A root-shaped node at any location (an export's root, a transaction's root)."""
        data = self.storage.read_immutable(location)
        return Node.from_file(decode_node(data, None, location), location)

    def lakehouse_def(self, root: Node) -> tuple[str, LakehouseDef]:
        """(location, definition) of the lakehouse definition `root` names: a copy of
        its own for the caller (who may change it), decoded and checked once."""
        location = root.system.get(KEY_LAKEHOUSE_DEF)
        version = version_of(root)
        if location is None:
            raise CorruptFileError(root.location or "<root>", "no lakehouse_def row", version)
        last = self._last_def
        if last is None or last[0] != location:
            ldef = self._read_lakehouse_def(location, version)
            kept = LakehouseDef()
            kept.CopyFrom(ldef)
            last = self._last_def = (location, kept, commit_window_millis(ldef) / 2000)
        else:
            # the definition the previous transaction began from (nearly every one):
            # the file is immutable and was checked when it was first read
            ldef = LakehouseDef()
            ldef.CopyFrom(last[1])
        with self._lock:
            known = self._trust[0]
            if version is not None and (known is None or version >= known):
                self._window = last[2]
        return location, ldef

    def _read_lakehouse_def(self, location: str, version: int | None) -> LakehouseDef:
        try:
            return decode_lakehouse_def(self.storage.read_immutable(location), location)
        except CorruptFileError as exc:
            self.storage.forget(location)
            raise exc.with_version(version) from None

    # -- the latest version ---------------------------------------------------------

    def latest_version(self) -> int:
        """The latest version: one probe of the next root when this store confirmed the
        latest within the trust window, else `latest_from_markers` (module doc).

        A warm reader's every "latest" runs this, so it is kept flat: one clock reading
        both checks the trust window and dates the confirmation (taken before the probe,
        as `_confirm` wants), the trust state is read without the lock (one tuple), and
        the probe's name is remembered (`_root_name`)."""
        started = self._clock()
        known, since = self._trust
        if known is None or started - since >= self._window:
            return self.latest_from_markers()
        if self.storage.exists(_root_name(known + 1), built=True):
            known = self._gallop(known + 1)
        self._confirm(known, started)
        return known

    def newer_versions(self, base: int) -> Iterator[int]:
        """Versions base+1, base+2, ... up to the latest, each yielded once its root is
        loaded (kept decoded): how a commit that lost a race catches up. The read that
        finds the next root missing ends it, so nothing is between learning the latest
        version and creating the next root but building it. (Galloping to the latest
        and then reading the roots skipped left one read per new version in between,
        in which a writer committing on its confirmed base landed again: on S3 such a
        loser lost race after race, for minutes.) The read of each root beyond the one
        known runs beside the read of the root before it (`read_ahead`): the lost root
        and the probe that finds the next one missing cost one round trip, not two, so a
        loser is as quick as the writer that beat it.

        That missing root is trusted like the probe of `latest_version`: it extends a
        latest version confirmed within the trust window (by the full path when there
        is none), whose next root was missing then, so the roots found since were
        created since and none is expired. A root missing at or below that version:
        VersionNotFoundError (expired)."""
        since = self._clock()
        known, confirmed = self._trust
        if known is None or since - confirmed >= self._window:
            known = self.latest_from_markers()
        else:
            since = confirmed
        version = base + 1
        ahead: tuple[int, Future[Node], float] | None = None  # (version, read, started)
        while True:
            at, read = self._clock(), None
            if ahead is not None and ahead[0] == version:
                _, read, at = ahead  # started before: trusted as of then
            ahead = None
            if read is None:  # read this one now, the next beside it
                sent = self._clock()  # before the read starts: trusted as of then
                ahead = (version + 1, read_ahead(self.load, version + 1), sent)
            try:
                self.load(version) if read is None else read.result()
            except VersionNotFoundError:
                if version <= known:
                    raise  # expired
                if at - since < self._window:
                    self._confirm(version - 1, at)
                    return
                since, known = at, self.latest_from_markers()  # the window ran out
                if known < version:
                    return
                continue
            if ahead is None:  # found: the next is read beside the caller's work
                sent = self._clock()
                ahead = (version + 1, read_ahead(self.load, version + 1), sent)
            yield version
            version += 1

    def latest_from_markers(self) -> int:
        """Hint (or oldest marker, or 0), then gallop forward to the first missing root.

        Both markers are only starting points: the roots decide. A hint below the
        oldest marker is not used (roots between them may be deleted) unless the
        marker names no root (it lies); when neither names a root, the roots are listed.
        """
        if self._replaced is not None:
            raise LakehouseNotFoundError(self._replaced)
        started = self._clock()
        oldest = self.oldest_marker() or 0
        hint = self.read_hint()
        start = None
        if hint is not None and self.exists(hint):
            start = hint if hint >= oldest or not self.exists(oldest) else oldest
        elif self.exists(oldest):
            start = oldest
        if start is None:
            start = self._first_existing_root()
        latest = self._gallop(start)
        self._hint_lags = hint is None or latest - hint >= self.hint_interval
        known = self._trust[0]
        if known is not None and latest < known:
            self._check_went_back(latest, known)
        self._confirm(latest, started)
        return latest

    def _check_went_back(self, latest: int, known: int) -> None:
        """The latest found is below `known`, a version this store saw as the latest.
        Expiration never removes the latest root, so unless a commit raced this probe
        (root `known` is still there), the lakehouse lost its latest roots: deleted by
        hand (the same lakehouse: answered as before, fsck reports it), or removed and
        created again in place (another lakehouse id): then LakehouseNotFoundError, now
        and for every later question, instead of answering about the remembered one."""
        last = self._last_def
        if last is None or self.exists(known):
            return
        location = _root_name(latest)
        try:  # read past the caches: they may hold the remembered lakehouse's root
            data = self.storage.read(location)
            root = Node.from_file(decode_node(data, None, location), location)
            found = self._read_lakehouse_def(root.system[KEY_LAKEHOUSE_DEF], latest).id
        except (StorageFileNotFoundError, CorruptFileError, KeyError):
            return  # damage of another kind: the usual paths report it
        if found == last[1].id:
            log.warning(
                "%s: the latest version is %d, below version %d seen before, whose root "
                "is gone (run `trinityfs fsck`)",
                self.storage.url,
                latest,
                known,
            )
            return
        message = (
            f"{self.storage.url} was replaced while open: it holds another lakehouse now "
            f"(id {found!r}, latest version {latest}; this process had seen version "
            f"{known} of {last[1].id!r}); open it again"
        )
        with self._lock:
            self._replaced = message
        self._roots.clear()  # a pinned read must not answer from the old tree either
        raise LakehouseNotFoundError(message)

    def trusted_latest(self) -> int | None:
        """The remembered latest version while its confirmation is within the trust
        window (no request), else None."""
        known, since = self._trust
        if known is None or self._clock() - since >= self._window:
            return None
        return known

    def confirmed_latest(self, version: int) -> bool:
        """Whether `version` is the latest this store confirmed within the trust window.

        For a root this process just created, that means it was created right on a
        base confirmed as the latest, so it cannot fill a hole left by expiration and
        the oldest marker need not be read to check it.
        """
        return self.trusted_latest() == version

    def _confirm(self, version: int, at: float) -> None:
        """Root `version` was the latest at monotonic time `at` (taken before asking)."""
        with self._lock:
            known, since = self._trust
            newer = known is None or version > known or since == -math.inf
            if newer or (version == known and at > since):
                self._trust = (version, at)

    def _distrust_from(self, version: int) -> None:
        """A root at or below the remembered latest vanished: trust nothing remembered."""
        with self._lock:
            known = self._trust[0]
            if known is not None and version <= known:
                self._trust = (known, -math.inf)

    def _gallop(self, known: int) -> int:
        step = 1
        while self.exists(known + step):
            known += step
            step *= 2
        lo, hi = known, known + step  # lo exists, hi does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.exists(mid):
                lo = mid
            else:
                hi = mid
        return lo

    def _first_existing_root(self) -> int:
        """Last resort when markers point nowhere (or there is no lakehouse: a mistyped
        directory): list the files right in the root directory, where roots are (not
        the whole tree below it)."""
        versions = [
            v
            for entry in self.storage.list("", recursive=False)
            if "/" not in entry.location and (v := parse_root_node_file(entry.location)) is not None
        ]
        if not versions:
            raise LakehouseNotFoundError(f"no lakehouse at {self.storage.url}")
        return min(versions)
