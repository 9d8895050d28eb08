"""The way out of a latest lakehouse definition that fails validation.

Another writer may commit a LakehouseDef trinityfs refuses (a name limit above ours, a
malformed property, a node size below the key table). Every commit, rollback, export
and expiration reads the latest definition first, so nothing could be committed any
more, although older versions stay readable. `rollback_over_invalid_definition` is the
repair: a rollback to a version whose definition passes, committing that version's
tree with a *repaired* definition (docs/FORMAT-CHOICES.md, "A latest lakehouse
definition that fails validation"):

- the fields fixed at creation (id, major version, order, name limits) are the
  target's: the target's tree was encoded with them;
- the exports are exactly the latest definition's (an export recorded or dropped since
  the target version stays recorded or dropped); an export entry the checks refuse (an
  unsafe location, no name: no reader can use it) is never dropped silently: the repair
  is refused (LakehouseDefInvalidError names it) unless the caller asks for it to be
  dropped (`drop_refused_exports`, `trinityfs rollback --drop-refused-exports`), and
  then the warning names each record dropped;
- every other field (properties key by key, txn ttl, isolation level, node size) is
  the latest definition's, unless the checks refuse it: then the target's.

Refused (LakehouseDefInvalidError, nothing committed): the target's own definition
fails validation, the latest definition is not a LakehouseDef at all (its exports are
unknown), or its exports are refused and not to be dropped. A latest definition of a
newer major format version is not invalid: UnsupportedFormatVersionError, nothing is
downgraded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from trinityfs.errors import (
    CommitConflictError,
    CorruptFileError,
    InvalidArgumentError,
    LakehouseDefInvalidError,
    StorageError,
    StorageFileNotFoundError,
    UnsupportedFormatVersionError,
    VersionNotFoundError,
)
from trinityfs.format.definitions import (
    FIXED_LAKEHOUSE_FIELDS,
    SUPPORTED_MAJOR_VERSION,
    LakehouseDef,
    decode_definition,
    encode_definition,
    refused_exports,
    validate_lakehouse_def,
)
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF
from trinityfs.format.paths import new_lakehouse_def_location
from trinityfs.tree import Node
from trinityfs.txn.engine import Engine
from trinityfs.txn.publish import (
    BlockedRoot,
    SourceExpiredError,
    build_root,
    check_source_kept,
    create_root,
    missing_files,
    verify_newly_reached,
)
from trinityfs.txn.snapshot import Snapshot

log = logging.getLogger(__name__)

#: how many versions below the latest are read to name the newest valid definition
NEWEST_VALID_LOOKBACK = 64


def rollback_over_invalid_definition(
    engine: Engine,
    target_version: int,
    *,
    expected_latest: int | None = None,
    drop_refused_exports: bool = False,
) -> int | None:
    """Roll back to `target_version` while the latest definition fails validation;
    -> the new version, or None when the latest definition passes (nothing done: the
    plain rollback applies). See the module doc; raises LakehouseDefInvalidError when no
    repair is possible, CommitConflictError as `publish.rollback` does."""
    what = f"rollback to version {target_version}"
    blocked = BlockedRoot()
    version: int | None = None
    target: Snapshot | None = None
    verified: set[str] = set()
    while True:
        latest_version = engine.roots.latest_version()
        if version is not None:  # the create of `version` lost
            blocked.lost(version, latest_version)
        if expected_latest is not None and latest_version != expected_latest:
            raise CommitConflictError(
                "",
                latest_version,
                f"{what}: the latest version is {latest_version}, not {expected_latest}; "
                "nothing was committed",
            )
        latest_root = engine.roots.load(latest_version)
        location, raw, problem = _definition_of(engine, latest_root, latest_version)
        if problem is None:
            return None
        if target is None:
            target = _valid_target(engine, target_version, latest_version, problem)
        ldef, kept_from_target, dropped = repaired_definition(
            target.lakehouse_def, raw, location, problem, drop_refused_exports
        )
        if not verified:  # a rollback brings back what it reaches: read it all, once
            empty = Snapshot(-1, Node.empty_leaf(), target.lakehouse_def, "", target.nodes)
            verify_newly_reached(engine, target, empty, verified)
            verified.add(target.lakehouse_def_location)
        data = encode_definition(ldef)
        new_location = new_lakehouse_def_location(data)
        engine.storage.write_immutable(new_location, data)
        previous = Snapshot(latest_version, latest_root, ldef, location, target.nodes)
        version = latest_version + 1
        order = target.lakehouse_def.order
        data, root = build_root(
            engine,
            version,
            target.root,
            {},
            order=order,
            budget=engine.budget(ldef),
            lakehouse_def=new_location,
            previous=previous,
            rollback_from=latest_version,
            tree_version=target_version,
        )
        check_source_kept(engine, target_version, what)
        try:
            landed = create_root(engine, version, data, root, source=target_version)
        except SourceExpiredError:
            gone = missing_files(engine, root, order)
            if gone:
                raise VersionNotFoundError(
                    f"{what}: version {target_version} was expired while the rollback was "
                    f"being committed and {gone[0]} is gone; version {version} is "
                    "unreadable: roll back to a kept version"
                ) from None
            engine.roots.write_hint(version)
            landed = True
        if landed:
            log.warning(
                "%s: the latest definition %s (version %d) failed validation (%s); version "
                "%d has a repaired definition %s: the exports as recorded in version %d%s; %s",
                what,
                location,
                latest_version,
                problem,
                version,
                new_location,
                latest_version,
                "".join(f" but {name!r} (dropped: {why})" for name, why in dropped.items()),
                f"taken from version {target_version}: " + ", ".join(kept_from_target)
                if kept_from_target
                else "every other field as well",
            )
            return version
        if expected_latest is not None:
            raise CommitConflictError(
                "",
                version,
                f"{what}: version {version} landed while the rollback was committed (the "
                f"latest version is no longer {expected_latest}); nothing was committed",
            )


@dataclass
class RepairPreview:
    """What a rollback to a version would repair (a dry run; nothing is written)."""

    latest_version: int
    problem: str  # why the latest definition is refused
    fields_from_target: list[str] = field(default_factory=list)
    #: export records the checks refuse, dropped (only with drop_refused_exports): name -> why
    exports_dropped: dict[str, str] = field(default_factory=dict)


def repair_preview(
    engine: Engine, target_version: int, *, drop_refused_exports: bool = False
) -> RepairPreview | None:
    """What `rollback_over_invalid_definition` would do now, written nowhere: None when
    the latest definition passes; LakehouseDefInvalidError when it would be refused."""
    latest_version = engine.roots.latest_version()
    latest_root = engine.roots.load(latest_version)
    location, raw, problem = _definition_of(engine, latest_root, latest_version)
    if problem is None:
        return None
    target = _valid_target(engine, target_version, latest_version, problem)
    _ldef, kept, dropped = repaired_definition(
        target.lakehouse_def, raw, location, problem, drop_refused_exports
    )
    return RepairPreview(latest_version, problem, kept, dropped)


def _definition_of(
    engine: Engine, root: Node, version: int
) -> tuple[str, LakehouseDef | None, str | None]:
    """(location, decoded definition or None, why the checks refuse it or None) of the
    definition `root` names; a newer major version raises UnsupportedFormatVersionError."""
    location = root.system.get(KEY_LAKEHOUSE_DEF)
    if location is None:
        return "", None, f"the root of version {version} names no lakehouse definition"
    try:
        raw = decode_definition(engine.storage.read_immutable(location), LakehouseDef, location)
    except (CorruptFileError, StorageError, StorageFileNotFoundError) as exc:
        return location, None, str(exc)
    if raw.major_version != SUPPORTED_MAJOR_VERSION:
        validate_lakehouse_def(raw)  # UnsupportedFormatVersionError: never downgraded
    try:
        validate_lakehouse_def(raw)
    except (InvalidArgumentError, CorruptFileError) as exc:
        return location, raw, str(exc)
    return location, raw, None


def _valid_target(engine: Engine, target_version: int, latest: int, problem: str) -> Snapshot:
    """The snapshot of `target_version`, whose definition must pass the checks."""
    location, _raw, target_problem = _definition_of(
        engine, engine.roots.load(target_version), target_version
    )
    if target_problem is not None:
        newest = newest_valid_definition(engine, latest)
        hint = (
            f"; the newest version whose definition passes is {newest}"
            if newest is not None
            else f"; none of the {NEWEST_VALID_LOOKBACK} versions below it has one"
        )
        raise LakehouseDefInvalidError(
            location or "<root>",
            f"the latest lakehouse definition (version {latest}) fails validation ({problem}) "
            f"and so does the one of version {target_version}, the rollback's target "
            f"({target_problem}); nothing was committed{hint}",
            target_version,
        )
    return engine.snapshot(target_version)


def newest_valid_definition(engine: Engine, latest: int) -> int | None:
    """The newest version below `latest` (at most NEWEST_VALID_LOOKBACK below) whose
    definition passes the checks, or None."""
    oldest = max(0, latest - NEWEST_VALID_LOOKBACK, engine.roots.oldest_marker() or 0)
    for version in range(latest - 1, oldest - 1, -1):
        try:
            engine.snapshot(version)
        except (CorruptFileError, UnsupportedFormatVersionError, StorageError):
            continue
        except VersionNotFoundError:
            return None
        return version
    return None


def repaired_definition(
    target: LakehouseDef,
    latest: LakehouseDef | None,
    location: str,
    problem: str,
    drop_refused_exports: bool = False,
) -> tuple[LakehouseDef, list[str], dict[str, str]]:
    """The definition a repairing rollback commits (module doc) -> (it, the fields and
    properties taken from `target` because the checks refuse the latest's, the export
    records dropped because the checks refuse them: only with `drop_refused_exports`)."""
    if latest is None:
        raise LakehouseDefInvalidError(
            location or "<root>",
            f"the latest lakehouse definition cannot be read ({problem}), so the exports "
            "it records are unknown: no rollback can keep them; nothing was committed",
        )
    ldef = LakehouseDef()
    ldef.CopyFrom(target)
    ldef.exported_snapshots.clear()
    ldef.exported_snapshots.update(latest.exported_snapshots)
    dropped = refused_exports(ldef) if drop_refused_exports else {}
    for name in dropped:
        del ldef.exported_snapshots[name]
    try:
        validate_lakehouse_def(ldef)
    except (InvalidArgumentError, CorruptFileError) as exc:
        raise LakehouseDefInvalidError(
            location,
            f"the latest lakehouse definition fails validation and its exports are what it "
            f"refuses ({exc}); a rollback would drop that record, so nothing was committed "
            "(`trinityfs rollback --drop-refused-exports` drops such records, naming each)",
        ) from None
    kept: list[str] = [f for f in FIXED_LAKEHOUSE_FIELDS if getattr(latest, f) != getattr(ldef, f)]
    for descriptor in LakehouseDef.DESCRIPTOR.fields:
        name = descriptor.name
        if name in FIXED_LAKEHOUSE_FIELDS or name == "exported_snapshots":
            continue
        if name == "properties":
            for key in sorted(set(ldef.properties) | set(latest.properties)):
                if not _try(ldef, lambda d, k=key: _set_property(d, k, latest.properties.get(k))):
                    kept.append(f"property {key}")
        elif getattr(ldef, name) != getattr(latest, name) and not _try(
            ldef, lambda d, n=name: setattr(d, n, getattr(latest, n))
        ):
            kept.append(name)
    return ldef, kept, dropped


def _set_property(ldef: LakehouseDef, key: str, value: str | None) -> None:
    if value is None:
        ldef.properties.pop(key, None)
    else:
        ldef.properties[key] = value


def _try(ldef: LakehouseDef, change: Callable[[LakehouseDef], None]) -> bool:
    """Apply `change` to `ldef` if the result still passes the checks; -> whether it did."""
    trial = LakehouseDef()
    trial.CopyFrom(ldef)
    change(trial)
    try:
        validate_lakehouse_def(trial)
    except (InvalidArgumentError, CorruptFileError):
        return False
    ldef.CopyFrom(trial)
    return True
