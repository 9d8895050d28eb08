"""Create-if-absent with its unknown outcomes settled: the one mechanism for every
file that is created once (version roots, export roots and claims, distributed
transaction files).

A create that failed may have landed anyway (an error after the store acted, a
timeout), and after such an attempt "already exists" may be our own write. Both are
settled by reading the file back and comparing it with what we wrote: the same bytes
mean ours landed. An error stands only when the file is not there;
AmbiguousWriteError when even reading back cannot tell. The bytes of a create that
stayed unknown are remembered (per process), so that a caller who retries the same
create later recognizes its own file instead of reporting "already exists" about it.

Callers must make the bytes unique to the attempt (a root carries its creation time
and a fresh lakehouse definition or node names; a transaction file its begin time) so
that equal bytes really mean "ours".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from trinityfs.errors import (
    AmbiguousWriteError,
    StorageError,
    StorageFileNotFoundError,
    SymlinkInRootError,
    UnsupportedStorageError,
)

from .core import Storage

log = logging.getLogger(__name__)

READBACK_ATTEMPTS = 5

_unsettled: dict[tuple[str, str], bytes] = {}
_unsettled_lock = threading.Lock()


def create_settled(
    storage: Storage,
    location: str,
    data: bytes,
    what: str = "",
    first_durable: Callable[[], None] | None = None,
    on_identity: Callable[[tuple[int, ...]], None] | None = None,
) -> bool:
    """Create `location` holding `data`: True if ours landed, False if another file did.

    `what` names the file in messages ("the root of version 7"). Raises the store's
    error only when the file is not there, and AmbiguousWriteError when the outcome
    stays unknown after READBACK_ATTEMPTS read-backs (a later call with the same bytes
    settles it). `first_durable` is passed to every attempt (`Storage.create_if_absent`):
    it must keep raising once it failed, so a retried create never links a file whose
    references are not durable. `on_identity` is passed to every attempt too (see
    `Storage.create_if_absent`): it is not called for a create settled by reading back.
    """
    what = what or location
    key = (storage.url, location)
    with _unsettled_lock:
        uncertain = _unsettled.get(key) == data  # an earlier call of ours may have landed
    for _ in range(READBACK_ATTEMPTS):
        failure: StorageError | None = None
        try:
            if first_durable is None and on_identity is None:
                created = storage.create_if_absent(location, data)
            elif on_identity is None:
                created = storage.create_if_absent(location, data, first_durable=first_durable)
            else:
                created = storage.create_if_absent(
                    location, data, first_durable=first_durable, on_identity=on_identity
                )
        except UnsupportedStorageError:
            raise
        except SymlinkInRootError:
            if not uncertain:
                raise  # refused before anything was written (a link on the path)
            failure = None  # an earlier attempt of ours may have landed: read back
        except AmbiguousWriteError as exc:
            log.warning("create of %s ambiguous (%s): reading back", what, exc)
            uncertain = True
        except StorageError as exc:
            failure = exc
        else:
            if created or not uncertain:
                _forget(key)
                return created
        try:
            landed = storage.read(location) == data
        except StorageFileNotFoundError:
            if failure is not None and not uncertain:
                raise failure from failure.__cause__  # it did not land: the error stands
        except StorageError as exc:
            log.warning("read-back of %s failed: %s", what, exc)
            uncertain = True
        else:
            _forget(key)
            return landed
    with _unsettled_lock:
        _unsettled[key] = data
    raise AmbiguousWriteError(
        f"outcome of creating {what} is unknown after {READBACK_ATTEMPTS} read-backs; "
        "retrying the same operation settles it"
    )


def settle(storage: Storage, location: str, data: bytes) -> bool | None:
    """Whether a create of `data` at `location` landed: True, False (absent or another
    file), None when reading fails (still unknown)."""
    try:
        landed = storage.read(location) == data
    except StorageFileNotFoundError:
        return False
    except StorageError:
        return None
    if landed:
        _forget((storage.url, location))
    return landed


def unsettled(storage: Storage, location: str) -> bytes | None:
    """The bytes of an earlier create of ours at `location` whose outcome stayed unknown."""
    with _unsettled_lock:
        return _unsettled.get((storage.url, location))


def forget_unsettled(storage: Storage, location: str) -> None:
    """Drop the memory of an unknown create (the caller settled it another way)."""
    _forget((storage.url, location))


def _forget(key: tuple[str, str]) -> None:
    with _unsettled_lock:
        _unsettled.pop(key, None)
