"""Write operations of the catalog: a `CatalogTransaction` commits them as one version."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, ParamSpec, TypeVar

from google.protobuf.message import Message

from trinityfs.catalog.model import OBJECT_KINDS, Kind
from trinityfs.catalog.names import check_new_name
from trinityfs.catalog.reader import DEFINITION_TYPES, CatalogReader
from trinityfs.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    InvalidNameError,
    NamespaceNotEmptyError,
    ObjectChangedError,
    ObjectNotFoundError,
)
from trinityfs.format.definitions import (
    FIXED_LAKEHOUSE_FIELDS,
    definition_from_json_dict,
    encode_definition,
    validate_lakehouse_def,
)
from trinityfs.format.paths import check_version
from trinityfs.format.trinitylake_pb2 import LakehouseDef, NamespaceDef
from trinityfs.txn.commute import PropertyUpdate
from trinityfs.txn.placement import place_definition
from trinityfs.txn.transaction import Transaction

Definition = Message | dict[str, Any] | None
P = ParamSpec("P")
R = TypeVar("R")


def _in_turn(method: Callable[P, R]) -> Callable[P, R]:
    """Run a write of a shared CatalogTransaction while holding its transaction's lock:
    a write is several transaction calls (a name check, then the put), so two threads
    could both pass the check and the second silently replace the first's object."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with args[0].txn.lock:  # type: ignore[attr-defined]
            return method(*args, **kwargs)

    return wrapper


PutMode = Literal["upsert", "create", "replace"]


@dataclass(frozen=True)
class PutResult:
    """What `put` did: "created", "replaced" or "unchanged" (nothing written), and the
    kind the object had before (None if it did not exist)."""

    action: Literal["created", "replaced", "unchanged"]
    kind: Kind
    previous_kind: Kind | None
    version: int | None = None  # the committed version (set by Lakehouse.put_object)


def as_definition(kind: Kind, definition: Definition) -> Message:
    """A protobuf definition of `kind` from a message, a JSON-style dict, or None (empty)."""
    cls = DEFINITION_TYPES[kind]
    if definition is None:
        return cls()
    if isinstance(definition, dict):
        return definition_from_json_dict(definition, cls)
    if not isinstance(definition, cls):
        raise InvalidArgumentError(
            f"a {kind} definition must be a {cls.__name__}, not {type(definition).__name__}"
        )
    copy = cls()
    copy.CopyFrom(definition)
    return copy


def checked_properties(properties: Mapping[str, str] | None) -> dict[str, str]:
    """Properties as given (None: none), each name and value a str that UTF-8 can encode:
    InvalidArgumentError naming the property otherwise (not a TypeError from protobuf)."""
    if properties is None:
        return {}
    if not isinstance(properties, Mapping):
        raise InvalidArgumentError(
            f"properties must be a mapping of names to values, not {type(properties).__name__}"
        )
    for name, value in properties.items():
        _check_text(name, "a property name")
        _check_text(value, f"property {name!r}'s value")
    return dict(properties)


def checked_property_names(names: Iterable[str]) -> list[str]:
    """Property names to remove: a collection of str (a str alone would be its letters)."""
    if isinstance(names, str | bytes) or not isinstance(names, Iterable):
        raise InvalidArgumentError(
            f"property names to remove must be a list of names, not {type(names).__name__}"
        )
    names = list(names)
    for name in names:
        _check_text(name, "a property name")
    return names


