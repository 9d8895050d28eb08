"""Lifecycle commands of `trinityfs`: exports, expiration, fsck, distributed transactions."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .context import Context, UsageError, duration, duration_text, resolve_version
from .output import human_bytes, millis_to_text, table

if TYPE_CHECKING:
    from collections.abc import Callable

    from trinityfs.fs.spec import TrinityFileSystem

    from .app import AddCommand


def register(add: AddCommand) -> None:
    p = add("export", cmd_export, "export a version as a named, read-only snapshot")
    p.add_argument("name")
    p.add_argument("--version", dest="at", help="version, 'latest', export or ISO time")
    p.add_argument("--mode", choices=["minimal", "partial", "full"], default="minimal")
    p.add_argument("--depth", type=int, help="levels copied by a partial export")

    add("exports", cmd_exports, "list the exported snapshots")

    p = add("drop-export", cmd_drop_export, "remove an exported snapshot")
    p.add_argument("name")

    p = add("expire", cmd_expire, "expire old versions and delete unreachable files")
    p.add_argument(
        "--max-age",
        "--max-age-millis",
        dest="max_age",
        type=duration,
        metavar="DURATION",
        help="keep versions younger than this (7d, 12h, 30m; a bare number is millis)",
    )
    p.add_argument("--min-versions", type=int, help="always keep this many latest versions")
    p.add_argument(
        "--grace",
        "--grace-millis",
        dest="grace",
        type=duration,
        metavar="DURATION",
        help="never delete files younger than this (default: the transaction lifetime)",
    )
    p.add_argument(
        "--future-stamps",
        choices=["keep", "store-time"],
        default="keep",
        help="versions stamped in the future (a writer's clock ran ahead): keep them until "
        "this clock passes their stamps (keep, the default), or age them by when the store "
        "wrote their roots (store-time)",
    )
    p.add_argument("-n", "--dry-run", action="store_true", help="report, delete nothing")

    add("fsck", cmd_fsck, "check every kept version, export and transaction")

    p = add("txn", cmd_txn_help, "distributed transactions (begin, then commit anywhere)")
    txn = p.add_subparsers(dest="txn_command", metavar="ACTION", parser_class=type(p))

    def action(name: str, func: Any, help: str) -> argparse.ArgumentParser:
        parser = txn.add_parser(name, help=help, description=help)
        parser.set_defaults(func=func)
        return parser

    q = action("begin", cmd_txn_begin, "begin one; prints its id")
    q.add_argument(
        "--ttl", "--ttl-millis", dest="ttl", type=duration, metavar="DURATION", help="e.g. 1h"
    )
    q.add_argument("--isolation", choices=["SNAPSHOT", "SERIALIZABLE"])
    q = action("show", cmd_txn_show, "its id, base version, expiry")
    q.add_argument("id")
    q = action("put", cmd_txn_put, "write a definition into it (from a file or -)")
    q.add_argument("id")
    q.add_argument("source")
    q.add_argument("dest")
    q = action("rm", cmd_txn_rm, "remove tables and views in it")
    q.add_argument("id")
    q.add_argument("paths", nargs="+", metavar="path")
    q.add_argument("-r", "--recursive", action="store_true")
    q = action("mkdir", cmd_txn_mkdir, "create namespaces in it")
    q.add_argument("id")
    q.add_argument("paths", nargs="+", metavar="namespace")
    q = action("mv", cmd_txn_mv, "rename in it")
    q.add_argument("id")
    q.add_argument("source")
    q.add_argument("dest")
    q = action("commit", cmd_txn_commit, "commit it (one new version)")
    q.add_argument("id")
    q = action("abort", cmd_txn_abort, "abort it for every process")
    q.add_argument("id")


def _rows(data: dict[str, Any]) -> list[list[Any]]:
    """Scalar fields as rows (lists as their length)."""
    return [
        [key, len(value) if isinstance(value, list) else value]
        for key, value in sorted(data.items())
        if value is not None and not isinstance(value, dict)
    ]


# -- exports ------------------------------------------------------------------------------


def cmd_export(ctx: Context, args: argparse.Namespace) -> int:
    lake = ctx.lake
    version = resolve_version(lake, args.at) if args.at is not None else None
    with ctx.out.progress(f"files exported to {args.name}") as bar:
        info = lake.export(
            args.name,
            version,
            mode=args.mode,
            depth=args.depth,
            progress=lambda p: bar.update(p.files_done, p.files_total),
        )
    ctx.fs.invalidate_cache()
    data = info.to_dict()
    ctx.out.emit(data, table(_rows(data)))
    return 0


def cmd_exports(ctx: Context, args: argparse.Namespace) -> int:
    data = [e.to_dict() for e in ctx.lake.exports()]
    if ctx.out.json:
        ctx.out.emit(data)
        return 0
    rows = [
        [
            d.get("name"),
            d.get("version"),
            millis_to_text(d.get("created_at_millis")),
            "full" if d.get("standalone") else "minimal/partial",
            d.get("problem") or "",
        ]
        for d in data
    ]
    ctx.out.emit(
        None,
        table(rows, ["NAME", "VERSION", "CREATED", "KIND", "PROBLEM"]) if rows else ["no exports"],
    )
    return 0


def cmd_drop_export(ctx: Context, args: argparse.Namespace) -> int:
    dropped = ctx.lake.drop_export(args.name)
    ctx.fs.invalidate_cache()
    data = dropped.to_dict()
    ctx.out.emit(data, table(_rows(data)))
    return 0


# -- expiration, fsck ---------------------------------------------------------------------


KEPT_BY = {
    "retention": "the retention policy (--max-age, --min-versions)",
    "grace": "the grace period",
    "transaction": "a live distributed transaction",
    "marker": "the grace period or the retention policy (nothing older is readable)",
}


def expire_lines(data: dict[str, Any]) -> list[str]:
    """A few lines saying what an expiration did, and which rule kept what."""
    dry = data["dry_run"]
    policy = data["policy"]
    would = "would " if dry else ""
    expired = data["expired_versions"]
    lines = []
    if expired:
        lines.append(
            f"versions {data['previous_oldest_version']}..{data['oldest_version'] - 1} "
            f"{'would expire' if dry else 'expired'}; "
            f"readable now: {data['oldest_version']}..{data['latest_version']}"
        )
    else:
        lines.append(
            f"no version expired; readable: {data['oldest_version']}..{data['latest_version']} "
            f"(kept by {KEPT_BY.get(data['kept_by'], data['kept_by'])})"
        )
    lines.append(
        f"files: {would}remove {data['files_removed']} "
        f"({human_bytes(data['bytes_removed'])}); "
        f"{data['spared_young']} younger than the grace kept"
    )
    grace = policy["grace_millis"]
    margin = policy.get("margin_millis")
    rule = (
        f"policy: max age {duration_text(policy['max_age_millis'])}, "
        f"min versions {policy['min_versions']}, grace {duration_text(grace)}"
    )
    if margin:
        rule += f" (+ {duration_text(margin)} clock margin)"
    if policy.get("future_stamps") == "store-time":
        rule += "; versions stamped in the future aged by the store's time"
    lines.append(rule)
    floor = policy.get("grace_floor_millis")
    if floor and grace == floor:
        lines.append(
            f"grace floor: {duration_text(floor)} (the longest a commit may take); "
            "a smaller --grace is raised to it"
        )
    if grace:
        lines.append(
            f"grace: files written in the last {duration_text(grace)} are never deleted "
            "(a transaction may still use them); --grace changes it"
        )
    if data.get("live_transactions"):
        lines.append(f"live transactions: {len(data['live_transactions'])}")
    if data.get("missing"):
        lines.append(f"missing files: {len(data['missing'])} (run 'trinityfs fsck')")
    if dry:
        lines.append("expire: dry run, nothing changed")
    return lines


def cmd_expire(ctx: Context, args: argparse.Namespace) -> int:
    report = ctx.lake.expire(
        args.max_age,
        args.min_versions,
        args.dry_run,
        grace_millis=args.grace,
        future_stamps=args.future_stamps,
    )
    ctx.fs.invalidate_cache()
    data = report.to_dict(files=False)
    policy = getattr(report.policy, "margin_millis", None)
    if policy is not None:
        data["policy"]["margin_millis"] = policy
    ctx.out.emit(data, expire_lines(data))
    return 0


def _versions_text(versions: tuple[int, ...]) -> str:
    """`version 7`, `versions 3, 4, 9` or `versions 3..40` for a run of versions."""
    ordered = sorted(set(versions))
    if len(ordered) == 1:
        return f"version {ordered[0]}"
    if len(ordered) > 3 and ordered[-1] - ordered[0] + 1 == len(ordered):
        return f"versions {ordered[0]}..{ordered[-1]}"
    return "versions " + ", ".join(str(v) for v in ordered)


def cmd_fsck(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.catalog import Lakehouse

    report = Lakehouse.fsck_at(ctx.root, storage_options=ctx.storage_options)
    if report.latest_version is None:  # no root at all: the one line every command gives
        from trinityfs.errors import LakehouseNotFoundError

        raise LakehouseNotFoundError(report.errors[0].message)
    data = report.to_dict()
    lines = [
        f"checked versions {report.oldest_version}..{report.latest_version} "
        f"({report.versions_checked} versions, {report.nodes_checked} nodes, "
        f"{report.definitions_checked} definitions), {len(report.exports_checked)} exports, "
        f"{len(report.transactions)} transactions",
    ]
    bad_versions: dict[int, int] = {}
    for level, problems in (("error", report.errors), ("warning", report.warnings)):
        for problem in problems:
            versions = problem.versions or (
                (problem.version,) if problem.version is not None else ()
            )
            where = _versions_text(versions) + ": " if versions else ""
            if level == "error":
                for version in versions:
                    bad_versions[version] = bad_versions.get(version, 0) + 1
            text = " ".join(t for t in (problem.kind, problem.location, problem.message) if t)
            lines.append(f"{level}: {where}{text}")
    if report.orphans:
        lines.append(
            f"orphans: {len(report.orphans)} files ({human_bytes(report.orphan_bytes)}) "
            "no kept version uses ('trinityfs expire' removes them)"
        )
    if report.unknown_files:
        names = ", ".join(f.location for f in report.unknown_files[:3])
        more = f" and {len(report.unknown_files) - 3} more" if len(report.unknown_files) > 3 else ""
        lines.append(
            f"not lakehouse files (left alone): {len(report.unknown_files)} ({names}{more})"
        )
    if bad_versions:
        listed = ", ".join(str(v) for v in sorted(bad_versions))
        lines.append(f"fsck: errors in version{'s' if len(bad_versions) > 1 else ''} {listed}")
    else:
        lines.append("fsck: ok" if report.ok else "fsck: errors found")
    ctx.out.emit(data, lines)
    return int(report.exit_status)


# -- distributed transactions -------------------------------------------------------------


def cmd_txn_help(ctx: Context, args: argparse.Namespace) -> int:
    raise UsageError("txn needs an action: begin, show, put, rm, mkdir, mv, commit, abort")


def _txn_data(txn: Any) -> dict[str, Any]:
    return {
        "id": txn.id,
        "base_version": txn.version,
        "began_at": millis_to_text(txn.began_at_millis),
        "expire_at": millis_to_text(txn.expire_at_millis),
    }


def cmd_txn_begin(ctx: Context, args: argparse.Namespace) -> int:
    txn = ctx.lake.begin_distributed(ttl_millis=args.ttl, isolation=args.isolation)
    ctx.out.emit(_txn_data(txn), txn.id)
    return 0


def cmd_txn_show(ctx: Context, args: argparse.Namespace) -> int:
    data = _txn_data(ctx.lake.load_distributed(args.id))
    ctx.out.emit(data, table([[k, v] for k, v in data.items()]))
    return 0


def _in_txn(ctx: Context, txn_id: str, change: Callable[[TrinityFileSystem], object]) -> int:
    txn = ctx.lake.load_distributed(txn_id)
    with ctx.fs.within(txn):
        change(ctx.fs)
    txn.save()
    ctx.out.emit({"id": txn.id, "saved": True}, f"saved in transaction {txn.id}")
    return 0


def cmd_txn_put(ctx: Context, args: argparse.Namespace) -> int:
    from .transfer import read_definition_file

    data = read_definition_file(args.source)
    return _in_txn(ctx, args.id, lambda fs: fs.write_definition(args.dest, data))


def cmd_txn_rm(ctx: Context, args: argparse.Namespace) -> int:
    return _in_txn(ctx, args.id, lambda fs: fs.rm(list(args.paths), recursive=args.recursive))


def cmd_txn_mkdir(ctx: Context, args: argparse.Namespace) -> int:
    return _in_txn(ctx, args.id, lambda fs: [fs.mkdir(p) for p in args.paths])


def cmd_txn_mv(ctx: Context, args: argparse.Namespace) -> int:
    return _in_txn(ctx, args.id, lambda fs: fs.mv(args.source, args.dest))


def cmd_txn_commit(ctx: Context, args: argparse.Namespace) -> int:
    txn = ctx.lake.load_distributed(args.id)
    base = txn.version
    version = txn.commit()
    ctx.fs.invalidate_cache()
    changed = version != base
    ctx.out.emit(
        {"id": args.id, "version": version if changed else None, "changed": changed},
        f"txn {args.id}: version {version}" if changed else f"txn {args.id}: no change",
    )
    return 0


def cmd_txn_abort(ctx: Context, args: argparse.Namespace) -> int:
    ctx.lake.load_distributed(args.id).abort()
    ctx.out.emit({"id": args.id, "aborted": True}, f"txn {args.id}: aborted")
    return 0
