"""The one place where the Iceberg front end turns catalog errors into PyIceberg's.

The catalog API raises typed errors (trinityfs/errors.py); PyIceberg callers (and the
REST server, which maps PyIceberg's exceptions to the REST spec's) expect
`NoSuchTableError`, `CommitFailedException`, ... Every catalog call of `TrinityCatalog`
runs inside `iceberg_errors(...)`, which says what the call was about (the table or
namespace) so the translated message names it, like lakefs-spec's wrapped API call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    ViewAlreadyExistsError,
)

from trinityfs import errors as tfs


@dataclass(frozen=True)
class Subject:
    """What a catalog call is about, for the messages of translated errors.

    - `what`: the action ("commit to table sales.t"), for commit races;
    - `table`: "ns.name" of the table read or written (None for namespace calls);
    - `namespace`: the namespace concerned;
    - `target`: the new "ns.name" of a rename (an existing one is TableAlreadyExists);
    - `must_exist`: a lookup of `table`: its namespace missing, or a name the catalog
      cannot hold, means "no such table" (for namespaces: "no such namespace");
    - `kind`: "view" when `table` names an Iceberg view (the REST server's views).
    """

    what: str
    table: str | None = None
    namespace: str | None = None
    target: str | None = None
    must_exist: bool = False
    kind: Literal["table", "view"] = "table"

    def missing(self, detail: str = "") -> Exception:
        if self.kind == "view":
            return NoSuchViewError(f"View does not exist: {self.table}{detail}")
        return NoSuchTableError(f"Table does not exist: {self.table}{detail}")

    def exists(self, name: str) -> Exception:
        if self.kind == "view":
            return ViewAlreadyExistsError(f"View {name} already exists")
        return TableAlreadyExistsError(f"Table {name} already exists")


def translate(exc: BaseException, subject: Subject) -> BaseException | None:
    """PyIceberg's exception for catalog error `exc` (None: let it propagate as is)."""
    if isinstance(exc, tfs.CommitConflictError):
        return CommitFailedException(
            f"{subject.what} lost a race with catalog version {exc.version}, which changed "
            f"{exc.key.strip()!r}; nothing was committed: {exc}"
        )
    if isinstance(exc, tfs.AlreadyExistsError):
        table = subject.target or subject.table
        if table is not None:
            return subject.exists(table)
        return NamespaceAlreadyExistsError(f"Namespace {subject.namespace} already exists")
    if isinstance(exc, tfs.NamespaceNotEmptyError):
        return NamespaceNotEmptyError(f"Namespace {subject.namespace} is not empty: {exc}")
    if isinstance(exc, tfs.ObjectNotFoundError) and subject.table is not None:
        return subject.missing()
    lookup_miss = subject.must_exist and isinstance(exc, tfs.InvalidNameError)
    if isinstance(exc, tfs.NamespaceNotFoundError) or lookup_miss:
        if subject.table is not None and subject.must_exist:
            return subject.missing(f" ({exc})" if lookup_miss else "")
        return NoSuchNamespaceError(f"Namespace does not exist: {subject.namespace}")
    return None


@contextmanager
def iceberg_errors(
    what: str,
    *,
    table: str | None = None,
    namespace: str | None = None,
    target: str | None = None,
    must_exist: bool = False,
    kind: Literal["table", "view"] = "table",
) -> Iterator[Subject]:
    """Run a catalog call, raising PyIceberg's exceptions for the catalog's typed errors
    (see `translate`); other exceptions, PyIceberg's own included, pass unchanged."""
    subject = Subject(what, table, namespace, target, must_exist, kind)
    try:
        yield subject
    except tfs.TrinityError as exc:
        translated = translate(exc, subject)
        if translated is None:
            raise
        # a race is worth its cause; a missing name is not
        raise translated from (exc if isinstance(exc, tfs.CommitConflictError) else None)


@contextmanager
def not_empty_names(namespace: str, contents: Callable[[], str]) -> Iterator[None]:
    """Around a namespace drop inside its transaction: the catalog's NamespaceNotEmptyError
    becomes PyIceberg's naming what the namespace holds (`contents()`, read while the
    transaction is still open; the catalog's own message names no format, so it named
    tables Iceberg clients do not list)."""
    try:
        yield
    except tfs.NamespaceNotEmptyError:
        raise NamespaceNotEmptyError(
            f"Namespace {namespace} is not empty: it holds {contents()}; drop them first"
        ) from None


__all__ = ["Subject", "iceberg_errors", "not_empty_names", "translate"]
