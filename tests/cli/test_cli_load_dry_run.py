"""`trinityfs load --dry-run`: every check of a load (lines, names, definitions, names
created twice, conflicts with what was committed meanwhile), and nothing written: no
version, no definition file, no lease."""

from __future__ import annotations

import pytest
from test_cli_load import BAD_LINES, _files, _line, _tables, _write

from trinityfs.catalog import Lakehouse
from trinityfs.catalog.bulk import FILE_BATCH
from trinityfs.errors import CommitConflictError, TransactionClosedError


def test_a_good_input_is_checked_and_nothing_is_written(sample, root, tmp_path):
    before = _files(root)
    lines = [_line("namespace", "new"), *_tables("new", FILE_BATCH + 5), *_tables("sales", 2)]
    path = _write(tmp_path, lines)
    result = sample("load", "--dry-run", path)
    assert result.status == 0, result.err
    assert result.out == (
        f"load --dry-run: 1 namespaces, {FILE_BATCH + 7} tables, 0 views checked, "
        "nothing was written (a load now would make version 4)\n"
    )
    assert Lakehouse.open(root).latest_version() == 3
    assert _files(root) == before  # no definition file (past a whole batch), no lease
    assert (
        sample("load", path).out
        == f"load: version 4 (1 namespaces, {FILE_BATCH + 7} tables, 0 views)\n"
    )


def test_json_output_says_it_was_a_dry_run(sample):
    stdin = "\n".join(_tables("sales", 3)).encode()
    result = sample("--json", "load", "-n", "-", stdin=stdin)
    assert result.status == 0, result.err
    assert result.json() == {
        "dry_run": True,
        "would_be_version": 4,
        "changed": False,
        "namespaces": 0,
        "tables": 3,
        "views": 0,
    }


def test_an_empty_input(sample, root):
    result = sample("load", "--dry-run", "-", stdin=b"\n")
    assert (result.status, result.out) == (
        0,
        "load --dry-run: 0 namespaces, 0 tables, 0 views checked, nothing was written\n",
    )


@pytest.mark.parametrize(("bad", "expected"), BAD_LINES, ids=[b[:40] for b, _ in BAD_LINES])
def test_a_bad_line_is_named_as_in_a_real_load(sample, root, tmp_path, bad, expected):
    before = _files(root)
    path = _write(tmp_path, [*_tables("sales", 2), bad])
    result = sample("load", "--dry-run", path)
    assert result.status == 1 and result.out == ""
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert result.err.startswith(f"trinityfs: {path} line 3: "), result.err
    assert expected in result.err and "(dry run: nothing was written)" in result.err
    assert _files(root) == before


def test_names_created_twice_are_found(sample, root, tmp_path):
    path = _write(tmp_path, [*_tables("sales", 2), *_tables("sales", 1)])
    result = sample("load", "--dry-run", path)
    assert result.status == 1 and "created twice" in result.err, result.err
    lines = [_line("namespace", "new"), _line("table", "new", "x"), _line("view", "new", "x")]
    result = sample("load", "--dry-run", _write(tmp_path, lines))
    assert result.status == 1 and "as both a table and a view" in result.err, result.err


def test_a_conflict_with_a_commit_made_meanwhile_is_found(sample, root):
    """A dry run checks against the latest version when it ends, as a commit would."""
    lake = Lakehouse.open(root)
    load = lake.bulk_load(dry_run=True)
    load.create_table("sales", "late")
    Lakehouse.open(root).create_table("sales", "late")  # another writer takes the name
    with pytest.raises(CommitConflictError, match="late"):
        load.commit()
    assert lake.latest_version() == 4 and load.committed_version is None


def test_the_api_dry_run_takes_no_lease_and_refuses_a_second_commit(sample, root):
    lake = Lakehouse.open(root)
    before = _files(root)
    with lake.bulk_load(dry_run=True) as load:
        assert load.lease_id is None
        load.create_namespace("n", {"a": "b"})
        load.create_view("n", "v", {"properties": {"sql": "select 1"}})
    assert load.committed_version is None and load.closed
    assert _files(root) == before
    with pytest.raises(TransactionClosedError, match="already committed or aborted"):
        load.create_table("n", "t")
    after = Lakehouse.open(root)
    assert after.latest_version() == 3 and "n" not in after.list_namespaces()
