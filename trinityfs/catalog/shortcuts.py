"""One-change shortcuts (`Lakehouse.create_table` and friends) that begin without a
storage request: on the latest version this process confirmed within the trust window,
redone on the probed latest when refused on a base that was not the latest."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from trinityfs.errors import (
    AlreadyExistsError,
    CommitConflictError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    ObjectNotFoundError,
)
from trinityfs.txn.engine import Engine


class _Shortcuts(Protocol):
    """What a Lakehouse offers the wrapper: its engine, the per-thread base of the
    shortcut running, and a probe of the latest version."""

    engine: Engine
    _shortcut: threading.local

    def latest_version(self, *, fresh: bool = False) -> int: ...


#: errors a change may raise because its base was not the latest (then it is redone)
_STALE_BASE_ERRORS = (
    NamespaceNotFoundError,
    ObjectNotFoundError,
    AlreadyExistsError,
    NamespaceNotEmptyError,
    CommitConflictError,
)

_Method = TypeVar("_Method", bound=Callable[..., int])


class NothingChanged(Exception):
    """A shortcut on an unprobed base changed nothing: true only if the base is latest."""

    def __init__(self, version: int):
        super().__init__(version)
        self.version = version


def begins_unprobed(method: _Method) -> _Method:
    """A one-change shortcut begins at the latest version this process confirmed within
    the trust window (`RootStore.trusted_latest`), with no storage request: the
    conditional create of the next root tells whether it still was the latest (a lost
    race is replayed as usual). A change refused on such a base (not found, already
    exists, conflict: nothing committed) is redone on the probed latest version unless
    that base still is the latest, so no answer comes from a stale version."""

    @functools.wraps(method)
    def wrapper(self: _Shortcuts, *args: Any, **kwargs: Any) -> int:
        base = self.engine.roots.trusted_latest()
        if base is None or getattr(self._shortcut, "base", None) is not None:
            return method(self, *args, **kwargs)
        self._shortcut.base = base
        try:
            return method(self, *args, **kwargs)
        except _STALE_BASE_ERRORS:
            if self.latest_version(fresh=True) == base:
                raise
        except NothingChanged as unchanged:  # "no change" is an answer too
            if self.latest_version(fresh=True) == base:
                return unchanged.version
        finally:
            self._shortcut.base = None
        return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
