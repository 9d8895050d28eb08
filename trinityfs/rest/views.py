"""Iceberg views over REST, stored as TrinityLake views.

An Iceberg view is a TrinityLake view definition whose properties hold
`table_format=ICEBERG` and `metadata_location`, the Iceberg view metadata file (JSON, in
the warehouse, written once per change like table metadata). Create, replace, drop and
rename are one catalog transaction each; a replace swaps the pointer only if it still
names the metadata the change was computed from (409 CommitFailedException otherwise).
TrinityLake views that are not Iceberg views (no metadata_location) are no Iceberg views
(trinityfs/iceberg/objects.py): not listed, and 404 to HEAD, GET, DELETE and rename.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter
from pyiceberg.exceptions import (
    CommitFailedException,
    NoSuchNamespaceError,
    NoSuchViewError,
    ViewAlreadyExistsError,
)
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.schema import Schema
from pyiceberg.view.metadata import ViewHistoryEntry, ViewMetadata, ViewVersion

from trinityfs.catalog import CatalogSnapshot, CatalogTransaction
from trinityfs.catalog.names import check_new_object_name
from trinityfs.errors import InvalidNameError
from trinityfs.iceberg.errors import iceberg_errors
from trinityfs.iceberg.multitable import delete_quietly
from trinityfs.iceberg.objects import view_location
from trinityfs.iceberg.pointer import view_definition
from trinityfs.rest import requests as rq
from trinityfs.rest.errors import RestError, bad_request
from trinityfs.rest.locations import LocationPolicy, safe_segment
from trinityfs.rest.selector import Pin
from trinityfs.rest.service import RestCatalogService, is_class_property

_SCHEMA = TypeAdapter(Schema)
_VERSION = TypeAdapter(ViewVersion)


def _now() -> int:
    return int(time.time() * 1000)


class ViewService:
    """The view endpoints' logic."""

    def __init__(self, service: RestCatalogService):
        self.service = service
        self.lake = service.lake
        self.policy = service.policy

    # -- storage of view metadata ---------------------------------------------------

    def _io(self, location: str) -> FileIO:
        return load_file_io(properties=self.service.catalog.properties, location=location)

    def _write(self, metadata: ViewMetadata, sequence: int) -> str:
        location = f"{metadata.location}/metadata/{sequence:05d}-{uuid.uuid4()}.metadata.json"
        self.policy.check(location, "view metadata location")
        with self._io(location).new_output(location).create(overwrite=False) as out:
            out.write(metadata.model_dump_json().encode())
        return location

    def _read(self, location: str, what: str) -> ViewMetadata:
        try:
            with self._io(location).new_input(location).open() as stream:
                return ViewMetadata.model_validate_json(stream.read())
        except (OSError, ValueError) as exc:
            raise RestError(
                500, "InternalServerError", f"the metadata of {what} cannot be read: {exc}"
            ) from None

    @staticmethod
    def _pointer(view: CatalogSnapshot | CatalogTransaction, ns: str, name: str) -> str:
        """The Iceberg view's metadata location (trinityfs/iceberg/objects.py: a view
        that is no Iceberg view is NoSuchViewError, 404)."""
        return view_location(view, ns, name)

    @staticmethod
    def _definition(location: str) -> dict[str, Any]:
        return view_definition(location)

    def _result(self, location: str, metadata: ViewMetadata) -> bytes:
        return b"".join(
            (
                b'{"metadata-location":',
                json.dumps(location).encode(),
                b',"metadata":',
                metadata.model_dump_json().encode(),
                b',"config":{}}',
            )
        )

    def _commit(
        self,
        change: Callable[[CatalogTransaction], None],
        ns: str,
        name: str,
        target: str | None = None,
        must_exist: bool = False,
    ) -> None:
        """`change` in one catalog transaction; catalog errors as PyIceberg's (the
        Iceberg front end's one translation, trinityfs/iceberg/errors.py), then the
        REST error model maps those (rest/errors.py)."""
        ident = f"{ns}.{name}"
        with iceberg_errors(
            f"the change of view {ident}", table=ident, namespace=ns, target=target, kind="view"
        ):
            txn = self.lake.transaction()
            try:
                change(txn)
                txn.commit()
            except BaseException:
                txn.discard()  # a commit that landed stands; its exception propagates
                raise

    # -- endpoints ------------------------------------------------------------------

    def exists(self, pin: Pin, ns: str, name: str) -> bool:
        """HEAD's answer: True exactly when GET finds an Iceberg view (a TrinityLake view
        that is not one is 404 to both)."""
        try:
            self._pointer(self.service.snapshot(pin), ns, name)
        except NoSuchViewError:
            return False
        return True

    def load(self, pin: Pin, ns: str, name: str) -> bytes:
        location = self._pointer(self.service.snapshot(pin), ns, name)
        return self._result(location, self._read(location, f"view {ns}.{name}"))

    def create(self, ns: str, body: dict[str, Any]) -> bytes:
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise bad_request("name must be a non-empty string")
        if body.get("schema") is None or body.get("view-version") is None:
            raise bad_request("schema and view-version are required")
        schema = rq.validated(_SCHEMA.validate_python, body["schema"], "schema")
        schema = schema.model_copy(update={"schema_id": 0})
        version = rq.validated(_VERSION.validate_python, body["view-version"], "view-version")
        props = rq.string_map(body.get("properties"), "properties")
        self._check_properties(props)
        location = body.get("location")
        if location is not None and not isinstance(location, str):
            raise bad_request("location must be a string")
        if not location:
            safe_segment(ns, "namespace")
            safe_segment(name, "view")
            warehouse = str(self.service.catalog.properties["warehouse"]).rstrip("/")
            location = f"{warehouse}/{ns}/{name}"
        location = self.policy.check(location, "view location")
        snap = self.lake.snapshot()
        try:
            if not snap.namespace_exists(ns):
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}")
            check_new_object_name(snap, "view", ns, name)  # before a file is written
        except InvalidNameError as exc:
            raise bad_request(str(exc)) from None
        if snap.object_kind(ns, name) is not None:
            raise ViewAlreadyExistsError(f"View {ns}.{name} already exists (as a table or view)")
        now = _now()
        version = version.model_copy(update={"version_id": 1, "schema_id": 0, "timestamp_ms": now})
        metadata = ViewMetadata(
            view_uuid=str(uuid.uuid4()),
            format_version=1,
            location=location,
            schemas=[schema],
            current_version_id=1,
            versions=[version],
            version_log=[ViewHistoryEntry(timestamp_ms=now, version_id=1)],
            properties=props,
        )
        metadata_location = self._write(metadata, 0)

        def change(txn: CatalogTransaction) -> None:
            txn.create_view(ns, name, self._definition(metadata_location))

        try:
            self._commit(change, ns, name)
        except (CommitFailedException, ViewAlreadyExistsError, NoSuchNamespaceError, ValueError):
            # known not committed: the metadata file written for it goes (as for tables)
            delete_quietly(self._io(metadata_location), metadata_location)
            raise
        return self._result(metadata_location, metadata)

    def _check_properties(self, props: dict[str, str]) -> None:
        for key in props:
            if is_class_property(key):
                raise RestError(
                    403, "ForbiddenException", f"view property {key!r} names a class to load"
                )

    def replace(self, ns: str, name: str, body: dict[str, Any]) -> bytes:
        """Apply a CommitViewRequest's requirements and updates (compare-and-swap)."""
        base_location = self._pointer(self.lake.snapshot(), ns, name)
        base = self._read(base_location, f"view {ns}.{name}")
        metadata = apply_view_updates(
            base, body.get("requirements") or [], body.get("updates") or [], self.policy
        )
        sequence = len(base.version_log) + 1
        location = self._write(metadata, sequence)

        def change(txn: CatalogTransaction) -> None:
            if self._pointer(txn, ns, name) != base_location:
                raise CommitFailedException(f"view {ns}.{name} changed concurrently; retry")
            txn.replace_view(ns, name, self._definition(location))

        self._commit(change, ns, name)
        return self._result(location, metadata)

    def drop(self, ns: str, name: str) -> None:
        def change(txn: CatalogTransaction) -> None:
            self._pointer(txn, ns, name)  # only an Iceberg view is dropped (404 as GET)
            with iceberg_errors("drop", table=f"{ns}.{name}", must_exist=True, kind="view"):
                txn.drop_view(ns, name)

        self._commit(change, ns, name)

    def rename(self, body: dict[str, Any]) -> None:
        ns, name = rq.identifier_json(body.get("source"), "source", for_write=False)
        new_ns, new_name = rq.identifier_json(body.get("destination"), "destination")

        def change(txn: CatalogTransaction) -> None:
            if not txn.namespace_exists(new_ns):
                raise NoSuchNamespaceError(f"Namespace does not exist: {new_ns}")
            self._pointer(txn, ns, name)  # only an Iceberg view is renamed (404 as GET)
            if (new_ns, new_name) == (ns, name):  # as a table renamed to its own name: 409
                raise ViewAlreadyExistsError(
                    f"View {ns}.{name} already exists: a view cannot be renamed to its own name"
                )
            txn.rename_view(ns, name, new_ns, new_name)

        self._commit(change, ns, name, target=f"{new_ns}.{new_name}", must_exist=True)


