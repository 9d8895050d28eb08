"""`trinityfs load FILE`: create many namespaces, tables and views as ONE version.

The input is JSON Lines (one JSON object per line, blank lines skipped), from FILE or
`-` (standard input):

    {"kind": "namespace", "namespace": "sales", "properties": {"owner": "analytics"}}
    {"kind": "table", "namespace": "sales", "name": "orders", "definition": {...}}
    {"kind": "view", "namespace": "sales", "name": "big_orders", "definition": {...}}

A table or view line is what `trinityfs cat` prints for it ({"kind", "definition"}) plus
where it goes; `definition` may be left out for an empty one. A namespace must come
before the tables and views created in it. Names are separate JSON strings, never a
path: a name holding `/ * ? [ ] .` means exactly that name, and no escaping rule exists to
get wrong. JSON Lines streams (a line is read, checked and staged, then dropped), so an
input of millions of objects needs no more memory than the bulk load itself
(`Lakehouse.bulk_load`, trinityfs/catalog/bulk.py), and scripts and `jq` write it.

All or nothing: the first bad line stops the load with one line naming it (`defs.jsonl
line 7: table sales.orders already exists`), the definition files written so far are
deleted and no version is made; Ctrl-C does the same. A Ctrl-C that comes while the
version is being committed waits for the commit, which is then reported (stopping half
way could leave a version whose files were deleted).

`--dry-run` reads and checks the whole input the same way, against the latest version
when it ends, and writes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from trinityfs import jsontext
from trinityfs.errors import JsonTooDeepError

from .context import Context, UsageError, duration, duration_text
from .errors import InputError

if TYPE_CHECKING:
    from trinityfs.catalog.bulk import BulkLoad

    from .app import AddCommand

DEFAULT_LEASE_MILLIS = 10 * 60 * 1000  # catalog/bulk.py's default
MAX_LINE_BYTES = 64 * 2**20  # a definition is at most 8 MiB encoded (format/definitions.py)
TABLE_KEYS = frozenset({"kind", "namespace", "name", "definition"})
NAMESPACE_KEYS = frozenset({"kind", "namespace", "properties"})
EPILOG = """\
input (JSON Lines, one object per line; a namespace before what is created in it):
  {"kind": "namespace", "namespace": "sales", "properties": {"owner": "analytics"}}
  {"kind": "table", "namespace": "sales", "name": "orders", "definition": {"table_type": "MANAGED"}}
  {"kind": "view", "namespace": "sales", "name": "big_orders", "definition": {}}
examples:
  trinityfs load --dry-run defs.jsonl
  trinityfs load defs.jsonl
  generate-defs | trinityfs load -
"""


def register(add: AddCommand) -> None:
    p = add(
        "load",
        cmd_load,
        "create many namespaces, tables and views from JSON Lines as one version",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("source", metavar="FILE", help="a JSON Lines file, or - for stdin")
    p.add_argument(
        "-n",
        "--dry-run",
        action="store_true",
        help="check every line (and conflicts with the latest version); write nothing",
    )
    p.add_argument(
        "--lease",
        type=duration,
        default=DEFAULT_LEASE_MILLIS,
        metavar="DURATION",
        help="how long the load may go without a sign of life (it renews its lease as it "
        "reads; expiration keeps its files meanwhile); raise it for an input that pauses "
        f"longer (default {duration_text(DEFAULT_LEASE_MILLIS)})",
    )


@dataclass
class Counts:
    """Objects staged, by kind."""

    namespaces: int = 0
    tables: int = 0
    views: int = 0

    def add(self, kind: str) -> None:
        attr = kind + "s"
        setattr(self, attr, getattr(self, attr) + 1)

    @property
    def total(self) -> int:
        return self.namespaces + self.tables + self.views

    def text(self) -> str:
        return f"{self.namespaces} namespaces, {self.tables} tables, {self.views} views"


# -- reading ------------------------------------------------------------------------------


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for each line, refusing one longer than MAX_LINE_BYTES."""
    number = 0
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise InputError(
                f"line {number} is longer than {MAX_LINE_BYTES // 2**20} MiB "
                "(one JSON object per line is expected)"
            )
        yield number, line


