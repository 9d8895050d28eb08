"""Issue 11 item 7: `trinityfs cp /ns/t /data/out.json` (and `./x.json`) wrote into the
catalog (namespaces `data` and `.`) instead of to disk; there was no get/put/sync."""

from __future__ import annotations

import json

from regression_cli import run, sample


def test_cp_to_a_local_looking_path_writes_nothing(tmp_path, monkeypatch):
    root = str(tmp_path / "lake")
    sample(root)
    monkeypatch.chdir(tmp_path)
    before = run(root, "--json", "show").json()["latest_version"]
    for dest in ("/data/out.json", "./x.json", "../x.json"):
        result = run(root, "cp", "/sales/orders", dest)
        assert result.status in (1, 2) and result.err.count("\n") == 1, result
        assert "get" in result.err  # says what to use instead
    assert run(root, "--json", "show").json()["latest_version"] == before
    assert run(root, "ls", "/").out == "sales/  namespace\n"
    assert not (tmp_path / "x.json").exists()


def test_get_put_move_definitions_between_catalog_and_files(tmp_path):
    root = str(tmp_path / "lake")
    sample(root)
    out = tmp_path / "data" / "out.json"
    assert run(root, "get", "/sales/orders", str(out)).status == 0
    assert json.loads(out.read_text())["definition"]["table_format"] == "ICEBERG"
    assert run(root, "put", str(out), "/sales/copy").status == 0
    assert json.loads(run(root, "cat", "/sales/copy").out)["kind"] == "table"


def test_sync_both_ways_with_dry_run_and_delete(tmp_path):
    root = str(tmp_path / "lake")
    sample(root)
    folder = tmp_path / "defs"
    result = run(root, "sync", "trinity://sales", str(folder), "--dry-run")
    assert result.status == 0 and not folder.exists() and "would change" in result.out
    assert run(root, "sync", "trinity://sales", str(folder)).status == 0
    assert sorted(p.name for p in folder.iterdir()) == ["big_orders.json", "orders.json"]
    # unchanged files: no commit
    result = run(root, "--json", "sync", str(folder), "trinity://sales")
    assert result.json()["version"] is None and result.json()["unchanged"] == 2
    (folder / "big_orders.json").unlink()
    (folder / "new.json").write_text('{"kind": "table"}')
    dry = run(root, "--json", "sync", str(folder), "trinity://sales", "--delete", "--dry-run")
    assert dry.json()["created"] == ["new"] and dry.json()["deleted"] == ["big_orders"]
    assert run(root, "ls", "/sales").out.split() == ["big_orders", "view", "orders", "table"]
    result = run(root, "--json", "sync", str(folder), "trinity://sales", "--delete")
    assert result.json()["version"] is not None
    assert run(root, "ls", "/sales").out.split() == ["new", "table", "orders", "table"]
    # one side must be the catalog, written trinity://
    assert run(root, "sync", str(folder), str(tmp_path / "other")).status == 2