def apply_view_updates(
    base: ViewMetadata, requirements: list[Any], updates: list[Any], policy: LocationPolicy
) -> ViewMetadata:
    """The view metadata after `updates` (400 for anything unknown or inconsistent)."""
    if not isinstance(requirements, list) or not isinstance(updates, list):
        raise bad_request("requirements and updates must be lists")
    for req in requirements:
        if not isinstance(req, dict) or req.get("type") != "assert-view-uuid":
            raise bad_request(f"unknown view requirement {req!r:.200}")
        if req.get("uuid") != base.view_uuid:
            raise CommitFailedException(
                f"Requirement failed: view UUID {base.view_uuid} is not {req.get('uuid')}"
            )
    schemas, versions = list(base.schemas), list(base.versions)
    log, props = list(base.version_log), dict(base.properties)
    location, current = base.location, base.current_version_id
    last_schema = last_version = None
    for update in updates:
        action = update.get("action") if isinstance(update, dict) else None
        if action == "assign-uuid":
            if update.get("uuid") != base.view_uuid:
                raise bad_request("a view's UUID cannot be changed")
        elif action == "upgrade-format-version":
            if update.get("format-version") != 1:
                raise bad_request("view format version 1 is the only one")
        elif action == "add-schema":
            schema = rq.validated(_SCHEMA.validate_python, update.get("schema"), "schema")
            schema_id = max((s.schema_id for s in schemas), default=-1) + 1
            schemas.append(schema.model_copy(update={"schema_id": schema_id}))
            last_schema = schema_id
        elif action == "set-location":
            location = policy.check(update.get("location"), "view location")
        elif action == "set-properties":
            new = rq.string_map(update.get("updates"), "updates")
            if any(is_class_property(k) for k in new):
                raise RestError(403, "ForbiddenException", "view properties may not name classes")
            props.update(new)
        elif action == "remove-properties":
            for key in rq.string_list(update.get("removals"), "removals"):
                props.pop(key, None)
        elif action == "add-view-version":
            version = rq.validated(
                _VERSION.validate_python, update.get("view-version"), "view-version"
            )
            schema_id = version.schema_id
            if schema_id == -1:
                if last_schema is None:
                    raise bad_request("add-view-version uses schema -1 but no schema was added")
                schema_id = last_schema
            if schema_id not in {s.schema_id for s in schemas}:
                raise bad_request(f"add-view-version names unknown schema {schema_id}")
            version_id = max((v.version_id for v in versions), default=0) + 1
            versions.append(
                version.model_copy(update={"version_id": version_id, "schema_id": schema_id})
            )
            last_version = version_id
        elif action == "set-current-view-version":
            version_id = update.get("view-version-id")
            if not isinstance(version_id, int) or isinstance(version_id, bool):
                raise bad_request(f"view-version-id must be an integer, not {version_id!r:.100}")
            if version_id == -1:
                version_id = last_version
            if version_id not in {v.version_id for v in versions}:
                raise bad_request(f"set-current-view-version names unknown version {version_id}")
            current = version_id
            log.append(ViewHistoryEntry(timestamp_ms=_now(), version_id=version_id))
        else:
            raise bad_request(f"unknown view update {action!r}")
    return base.model_copy(
        update={
            "schemas": schemas,
            "versions": versions,
            "version_log": log,
            "properties": props,
            "location": location,
            "current_version_id": current,
        }
    )


__all__ = ["ViewService", "apply_view_updates"]
