"""The two marker files checked against the roots themselves.

`_oldest_version.txt` and `_latest_hint.txt` are advisory: a bit flip, a marker
restored from a later backup, a lost latest root or two expirations racing can make
them say something the roots do not. Expiration never deletes on their word (it
recomputes what is live from the listed roots and repairs a lying marker); fsck
reports what disagrees. A lying oldest marker is one that names a version above the
latest, or a version whose root is gone. A malformed one is no lie but damage: readers
and expiration refuse it (CorruptFileError), fsck reports it (docs/FORMAT-CHOICES.md
"A malformed oldest marker").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trinityfs.errors import StorageError, StorageFileNotFoundError, TrinityError
from trinityfs.format.node_decode import decode_node
from trinityfs.format.paths import LATEST_HINT, OLDEST_VERSION
from trinityfs.lifecycle.inventory import Inventory
from trinityfs.storage import Storage
from trinityfs.tree import Node
from trinityfs.txn.outrun import created_millis, written_before_its_root
from trinityfs.txn.roots import parse_marker


@dataclass
class MarkerState:
    """What the markers say and what the roots say."""

    latest: int  # the latest version (found by probing roots)
    floor: int  # oldest version from which every root up to the latest is listed
    oldest_marker: int | None  # what _oldest_version.txt says (None: absent/malformed)
    hint: int | None
    listed: frozenset[int] = frozenset()  # versions whose root was listed
    oldest_damaged: bool = False  # _oldest_version.txt is malformed or no regular file
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (severity, file, msg)
    outrun: bool = False  # the marker is older than the root it names (see `assess`)

    @property
    def oldest_is_lie(self) -> bool:
        """The oldest marker names no existing root (or one above the latest), or names
        a root created after the marker was written (a lie the lakehouse caught up with)."""
        marker = self.oldest_marker or 0
        return (
            marker > self.latest
            or (marker < self.floor and marker not in self.listed)
            or self.outrun
        )

    @property
    def oldest(self) -> int:
        """The oldest readable version according to the roots (the marker when true)."""
        if self.oldest_is_lie:
            return self.floor
        return self.oldest_marker or 0


def assess(storage: Storage, inventory: Inventory, latest: int) -> MarkerState:
    """Compare both markers with the roots listed in `inventory` (latest probed before)."""
    roots = inventory.roots()
    floor = latest
    while floor - 1 in roots:
        floor -= 1
    hint_text, unreadable_hint = _read_hint(storage)
    read = {OLDEST_VERSION: _read(storage, OLDEST_VERSION), LATEST_HINT: hint_text}
    odd = [loc for loc, text in read.items() if text is _NOT_REGULAR]
    texts = {loc: None if text is _NOT_REGULAR else text for loc, text in read.items()}
    values = {loc: parse_marker(t) if t is not None else None for loc, t in texts.items()}
    state = MarkerState(
        latest, floor, values[OLDEST_VERSION], values[LATEST_HINT], frozenset(roots)
    )
    state.oldest_damaged = OLDEST_VERSION in odd or (
        texts[OLDEST_VERSION] is not None and values[OLDEST_VERSION] is None
    )
    for location in odd:
        if location == OLDEST_VERSION:
            state.problems.append(
                (
                    "error",
                    location,
                    "is a symbolic link or not a regular file: never followed, and readers "
                    "refuse to open the lakehouse (remove it and run `trinityfs expire`)",
                )
            )
        else:
            state.problems.append(
                (
                    "warning",
                    location,
                    "is a symbolic link or not a regular file: never followed; readers "
                    "ignore it and the next commit replaces it",
                )
            )
    for location, text in texts.items():
        if text is not None and values[location] is None:
            message = f"not a decimal version: {text[:40]!r}"
            if location == OLDEST_VERSION:
                message += (
                    f": readers refuse to open the lakehouse (replace it with a regular "
                    f"file holding the oldest readable version, {floor} by the roots "
                    f"listed, or remove it and run `trinityfs expire`)"
                )
            severity = "error" if location == OLDEST_VERSION else "warning"
            state.problems.append((severity, location, message))
    marker = state.oldest_marker
    state.outrun = marker is not None and _written_before_its_root(storage, inventory, marker)
    if state.outrun and marker is not None:
        state.problems.append(
            (
                "error",
                OLDEST_VERSION,
                f"says {marker}, but was written before the root of version {marker} "
                f"existed (expiration names only an existing root): a lie when written (a "
                f"bit flip, a restored backup) that the lakehouse caught up with; versions "
                f"{floor}..{marker - 1} are still there (run `trinityfs expire` to repair "
                "it; until then readers take them for expired)",
            )
        )
    elif marker is not None and marker > latest:
        state.problems.append(
            (
                "error",
                OLDEST_VERSION,
                f"says {marker}, above the latest version {latest}: expiration would "
                "treat every root as expired (run `trinityfs expire` to repair it)",
            )
        )
    elif state.oldest_is_lie and marker is not None:
        state.problems.append(
            (
                "error",
                OLDEST_VERSION,
                f"says {marker}, but the root of version {marker} is gone (the oldest "
                f"readable version is {floor}; run `trinityfs expire` to repair it). "
                f"Two expirations that overlapped leave this until the slower one "
                f"repairs it; otherwise versions {marker}..{floor - 1} were lost",
            )
        )
    if unreadable_hint is not None:
        state.problems.append(
            (
                "warning",
                LATEST_HINT,
                f"cannot be read ({unreadable_hint}); readers and writers ignore it and "
                "find the latest version by probing (slower from a cold start)",
            )
        )
    hint = state.hint
    if hint is not None and hint > latest:
        state.problems.append(
            ("warning", LATEST_HINT, f"says {hint}, above the latest version {latest}")
        )
    return state


def _written_before_its_root(storage: Storage, inventory: Inventory, marker: int) -> bool:
    """Whether `_oldest_version.txt` (saying `marker`) is older than root `marker`.
    Expiration writes the marker naming a root that exists, so a marker older than its
    root was written when that root did not exist: a lie (FORMAT-CHOICES: a marker above
    the latest is one) that commits caught up with. Trusted, it would make readers take
    every older version for expired and expiration delete them whatever the policy."""
    entry = inventory.entries.get(OLDEST_VERSION)
    root = inventory.roots().get(marker)
    if entry is None or root is None:
        return False
    if not written_before_its_root(entry.mtime, root.mtime):
        return False
    # by the mtimes, outrun; a copy made without them (cp -r, a sync) reorders them: the
    # root's own stamp, which copies keep, tells, as readers decide (txn/outrun.py)
    try:
        node = Node.from_file(decode_node(storage.read(root.location), None, root.location), None)
    except TrinityError:
        created = None
    else:
        created = created_millis(node)
    return written_before_its_root(entry.mtime, root.mtime, created)


#: what `_read` returns for a marker that is a link, a directory or a FIFO
_NOT_REGULAR = b"\0not a regular file"


def _read(storage: Storage, location: str) -> bytes | None:
    """The marker's bytes; None when absent; `_NOT_REGULAR` (compare with `is`) when it
    is no regular file (never followed, never waited on)."""
    try:
        data = storage.read_if_regular(location)
    except StorageFileNotFoundError:
        return None
    return _NOT_REGULAR if data is None else data


def _read_hint(storage: Storage) -> tuple[bytes | None, StorageError | None]:
    """`_latest_hint.txt` as `_read` gives it, or (None, the error) when the store
    refuses to read it: the hint is advisory, and readers go on without it too."""
    try:
        return _read(storage, LATEST_HINT), None
    except StorageError as exc:
        return None, exc


def oldest_marker_damaged(storage: Storage) -> bool:
    """Whether `_oldest_version.txt` is malformed, a symbolic link or no regular file:
    what makes readers refuse to open the lakehouse (fsck reports it and goes on)."""
    try:
        text = _read(storage, OLDEST_VERSION)
    except TrinityError:
        return False
    return text is _NOT_REGULAR or (text is not None and parse_marker(text) is None)


def latest_by_listing(storage: Storage, inventory: Inventory) -> int:
    """The latest version as a reader with no oldest marker finds it, from the roots
    listed: from the hint when its root is listed, else from the oldest root listed, up
    to the first version with no root. For fsck when the oldest marker is unreadable
    (readers refuse it); LakehouseNotFoundError-free: 0 when no root is listed."""
    roots = inventory.roots()
    if not roots:
        return 0
    text, _unreadable = _read_hint(storage)
    hint = parse_marker(text) if text is not None and text is not _NOT_REGULAR else None
    latest = hint if hint is not None and hint in roots else min(roots)
    while latest + 1 in roots:
        latest += 1
    return latest
