"""log, diff, show, rollback."""

from __future__ import annotations


def test_log(sample):
    lines = sample("log").out.splitlines()
    assert lines[0].split() == ["VERSION", "TIME", "CHANGES"]
    assert lines[1].startswith("3 ") and lines[1].endswith("created view sales.big_orders")
    assert lines[-1].startswith("0 ") and lines[-1].endswith("(new lakehouse)")
    assert len(sample("log", "-n", "2").out.splitlines()) == 3
    oldest_first = sample("log", "--reverse").out.splitlines()
    assert oldest_first[1].startswith("0 ")
    entries = sample("--json", "log").json()
    assert entries[0]["version"] == 3
    assert entries[0]["changes"] == [
        {"action": "created", "kind": "view", "name": "big_orders", "namespace": "sales"}
    ]


def test_log_summarizes_big_commits(sample, tmp_path):
    sample("put", "-", "/sales/third", stdin=b"")
    sample("cp", "-r", "/sales", "/copy")
    sample("rm", "-r", "--yes", "/copy")
    last = sample("log", "-n", "1").out.splitlines()[1]
    assert "dropped 1 namespace, 2 tables, 1 view" in last


def test_diff(sample):
    out = sample("diff", "1", "latest").out.splitlines()
    assert sorted(out) == ["+  created  table  sales.orders", "+  created  view   sales.big_orders"]
    assert sample("diff", "2", "2").out == "no changes between version 2 and 2\n"
    data = sample("--json", "diff", "3", "1").json()
    assert data["from"] == 3 and {c["action"] for c in data["changes"]} == {"dropped"}


def test_show_at_a_version(sample):
    assert sample("--json", "show", "--version", "1").json()["version"] == 1


def test_rollback(sample):
    result = sample("rollback", "1")
    assert result.out == "rollback to version 1: version 4\n"
    assert sample("ls", "/sales").out == ""
    assert "rollback from version 3" in sample("log", "-n", "1").out
    assert sample("cat", "/v/3/sales/orders").status == 0


def test_history_through_the_real_command(sample, run_process):
    result = run_process("--json", "log", "-n", "1")
    assert result.status == 0 and result.json()[0]["version"] == 3
    assert run_process("rollback", "2").out == "rollback to version 2: version 4\n"