def _json_type(value: Any) -> str:
    from trinityfs.catalog.content import _json_type as json_type

    return "an object" if isinstance(value, dict) else json_type(value)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key given twice is refused (json would keep the last silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise InputError(f"key {twice!r} appears twice in one object")
    return out


def parse_line(line: bytes) -> dict[str, Any] | None:
    """One input line as a checked create (None for a blank line); InputError says why."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start + 1})") from None
    if not text.strip():
        return None
    try:
        item = jsontext.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON (column {exc.colno}: {exc.msg})") from None
    except JsonTooDeepError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(item, dict):
        raise InputError(f"expected a JSON object, not {_json_type(item)}")
    kind = item.get("kind")
    if kind not in ("namespace", "table", "view"):
        got = "missing" if "kind" not in item else f"{kind!r}"
        raise InputError(f'"kind" must be "namespace", "table" or "view" ({got})')
    allowed = NAMESPACE_KEYS if kind == "namespace" else TABLE_KEYS
    unknown = sorted(set(item) - allowed)
    if unknown:
        raise InputError(
            f"unknown key(s) {', '.join(map(repr, unknown))} for a {kind} "
            f"(keys: {', '.join(sorted(allowed))})"
        )
    for key in ("namespace",) if kind == "namespace" else ("namespace", "name"):
        if key not in item:
            raise InputError(f'a {kind} needs "{key}"')
        if not isinstance(item[key], str):
            raise InputError(f'"{key}" must be a string, not {_json_type(item[key])}')
    if kind == "namespace":
        properties = item.get("properties")
        if properties is None:
            properties = {}
        if not isinstance(properties, dict):
            raise InputError(f'"properties" must be an object, not {_json_type(properties)}')
        for key, value in properties.items():
            if not isinstance(value, str):
                raise InputError(f"property {key!r} must be a string, not {_json_type(value)}")
        item["properties"] = properties
    else:
        definition = item.get("definition")
        if definition is not None and not isinstance(definition, dict):
            raise InputError(f'"definition" must be an object, not {_json_type(definition)}')
    return item


def stage(load: BulkLoad, item: dict[str, Any]) -> None:
    if item["kind"] == "namespace":
        load.create_namespace(item["namespace"], item["properties"])
    else:
        load.create(item["kind"], item["namespace"], item["name"], item.get("definition"))


# -- Ctrl-C -------------------------------------------------------------------------------


class _Deferred:
    interrupted = False


@contextlib.contextmanager
def sigint_deferred() -> Iterator[_Deferred]:
    """Hold Ctrl-C off while the block runs (a commit, a clean-up); `.interrupted` says
    whether one came. Only the main thread can install handlers: elsewhere, nothing."""
    state = _Deferred()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def note(signum: int, frame: Any) -> None:
        state.interrupted = True

    previous = signal.signal(signal.SIGINT, note)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)


# -- the command --------------------------------------------------------------------------


def _open_source(ctx: Context, source: str) -> tuple[IO[bytes], str, bool]:
    """(binary stream, its name for messages, whether to close it)."""
    if source == "-":
        stdin = ctx.stdin
        return getattr(stdin, "buffer", stdin), "stdin", False
    return open(source, "rb"), source, True  # closed by the caller


def cmd_load(ctx: Context, args: argparse.Namespace) -> int:
    from trinityfs.errors import AmbiguousWriteError, TransactionClosedError, TrinityError

    stream, where, close = _open_source(ctx, args.source)
    try:
        if args.lease <= 0:
            raise UsageError(f"--lease must be positive, got {duration_text(args.lease)}")
        lake = ctx.lake
        load = lake.bulk_load(lease_millis=args.lease, dry_run=args.dry_run)
        counts = Counts()
        nothing = " (dry run: nothing was written)" if args.dry_run else " (nothing was loaded)"
        try:
            with ctx.out.progress("objects staged") as bar:
                for number, line in _lines_named(stream, where):
                    try:
                        item = parse_line(line)
                        if item is None:
                            continue
                        stage(load, item)
                    except (InputError, TrinityError, ValueError) as exc:
                        raise InputError(f"{where} line {number}: {_text(exc)}{nothing}") from None
                    counts.add(item["kind"])
                    bar.update()
            with sigint_deferred() as held:
                try:
                    version: int | None = _commit(load)  # with nothing staged: no version
                except (AmbiguousWriteError, TransactionClosedError):
                    raise
                except TrinityError as exc:  # a conflict, a name created twice: aborted
                    raise InputError(f"{where}: {_text(exc)}{nothing}") from None
            if not counts.total:
                version = None
        except BaseException:
            with sigint_deferred():  # a second Ctrl-C must not leave half the files
                load.abort()
            raise
        counted = {
            "namespaces": counts.namespaces,
            "tables": counts.tables,
            "views": counts.views,
        }
        if args.dry_run:
            if held.interrupted:
                raise KeyboardInterrupt  # nothing was written: stop as Ctrl-C asked
            would = "" if version is None else f" (a load now would make version {version})"
            ctx.out.emit(
                {"dry_run": True, "would_be_version": version, "changed": False, **counted},
                f"load --dry-run: {counts.text()} checked, nothing was written{would}",
            )
            return 0
        ctx.out.emit(
            {"version": version, "changed": version is not None, **counted},
            f"load: version {version} ({counts.text()})"
            if version is not None
            else "load: no change (no objects in the input)",
        )
        if held.interrupted:
            ctx.out.err.write(
                f"trinityfs: Ctrl-C came while version {version} was being committed; "
                "the load was committed\n"
            )
        return 0
    finally:
        if close:
            stream.close()


def _commit(load: BulkLoad) -> int:
    """Commit; a write whose outcome was unknown is settled by committing once more."""
    from trinityfs.errors import AmbiguousWriteError

    try:
        return load.commit()
    except AmbiguousWriteError:
        return load.commit()  # it landed (its version), or it did not (committed now)


def _lines_named(stream: IO[bytes], where: str) -> Iterator[tuple[int, bytes]]:
    try:
        yield from _lines(stream)
    except InputError as exc:
        raise InputError(f"{where} {exc}") from None


def _text(exc: BaseException) -> str:
    from .errors import message

    return message(exc)


__all__ = ["MAX_LINE_BYTES", "cmd_load", "parse_line", "register", "sigint_deferred"]
