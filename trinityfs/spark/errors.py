"""The one place where the Spark front end turns errors into what a Spark user reads.

Spark shows a Python data source's exception as the last line of a Python traceback
inside its own error, so that line must say what failed, on which table or option, and
what to do. The catalog raises typed errors (trinityfs/errors.py) and the Iceberg front
end PyIceberg's exceptions; `spark_errors(what)` wraps every catalog call of the source
and re-raises them as trinityfs's typed errors with `what` in front; a lost commit race
is a `TrinityLakeWriteConflict` (nothing committed, rerun the job).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from trinityfs import errors as tfs


class TrinityLakeWriteConflict(RuntimeError):
    """A write job lost to a concurrent change of its table; nothing was committed."""


def translate(exc: BaseException, what: str) -> BaseException | None:
    """The error a Spark user sees for `exc` raised while doing `what` (None: as is)."""
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    if isinstance(exc, TrinityLakeWriteConflict):
        return None
    if isinstance(exc, NoSuchTableError):
        return tfs.ObjectNotFoundError(f"{what}: {exc}")
    if isinstance(exc, NoSuchNamespaceError):
        return tfs.NamespaceNotFoundError(f"{what}: {exc}")
    if isinstance(exc, tfs.TrinityError):
        if str(exc).startswith(what):
            return None
        # same type and attributes (e.g. .location), the message in context; built
        # without calling __init__, whose arguments differ between error types
        out = type(exc).__new__(type(exc))
        out.__dict__.update(exc.__dict__)
        out.args = (f"{what}: {exc}",)
        return out
    return None


@contextmanager
def spark_errors(what: str) -> Iterator[None]:
    """Run a catalog call; its typed or PyIceberg errors come out as trinityfs's typed
    errors naming `what` (see `translate`); anything else passes unchanged."""
    try:
        yield
    except Exception as exc:
        try:
            translated = translate(exc, what)
        except Exception:  # never hide the original behind a failed translation
            translated = None
        if translated is None:
            raise
        raise translated from None


__all__ = ["TrinityLakeWriteConflict", "spark_errors", "translate"]
