"""`trinityfs load`: JSON Lines of creates committed as one version (a bulk load), all or
nothing: a bad line, a conflict or Ctrl-C leaves the catalog and its files as they were."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from frontend_fixtures import cli_process

from trinityfs.catalog import Lakehouse
from trinityfs.catalog.bulk import FILE_BATCH

ODD_NAMES = ("a/b", "t*", "q?", "[x]", "x.y", "...", "ünï")


def _line(kind: str, namespace: str, name: str | None = None, **extra) -> str:
    item = {"kind": kind, "namespace": namespace, **extra}
    if name is not None:
        item["name"] = name
    return json.dumps(item)


def _tables(namespace: str, count: int, start: int = 0) -> list[str]:
    return [
        _line("table", namespace, f"t{i:06d}", definition={"table_format": "ICEBERG"})
        for i in range(start, start + count)
    ]


def _files(root: str) -> set[str]:
    """Every file of the lakehouse (paths relative to the root)."""
    return {
        str(Path(d, f).relative_to(root))
        for d, _dirs, names in os.walk(root)
        for f in names
        if f != "_latest_hint.txt"  # rewritten in place, never a new object
    }


def _write(tmp_path: Path, lines: list[str], name: str = "defs.jsonl") -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_load_creates_everything_as_one_version(run, root, tmp_path):
    assert run("init").status == 0
    lines = [
        _line("namespace", "sales", properties={"owner": "analytics"}),
        _line("table", "sales", "orders", definition={"table_format": "ICEBERG"}),
        "",  # blank lines are skipped
        _line("view", "sales", "big_orders", definition={"properties": {"sql": "select 1"}}),
        _line("table", "sales", "empty"),  # no definition: an empty one
        *(_line("table", "sales", name) for name in ODD_NAMES),
    ]
    result = run("load", _write(tmp_path, lines))
    assert result.status == 0, result.err
    assert result.out == f"load: version 1 (1 namespaces, {2 + len(ODD_NAMES)} tables, 1 views)\n"
    lake = Lakehouse.open(root).at(1)
    assert lake.namespace_properties("sales") == {"owner": "analytics"}
    assert lake.describe_table("sales", "orders").table_format == "ICEBERG"
    assert lake.describe_view("sales", "big_orders").properties["sql"] == "select 1"
    names = {name for name, _kind in lake.iter_object_names("sales")}
    assert names == {"orders", "big_orders", "empty", *ODD_NAMES}  # names are never paths
    assert (
        run("log", "-n", "1")
        .out.splitlines()[1]
        .endswith(f"created 1 namespace, {2 + len(ODD_NAMES)} tables, 1 view")
    )


def test_load_into_existing_namespace_from_stdin_with_json(sample):
    stdin = "\n".join(_tables("sales", 3)).encode()
    result = sample("--json", "load", "-", stdin=stdin)
    assert result.status == 0, result.err
    assert result.json() == {
        "version": 4,
        "changed": True,
        "namespaces": 0,
        "tables": 3,
        "views": 0,
    }
    assert sample("find", "/sales").out.split() == [
        "/sales/big_orders",
        "/sales/orders",
        "/sales/t000000",
        "/sales/t000001",
        "/sales/t000002",
    ]


def test_empty_input_commits_nothing(sample, root):
    before = _files(root)
    result = sample("load", "-", stdin=b"\n  \n")
    assert (result.status, result.out) == (0, "load: no change (no objects in the input)\n")
    assert Lakehouse.open(root).latest_version() == 3
    assert _files(root) == before  # the load's lease is gone too


BAD_LINES = [
    ("[1]", "expected a JSON object, not an array"),
    ("{nope", "not valid JSON (column 2"),
    ('{"kind": "table"}', 'a table needs "namespace"'),
    ('{"namespace": "sales", "name": "x"}', '"kind" must be "namespace", "table" or "view"'),
    ('{"kind": "schema", "namespace": "sales"}', "('schema')"),
    ('{"kind": "table", "namespace": "sales", "name": 3}', '"name" must be a string'),
    ('{"kind": "table", "namespace": "sales", "nmae": "x"}', "unknown key(s) 'nmae'"),
    ('{"kind": "table", "namespace": "sales", "name": "x", "definition": []}', "an array"),
    ('{"kind": "table", "namespace": "sales", "name": "x", "definition": {"bogus": 1}}', "bogus"),
    ('{"kind": "namespace", "namespace": "n", "properties": {"a": 1}}', "property 'a'"),
    ('{"kind": "namespace", "namespace": "sales"}', "namespace 'sales' already exists"),
    ('{"kind": "table", "namespace": "sales", "name": "orders"}', "sales.orders already exists"),
    ('{"kind": "view", "namespace": "sales", "name": "orders"}', "already exists"),
    ('{"kind": "table", "namespace": "nope", "name": "x"}', "namespace 'nope' does not exist"),
    ('{"kind": "table", "namespace": "sales", "name": ".."}', "invalid table name '..'"),
    ('{"kind": "table", "namespace": "sales", "name": ""}', "invalid table name"),
    ('{"kind": "namespace", "namespace": "a\\u0000b"}', "invalid namespace name"),
    ("[" * 100_000 + "]" * 100_000, "line 3:"),
    ('{"kind": "table", "namespace": "sales", "name": "x", "name": "y"}', "'name' appears twice"),
    (
        '{"kind": "table", "namespace": "sales", "name": "x", '
        '"definition": {"properties": {"a": "1", "a": "2"}}}',
        "key 'a' appears twice",
    ),
]


@pytest.mark.parametrize(("bad", "expected"), BAD_LINES, ids=[b[:40] for b, _ in BAD_LINES])
def test_a_bad_line_names_its_number_and_loads_nothing(sample, root, tmp_path, bad, expected):
    before = _files(root)
    lines = [*_tables("sales", 2), bad, *_tables("sales", 2, start=2)]
    path = _write(tmp_path, lines)
    result = sample("load", path)
    assert result.status == 1 and result.out == ""
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert result.err.startswith(f"trinityfs: {path} line 3: "), result.err
    assert expected in result.err and "(nothing was loaded)" in result.err, result.err
    assert Lakehouse.open(root).latest_version() == 3
    assert _files(root) == before


def test_a_bad_line_after_many_written_files_leaves_no_stray_file(sample, root, tmp_path):
    """Definition files are written in batches as the load goes: a bad line after several
    batches must delete them all (and the load's lease)."""
    before = _files(root)
    count = 2 * FILE_BATCH + 10
    lines = [*_tables("sales", count), "not json", *_tables("sales", 5, start=count)]
    result = sample("load", "-", stdin="\n".join(lines).encode())
    assert result.status == 1
    assert result.err.startswith(f"trinityfs: stdin line {count + 1}: not valid JSON")
    assert Lakehouse.open(root).latest_version() == 3
    assert _files(root) == before


def test_invalid_utf8_and_a_too_long_line(sample, root, monkeypatch):
    before = _files(root)
    result = sample("load", "-", stdin=_tables("sales", 1)[0].encode() + b"\n\xff\xfe\n")
    assert result.status == 1 and result.err == (
        "trinityfs: stdin line 2: not UTF-8 text (byte 1) (nothing was loaded)\n"
    )
    monkeypatch.setattr("trinityfs.cli.load.MAX_LINE_BYTES", 200)
    result = sample("load", "-", stdin=b"\n" + b" " * 300 + b"{}\n")
    assert result.status == 1
    assert result.err.startswith("trinityfs: stdin line 2 is longer than"), result.err
    assert _files(root) == before


def test_names_created_twice_in_one_load_load_nothing(sample, root, tmp_path):
    before = _files(root)
    lines = [
        _line("namespace", "new"),
        _line("table", "new", "x"),
        _line("view", "new", "x"),  # a table and a view may not share a name
    ]
    result = sample("load", _write(tmp_path, lines))
    assert result.status == 1
    assert "new.x is created as both a table and a view" in result.err, result.err
    assert result.err.endswith("(nothing was loaded)\n")
    result = sample("load", _write(tmp_path, [*_tables("sales", 2), *_tables("sales", 1)]))
    assert result.status == 1 and "created twice" in result.err, result.err
    assert Lakehouse.open(root).latest_version() == 3
    assert _files(root) == before


def test_a_table_before_its_namespace_is_refused(run, root, tmp_path):
    assert run("init").status == 0
    lines = [_line("table", "new", "x"), _line("namespace", "new")]
    result = run("load", _write(tmp_path, lines))
    assert result.status == 1 and "line 1: namespace 'new' does not exist" in result.err


def test_missing_file_and_folder_are_one_line(sample, tmp_path):
    for source in (str(tmp_path / "nope.jsonl"), str(tmp_path)):
        result = sample("load", source)
        assert result.status == 1 and result.err.count("\n") == 1, result.err
        assert source in result.err


def test_ctrl_c_during_the_commit_waits_for_it(sample, root, monkeypatch):
    """A Ctrl-C right after the root of the new version was created (before the load
    knew) used to abort the load, deleting the definition files of a committed version."""
    import trinityfs.catalog.bulk as bulk

    real = bulk.create_root

    def create_then_interrupt(*args, **kwargs):
        created = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return created

    monkeypatch.setattr(bulk, "create_root", create_then_interrupt)
    result = sample("load", "-", stdin="\n".join(_tables("sales", 3)).encode())
    assert result.status == 0, result.err
    assert result.out == "load: version 4 (0 namespaces, 3 tables, 0 views)\n"
    assert "Ctrl-C came while version 4 was being committed" in result.err
    lake = Lakehouse.open(root)
    assert lake.at(4).describe_table("sales", "t000002").table_format == "ICEBERG"  # file kept
    assert not lake.fsck().errors


class _SlowPipe:
    """Standard input from a producer that writes a line every `pause` seconds."""

    def __init__(self, lines: list[str], pause: float):
        self.lines = [(line + "\n").encode() for line in lines]
        self.pause = pause

    def readline(self, limit: int = -1) -> bytes:
        if not self.lines:
            return b""
        time.sleep(self.pause)
        return self.lines.pop(0)


def _load_slowly(root: str, lines: list[str], pause: float, lease: str) -> tuple[int, str]:
    """`trinityfs load -` in this process, fed one line per `pause` seconds."""
    from trinityfs.cli.app import main

    err = io.StringIO()
    status = main(
        ["--root", root, "load", "--lease", lease, "-"],
        stdin=_SlowPipe(lines, pause=pause),
        stderr=err,
        stdout=io.StringIO(),
    )
    return status, err.getvalue()


def test_a_slow_producer_keeps_the_load_alive(sample, root):
    """The lease was renewed only when a batch of files was written: a producer slower
    than the lease (fewer than a batch of lines per lease) made the commit refuse."""
    status, err = _load_slowly(root, _tables("sales", 8), pause=0.25, lease="1s")  # 2 s in all
    assert status == 0, err
    assert Lakehouse.open(root).latest_version() == 4
    status, err = _load_slowly(root, _tables("sales", 2, start=100), pause=1.5, lease="1s")
    assert status == 1 and "line 1: bulk load lease" in err, err  # a pause past the lease
    assert "lapsed" in err and "--lease" in err
    assert Lakehouse.open(root).latest_version() == 4


def test_lease_option(sample):
    from trinityfs.catalog.bulk import DEFAULT_LEASE_MILLIS
    from trinityfs.cli.load import DEFAULT_LEASE_MILLIS as CLI_DEFAULT

    assert CLI_DEFAULT == DEFAULT_LEASE_MILLIS
    result = sample("load", "--lease", "0", "-", stdin=b"")
    assert result.status == 2 and "--lease must be positive" in result.err


def _sigint_as_at_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # not SIG_IGN inherited from a background job


def test_ctrl_c_while_staging_aborts_cleanly(sample, root):
    """The real command reading stdin: interrupted after it wrote a batch of definition
    files, it prints one line, exits 130 and leaves the lakehouse's files as they were."""
    before = _files(root)
    proc = cli_process(
        ["load", "-"],
        root,
        {"TRINITYFS_STORAGE_OPTIONS": '{"fsync": false}'},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_sigint_as_at_a_terminal,
    )
    assert proc.stdin is not None
    proc.stdin.write(("\n".join(_tables("sales", FILE_BATCH + 10)) + "\n").encode())
    proc.stdin.flush()  # and keep stdin open: the command waits for more
    deadline = time.monotonic() + 120
    while not any("-table-sales-t" in f for f in _files(root) - before):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (130, b"", b"trinityfs: interrupted\n")
    assert Lakehouse.open(root).latest_version() == 3
    assert _files(root) == before
