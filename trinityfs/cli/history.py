"""Commands on the lakehouse and its history: init, log, diff, show, rollback."""

from __future__ import annotations

import argparse
import os
import re
import shlex
from collections import Counter
from typing import TYPE_CHECKING, Any

from .context import Context, duration, key_value, resolve_version
from .output import millis_to_text, table

if TYPE_CHECKING:
    from trinityfs.catalog import Change, VersionInfo

    from .app import AddCommand

SUMMARY_ITEMS = 3
_INTERRUPTED_INIT = re.compile(r"_lakehouse_def_[0-9a-f-]+\.binpb")


def _count(text: str) -> int:
    """A number of versions: 0 or more (a negative one listed nothing, silently)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def register(add: AddCommand) -> None:
    p = add("init", cmd_init, "create a lakehouse at the root (a new or empty directory)")
    p.add_argument(
        "--order",
        type=int,
        help="tree order, 3..4096 (default 128; 256 for lakehouses of >= ~200k tables)",
    )
    p.add_argument("--namespace-max-bytes", type=int, dest="namespace_name_max_size_bytes")
    p.add_argument("--table-max-bytes", type=int, dest="table_name_max_size_bytes")
    p.add_argument("--view-max-bytes", type=int, dest="view_name_max_size_bytes")
    p.add_argument("--node-max-bytes", type=int, dest="node_file_max_size_bytes")
    p.add_argument(
        "--txn-ttl",
        "--txn-ttl-millis",
        type=duration,
        dest="txn_ttl_millis",
        metavar="DURATION",
        help="how long a transaction may run (e.g. 1h, 30m; a bare number is millis)",
    )
    p.add_argument("--isolation", dest="txn_isolation_level", choices=["SNAPSHOT", "SERIALIZABLE"])
    p.add_argument("--property", type=key_value, action="append", metavar="KEY=VALUE")
    p.add_argument("--exist-ok", action="store_true", help="succeed if one already exists")

    p = add("log", cmd_log, "versions with their time and what each changed")
    p.add_argument("-n", "--limit", type=_count, help="only the latest N versions")
    p.add_argument("--reverse", action="store_true", help="oldest first")

    p = add("diff", cmd_diff, "objects created, replaced or dropped between two versions")
    p.add_argument("v1", help="a version number, 'latest', an export or an ISO-8601 time")
    p.add_argument("v2", help="a version number, 'latest', an export or an ISO-8601 time")

    p = add("show", cmd_show, "the lakehouse definition")
    p.add_argument("--version", dest="at", help="at this version (default the latest)")

    p = add("rollback", cmd_rollback, "commit a new version equal to an older one")
    p.add_argument("version", help="a version number, an export or an ISO-8601 time")
    p.add_argument("-n", "--dry-run", action="store_true", help="show what would change")
    p.add_argument(
        "--if-latest",
        type=_count,
        metavar="N",
        help="only if version N is still the latest (what --dry-run saw); else exit 1",
    )
    p.add_argument(
        "--drop-refused-exports",
        action="store_true",
        help="when the rollback repairs a latest definition whose export records the checks "
        "refuse (an unsafe location: unreadable), drop those records (each is named)",
    )


def summarize(changes: list[Change], info: VersionInfo, oldest: int) -> str:
    """One line saying what a version changed."""
    parts = []
    if info.rollback_from is not None:
        parts.append(f"rollback from version {info.rollback_from}")
    if len(changes) <= SUMMARY_ITEMS:
        parts += [f"{c.action} {c.object.kind} {c.object}" for c in changes]
    else:
        by_action: dict[str, Counter] = {}
        for c in changes:
            by_action.setdefault(c.action, Counter())[c.object.kind] += 1
        for action in ("created", "replaced", "dropped"):
            if action in by_action:
                kinds = by_action[action]
                counted = ", ".join(
                    f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(kinds.items())
                )
                parts.append(f"{action} {counted}")
    if not parts:
        return "(new lakehouse)" if info.version == oldest == 0 else "(lakehouse settings)"
    return "; ".join(parts)


def _change_json(change: Change) -> dict[str, Any]:
    ref = change.object
    return {"action": change.action, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name}


def refuse_foreign_directory(root: str, storage_options: dict[str, Any]) -> None:
    """`init` never writes into a non-empty local directory that holds no lakehouse."""
    if "://" in root and not root.startswith("file://"):
        return  # object stores: an empty prefix is not a thing people protect
    path = root.removeprefix("file://")
    if not os.path.exists(path):
        return
    if not os.path.isdir(path):
        raise NotADirectoryError(f"{path} exists and is not a directory")
    # an interrupted `init` leaves only a LakehouseDef file: finishing it is fine
    leftovers = [name for name in os.listdir(path) if not _INTERRUPTED_INIT.fullmatch(name)]
    if not leftovers:
        return
    from trinityfs.catalog import Lakehouse
    from trinityfs.errors import LakehouseNotFoundError

    try:
        Lakehouse.open(root, storage_options=storage_options)
    except LakehouseNotFoundError:
        raise FileExistsError(
            f"{path} is not empty and holds no lakehouse (it has {leftovers[0]!r}); "
            "give a new or empty directory"
        ) from None


def cmd_init(ctx: Context, args: argparse.Namespace) -> int:
    options = {
        name: getattr(args, name)
        for name in (
            "order",
            "namespace_name_max_size_bytes",
            "table_name_max_size_bytes",
            "view_name_max_size_bytes",
            "node_file_max_size_bytes",
            "txn_ttl_millis",
            "txn_isolation_level",
        )
        if getattr(args, name) is not None
    }
    if args.property:
        options["properties"] = dict(args.property)
    refuse_foreign_directory(ctx.root, ctx.storage_options)
    from trinityfs.catalog import Lakehouse

    lake = Lakehouse.create(
        ctx.root, storage_options=ctx.storage_options, exist_ok=args.exist_ok, **options
    )
    version = lake.latest_version()
    ctx.out.emit(
        {"root": lake.url, "version": version, "id": lake.lakehouse_def().id},
        f"lakehouse at {lake.url} (version {version})",
    )
    return 0


def cmd_log(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.errors import CorruptFileError

    lake = ctx.lake
    oldest, latest = lake.oldest_version(), lake.latest_version()
    start = oldest if args.limit is None else max(oldest, latest - args.limit + 1)
    versions = list(range(start, latest + 1))
    if not args.reverse:
        versions.reverse()
    records: list[tuple[VersionInfo, list[Change] | CorruptFileError]] = []
    with ctx.out.progress("versions read", len(versions)) as bar:
        for v in versions:
            info = lake.version_info(v)
            try:
                records.append((info, lake.changes(v)))
            except CorruptFileError as exc:  # said in its row; the others still listed
                records.append((info, exc.with_version(v)))
            bar.update()
    if ctx.out.json:
        ctx.out.emit(
            [
                {
                    "version": info.version,
                    "created_at": millis_to_text(info.created_at_millis),
                    "created_at_millis": info.created_at_millis,
                    "rollback_from": info.rollback_from,
                    **(
                        {"changes": None, "problem": str(changes)}
                        if isinstance(changes, CorruptFileError)
                        else {"changes": [_change_json(c) for c in changes]}
                    ),
                }
                for info, changes in records
            ]
        )
    else:
        rows = [
            [
                info.version,
                millis_to_text(info.created_at_millis),
                f"(unreadable: {changes})"
                if isinstance(changes, CorruptFileError)
                else summarize(changes, info, oldest),
            ]
            for info, changes in records
        ]
        ctx.out.emit(None, table(rows, ["VERSION", "TIME", "CHANGES"]))
    bad = [changes for _info, changes in records if isinstance(changes, CorruptFileError)]
    if not bad:
        return 0
    more = f" (and {len(bad) - 1} more versions)" if len(bad) > 1 else ""
    raise CorruptFileError(bad[0].path, f"{bad[0].problem}{more}", bad[0].version)


def cmd_diff(ctx: Context, args: argparse.Namespace) -> int:
    lake = ctx.lake
    v1, v2 = resolve_version(lake, args.v1), resolve_version(lake, args.v2)
    changes = lake.diff(v1, v2)
    if ctx.out.json:
        ctx.out.emit({"from": v1, "to": v2, "changes": [_change_json(c) for c in changes]})
        return 0
    marks = {"created": "+", "dropped": "-", "replaced": "~"}
    rows = [[marks[c.action], c.action, c.object.kind, str(c.object)] for c in changes]
    ctx.out.emit(None, table(rows) or [f"no changes between version {v1} and {v2}"])
    return 0


def cmd_show(ctx: Context, args: argparse.Namespace) -> int:
    lake = ctx.lake
    version = resolve_version(lake, args.at) if args.at is not None else lake.latest_version()
    from trinityfs.fs import content

    definition = content.definition_dict(lake.lakehouse_def(version))
    data = {
        "root": lake.url,
        "version": version,
        "latest_version": lake.latest_version(),
        "oldest_version": lake.oldest_version(),
        "definition": definition,
    }
    if ctx.out.json:
        ctx.out.emit(data)
        return 0
    rows = [
        ["root", lake.url],
        ["version", version],
        ["versions", f"{data['oldest_version']}..{data['latest_version']}"],
    ]
    for key in sorted(definition):
        value = definition[key]
        if isinstance(value, dict):
            if not value:
                rows.append([key, "{}"])
            for k, v in sorted(value.items()):
                rows.append([f"{key}.{k}", v])
        else:
            rows.append([key, value])
    ctx.out.emit(None, table(rows))
    return 0


def cmd_rollback(ctx: Context, args: argparse.Namespace) -> int:
    lake = ctx.lake
    target = resolve_version(lake, args.version)
    if args.dry_run:
        latest = lake.latest_version(fresh=True)
        if args.if_latest is not None and args.if_latest != latest:
            from trinityfs.errors import CommitConflictError

            raise CommitConflictError(
                "", latest, f"the latest version is {latest}, not {args.if_latest}"
            )
        given = f"--root {shlex.quote(args.root)} " if getattr(args, "root", None) else ""
        dropping = " --drop-refused-exports" if args.drop_refused_exports else ""
        command = (
            f"trinityfs {given}rollback {shlex.quote(args.version)} --if-latest {latest}{dropping}"
        )
        from trinityfs.errors import CorruptFileError, StorageFileNotFoundError

        try:
            changes = lake.diff(latest, target)
        except (CorruptFileError, StorageFileNotFoundError):
            preview = lake.rollback_repair_preview(
                target, drop_refused_exports=args.drop_refused_exports
            )
            if preview is None:
                raise
            return _repair_dry_run(ctx, target, preview, command)
        marks = {"created": "+", "dropped": "-", "replaced": "~"}
        rows = [[marks[c.action], c.action, c.object.kind, str(c.object)] for c in changes]
        ctx.out.emit(
            {
                "dry_run": True,
                "from": latest,
                "to": target,
                "changes": [_change_json(c) for c in changes],
                "command": command,
            },
            [
                f"rollback to version {target} would change (from the latest version {latest}):",
                *(("  " + line) for line in table(rows)),
                *(["  nothing"] if not rows else []),
                "rollback: dry run, nothing changed; to roll back only if no commit lands "
                "before it:",
                f"  {command}",
            ],
        )
        return 0
    latest = lake.latest_version(fresh=True)
    version = lake.rollback(
        target, expected_latest=args.if_latest, drop_refused_exports=args.drop_refused_exports
    )
    ctx.fs.invalidate_cache()
    changed = version > latest
    ctx.out.emit(
        {"version": version if changed else None, "changed": changed, "rolled_back_to": target},
        f"rollback to version {target}: " + (f"version {version}" if changed else "no change"),
    )
    return 0


def _repair_dry_run(ctx: Context, target: int, preview: Any, command: str) -> int:
    """The dry run of a rollback that would repair the latest definition (trinityfs/
    lifecycle/defrepair.py): what it would take from the target; the tree's changes
    are not listed (the latest tree is read with the definition the checks refuse)."""
    latest = preview.latest_version
    taken = ", ".join(preview.fields_from_target) or "nothing else"
    ctx.out.emit(
        {
            "dry_run": True,
            "from": latest,
            "to": target,
            "changes": None,
            "repairs_definition": {
                "problem": preview.problem,
                "fields_from_target": preview.fields_from_target,
                "exports_dropped": preview.exports_dropped,
            },
            "command": command,
        },
        [
            f"rollback to version {target} would repair the latest definition (version "
            f"{latest}: {preview.problem}): version {latest + 1} would have version "
            f"{target}'s tree, the exports recorded in version {latest}"
            + "".join(f" but {n!r} (dropped: {why})" for n, why in preview.exports_dropped.items())
            + f", and from version {target}: {taken}",
            "  (the changes to the tree are not listed: the latest tree is read with its "
            "definition)",
            "rollback: dry run, nothing changed; to roll back only if no commit lands before it:",
            f"  {command}",
        ],
    )
    return 0