def _check_text(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string, not {type(value).__name__}")
    try:
        value.encode()
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(
            f"{what} is not valid Unicode (a lone surrogate at {exc.start})"
        ) from None


def new_id() -> str:
    """A random (version 4) UUID string: str(uuid.uuid4()) without the object."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # variant RFC 4122
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class CatalogTransaction(CatalogReader):
    """Reads (seeing its own writes) and writes, committed atomically by `commit()`.

    Use as a context manager: leaving the block commits, an exception aborts.
    """

    def __init__(self, txn: Transaction, on_commit: Callable[[int], None] | None = None):
        super().__init__(txn, txn.read_file, txn.base_version)
        self.txn = txn
        self._on_commit = on_commit

    def __enter__(self) -> CatalogTransaction:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()

    def discard(self) -> None:
        """Clean-up after a failure: abort unless the commit landed. A commit that
        landed and then raised (Ctrl-C in its late check, an undo that failed) stands,
        and the caller's exception propagates; `abort()` would raise instead. A commit
        of unknown outcome is settled by the abort: TransactionClosedError if it landed."""
        if self.txn.committed_version is None:
            self.abort()

    def commit(self) -> int:
        """Commit; returns the new version (the base version when nothing changed)."""
        version = self.txn.commit()
        if self._on_commit is not None:
            self._on_commit(version)
        return version

    def abort(self) -> None:
        """Forget every change; TransactionClosedError after a commit that landed."""
        self.txn.abort()

    # -- helpers --------------------------------------------------------------------

    def _store(
        self,
        kind: Kind,
        key: str,
        namespace: str,
        name: str | None,
        msg: Message,
        reapply: PropertyUpdate | None = None,
    ) -> None:
        if not msg.id:
            msg.id = new_id()
        data = encode_definition(msg)  # refuses what readers could not read (limits)
        location = place_definition(self.txn.engine.storage, kind, namespace, name, data)
        self.txn.put(key, location, data, reapply)

    def _claim_name(
        self, kind: Kind, namespace: str, name: str, keys: dict[str, str] | None = None
    ) -> None:
        """Refuse a taken name, and conflict if a concurrent commit takes it as the other kind.

        `keys`: the object keys of `namespace.name` for each kind, when the caller has them.
        """
        if keys is None:
            keys = self.keys.object_keys(namespace, name)
        for existing, key in keys.items():
            if self._view.get(key) is not None:
                raise AlreadyExistsError(f"{existing} {namespace}.{name} already exists")
        for other, key in keys.items():
            if other != kind:
                self.txn.require_unchanged(key)

    def _check_new_name(self, kind: Kind, namespace: str, name: str | None) -> None:
        """The creation policy of trinityfs.catalog.names (reserved and non-NFC names)."""

        def exists(other: str) -> bool:
            try:
                if name is None:
                    return self.namespace_exists(other)
                return self.object_kind(namespace, other) is not None
            except InvalidNameError:  # the other spelling is too long to exist
                return False

        check_new_name(kind, namespace if name is None else name, exists)

    def _require_namespace(self, namespace: str) -> str:
        key = self.keys.namespace_key(namespace)
        self._namespace_location(namespace, key)
        self.txn.require_exists(key)
        return key

    # -- namespaces -----------------------------------------------------------------

    @_in_turn
    def create_namespace(
        self, namespace: str, properties: dict[str, str] | None = None, *, exist_ok: bool = False
    ) -> None:
        key = self.keys.namespace_key(namespace)
        if self._view.get(key) is not None:
            if exist_ok:
                return
            raise AlreadyExistsError(f"namespace {namespace!r} already exists")
        self._check_new_name("namespace", namespace, None)
        msg = NamespaceDef(properties=checked_properties(properties))
        self._store("namespace", key, namespace, None, msg)

    @_in_turn
    def replace_namespace(self, namespace: str, definition: Definition) -> None:
        key = self.keys.namespace_key(namespace)
        old = self.describe_namespace(namespace)
        msg = as_definition("namespace", definition)
        if not msg.id:
            msg.id = old.id
        self._store("namespace", key, namespace, None, msg)

    @_in_turn
    def set_namespace_properties(
        self, namespace: str, updates: dict[str, str] | None = None, removals=()
    ) -> bool:
        """Set and remove some properties; False (nothing staged) when that changes
        nothing."""
        msg = self.describe_namespace(namespace)
        updates = checked_properties(updates)
        removals = checked_property_names(removals)
        current = msg.properties
        if all(current.get(n) == v for n, v in updates.items()) and not any(
            n in current for n in removals
        ):
            return False  # changes nothing: no new definition, no version (as an equal put)
        key = self.keys.namespace_key(namespace)
        # Updates of different property names commute with concurrent ones (txn/commute.py)
        # unless this transaction wrote the namespace some other way (created, replaced).
        update = self.txn.reapply_of(key)
        if not isinstance(update, PropertyUpdate) and key not in self.txn.pending:
            update = PropertyUpdate(
                key, NamespaceDef, "namespace", namespace, None, f"namespace {namespace!r}"
            )
        if isinstance(update, PropertyUpdate):
            update.touch(dict(msg.properties), updates, removals)
        for name in removals:
            msg.properties.pop(name, None)
        for name, value in updates.items():
            msg.properties[name] = value
        self._store("namespace", key, namespace, None, msg, update)
        return True

    @_in_turn
    def drop_namespace(self, namespace: str, *, cascade: bool = False) -> None:
        """Drop a namespace; with cascade its tables and views too, else it must be empty."""
        key = self.keys.namespace_key(namespace)
        self._namespace_location(namespace)
        for kind in OBJECT_KINDS:
            names = list(self.iter_names(kind, namespace))
            if names and not cascade:
                raise NamespaceNotEmptyError(
                    f"namespace {namespace!r} is not empty ({len(names)} {kind}s, first "
                    f"{names[0]!r}); drop them first or use cascade"
                )
            for name in names:
                self.txn.delete(self.keys.object_key(kind, namespace, name))
            self.txn.require_unchanged_prefix(self.keys.children_prefix(kind, namespace))
        self.txn.delete(key)

    # -- tables and views -----------------------------------------------------------

    @_in_turn
    def create(self, kind: Kind, namespace: str, name: str, definition: Definition = None) -> None:
        self._valid(kind, name)
        self._require_namespace(namespace)
        keys = self.keys.object_keys(namespace, name)  # once for the checks and the write
        self._claim_name(kind, namespace, name, keys)
        self._check_new_name(kind, namespace, name)
        msg = as_definition(kind, definition)
        self._store(kind, keys[kind], namespace, name, msg)

    @_in_turn
    def replace(self, kind: Kind, namespace: str, name: str, definition: Definition) -> None:
        old = self.describe(kind, namespace, name)
        msg = as_definition(kind, definition)
        if not msg.id:
            msg.id = old.id
        self._store(kind, self.keys.object_key(kind, namespace, name), namespace, name, msg)

    @_in_turn
    def drop(self, kind: Kind, namespace: str, name: str) -> None:
        if self.object_location(kind, namespace, name) is None:
            self._namespace_location(namespace)
            raise ObjectNotFoundError(f"{kind} {namespace}.{name} does not exist")
        self.txn.delete(self.keys.object_key(kind, namespace, name))

    @_in_turn
    def rename(
        self, kind: Kind, namespace: str, name: str, new_namespace: str, new_name: str
    ) -> None:
        """Move a table or view to a new name, in the same or another namespace."""
        msg = self.describe(kind, namespace, name)
        if (namespace, name) == (new_namespace, new_name):
            return
        self._valid(kind, new_name)
        self._require_namespace(new_namespace)
        self._claim_name(kind, new_namespace, new_name)
        if new_name != name:  # a name kept (a namespace moving) is not a new name
            self._check_new_name(kind, new_namespace, new_name)
        self.txn.delete(self.keys.object_key(kind, namespace, name))
        key = self.keys.object_key(kind, new_namespace, new_name)
        self._store(kind, key, new_namespace, new_name, msg)

    @_in_turn
    def put(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        definition: Definition,
        *,
        base_version: int | None = None,
        mode: PutMode = "upsert",
        create_namespace: bool = False,
    ) -> PutResult:
        """Create or replace the table or view `namespace.name` with `definition` (upsert).

        - `base_version`: the version the caller read the object at; ObjectChangedError
          (a CommitConflictError) if the object, of either kind, is not what it was then
          (replaced, dropped, created). Commit-time conflict detection covers commits
          racing this one, as for every write.
        - `mode`: "create" refuses an existing object (AlreadyExistsError), "replace" a
          missing one (ObjectNotFoundError), "upsert" takes both.
        - A definition without an id keeps the current object's id; one equal to the
          current definition writes nothing ("unchanged"). Writing another kind over an
          object replaces it by a new object (a table becomes a view with a new id).
        - `create_namespace`: create a missing namespace first (else NamespaceNotFoundError).
        """
        if kind not in OBJECT_KINDS:
            raise InvalidArgumentError(f"put writes a table or a view, not a {kind!r}")
        if mode not in ("upsert", "create", "replace"):
            raise InvalidArgumentError(f"unknown put mode {mode!r}: upsert, create or replace")
        msg = as_definition(kind, definition)
        if base_version is not None:
            self._check_base(namespace, name, base_version)
        existing = self.object_kind(namespace, name)
        if existing is not None and mode == "create":
            raise AlreadyExistsError(f"{existing} {namespace}.{name} already exists")
        if existing is None:
            if mode == "replace":
                self._namespace_location(namespace)
                raise ObjectNotFoundError(
                    f"no table or view {namespace}.{name} to replace at version {self.version}"
                )
            if create_namespace and not self.namespace_exists(namespace):
                self.create_namespace(namespace)
            self.create(kind, namespace, name, msg)
            return PutResult("created", kind, None)
        if existing == kind:
            old = self.describe(kind, namespace, name)
            if not msg.id:
                msg.id = old.id
            if msg == old:
                self.txn.require_unchanged(self.keys.object_key(kind, namespace, name))
                return PutResult("unchanged", kind, kind)
            self.replace(kind, namespace, name, msg)
            return PutResult("replaced", kind, kind)
        self.drop(existing, namespace, name)
        self.create(kind, namespace, name, msg)
        return PutResult("replaced", kind, existing)

    def _check_base(self, namespace: str, name: str, base_version: int) -> None:
        """ObjectChangedError unless `namespace.name` is as it was at `base_version`."""
        base = self.txn.engine.snapshot(check_version(base_version))
        for kind, key in self.keys.object_keys(namespace, name).items():
            then, now = base.get(key), self._view.get(key)
            if then != now:
                state = "created" if then is None else ("dropped" if now is None else "replaced")
                raise ObjectChangedError(
                    key,
                    self.version,
                    f"{kind} {namespace}.{name} was {state} after version {base_version} "
                    f"(as of version {self.version}); read it again and retry",
                    base_version,
                )

    @_in_turn
    def move_namespace(
        self, namespace: str, new_namespace: str, *, merge: bool = False, replace: bool = False
    ) -> None:
        """Rename a namespace with everything in it, keeping ids and properties.

        The new namespace gets the old one's definition (id and properties), and each
        table and view is renamed into it (keeping its id and definition); the old
        namespace is dropped. If `new_namespace` exists: AlreadyExistsError, or with
        `merge` the objects move into it and it keeps its own id and properties. An
        object name taken in the target: AlreadyExistsError, or with `replace` the
        target's object is dropped first (like `mv` over a file).
        """
        old = self.describe_namespace(namespace)
        if new_namespace == namespace:
            return
        new_key = self.keys.namespace_key(new_namespace)  # validates the name
        if self.namespace_exists(new_namespace):
            if not merge:
                raise AlreadyExistsError(f"namespace {new_namespace!r} already exists")
            self.txn.require_exists(new_key)
        else:
            self._check_new_name("namespace", new_namespace, None)
            msg = NamespaceDef()
            msg.CopyFrom(old)
            self._store("namespace", new_key, new_namespace, None, msg)
        for kind in OBJECT_KINDS:
            for name in list(self.iter_names(kind, namespace)):
                taken = self.object_kind(new_namespace, name)
                if taken is not None:
                    if not replace:
                        raise AlreadyExistsError(
                            f"{taken} {new_namespace}.{name} already exists (moving "
                            f"namespace {namespace!r} into {new_namespace!r})"
                        )
                    self.drop(taken, new_namespace, name)
                self.rename(kind, namespace, name, new_namespace, name)
        self.drop_namespace(namespace)

    def create_table(self, namespace: str, name: str, definition: Definition = None) -> None:
        self.create("table", namespace, name, definition)

    def replace_table(self, namespace: str, name: str, definition: Definition) -> None:
        self.replace("table", namespace, name, definition)

    def drop_table(self, namespace: str, name: str) -> None:
        self.drop("table", namespace, name)

    def rename_table(self, namespace: str, name: str, new_namespace: str, new_name: str) -> None:
        self.rename("table", namespace, name, new_namespace, new_name)

    def create_view(self, namespace: str, name: str, definition: Definition = None) -> None:
        self.create("view", namespace, name, definition)

    def replace_view(self, namespace: str, name: str, definition: Definition) -> None:
        self.replace("view", namespace, name, definition)

    def drop_view(self, namespace: str, name: str) -> None:
        self.drop("view", namespace, name)

    def rename_view(self, namespace: str, name: str, new_namespace: str, new_name: str) -> None:
        self.rename("view", namespace, name, new_namespace, new_name)

    # -- the lakehouse definition ---------------------------------------------------

    @_in_turn
    def set_lakehouse_def(self, ldef: LakehouseDef) -> None:
        """Commit a new LakehouseDef (properties, exports); order and name limits are fixed.
        It must pass the checks a new lakehouse's does: one every later commit could not
        build on (a node size below the key table, an unknown isolation level, an unsafe
        export location) would leave the lakehouse unwritable, rollback included."""
        validate_lakehouse_def(ldef)
        old = self.lakehouse_def
        for field in FIXED_LAKEHOUSE_FIELDS:
            if getattr(ldef, field) != getattr(old, field):
                raise InvalidArgumentError(f"{field} of a lakehouse cannot change after creation")
        self.txn.set_lakehouse_def(ldef)
