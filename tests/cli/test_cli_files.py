"""ls, find, info, cat, put, rm, mkdir, rmdir, mv, cp, props through the command."""

from __future__ import annotations

import json


def test_ls(sample):
    assert sample("ls").out == "sales/  namespace\n"
    lines = sample("ls", "/sales").out.splitlines()
    assert lines == ["big_orders  view", "orders      table"]
    long = sample("ls", "-l", "/sales").out.splitlines()
    assert long[0].split() == ["NAME", "KIND", "SIZE", "VERSION"]
    size = len(sample("cat", "/sales/orders").out.encode())
    assert long[2].split() == ["orders", "table", str(size), "3"]
    assert "latest/" in sample("ls", "/v").out
    assert sample("ls", "trinity://v/1").out == "sales/  namespace\n"


def test_find_info_cat(sample):
    assert sample("find").out.splitlines() == ["/sales/big_orders", "/sales/orders"]
    assert sample("find", "-d", "/").out.splitlines()[0] == "/sales"
    info = sample("info", "/sales").out
    assert "property owner  analytics" in info and "namespace" in info
    text = sample("cat", "/sales/orders").out
    assert json.loads(text)["definition"]["table_format"] == "ICEBERG"
    both = sample("--json", "cat", "/sales/orders", "/sales/big_orders").json()
    assert both["/sales/big_orders"]["kind"] == "view"
    assert sample("cat", "/sales").status == 1


def test_put(sample, tmp_path):
    source = tmp_path / "items"
    source.write_bytes(b'{"kind": "table", "definition": {"table_type": "EXTERNAL"}}')
    result = sample("put", str(source), "/sales/")  # into a namespace: keeps the name
    assert result.status == 0 and result.out == "put /sales/items: version 4\n"
    assert sample("put", str(source), "/sales/items").out == "put /sales/items: no change\n"
    assert sample("put", "--create", str(source), "/sales/items").status == 1
    assert sample("put", "-", "/sales", stdin=b"").status == 1  # stdin needs a file name
    assert sample("put", "-", "/sales/empty", stdin=b"").status == 0


def test_rm_mkdir_rmdir(sample):
    assert sample("mkdir", "/a", "/b").out == "mkdir: version 4\n"  # one commit
    assert sample("mkdir", "/a").status == 1
    assert sample("mkdir", "-p", "/a").out == "mkdir: no change\n"
    assert sample("rmdir", "/a", "/b").out == "rmdir: version 5\n"
    assert sample("rm", "/sales").status == 1
    assert sample("rm", "/sales/orders", "/sales/big_orders").out == "rm: version 6\n"
    assert sample("rm", "-r", "/sales").out == "rm: version 7\n"
    assert sample("ls").out == ""


def test_mv_cp(sample):
    assert sample("mv", "/sales/orders", "/sales/orders2").out == "mv: version 4\n"
    assert sample("cp", "/v/3/sales/orders", "/sales/orders").out == "cp: version 5\n"
    assert sample("cp", "/sales", "/copy").status == 1  # a namespace needs -r
    assert sample("cp", "-r", "/sales", "/copy").out == "cp: version 6\n"
    assert sample("find", "/copy").out.split() == [
        "/copy/big_orders",
        "/copy/orders",
        "/copy/orders2",
    ]
    assert sample("mv", "/copy", "/copy2").out == "mv: version 7\n"
    assert sample("mv", "/copy2", "/copy2").out == "mv: no change\n"


def test_props(sample):
    assert sample("props", "/sales").out == "owner  analytics\n"
    assert sample("props", "/sales", "tier=gold", "--unset", "owner").out == "props: version 4\n"
    assert sample("--json", "props", "/sales").json() == {"tier": "gold"}
    assert sample("props", "/sales", "tier=gold").out == "props: no change\n"
    assert sample("props", "/sales/orders").status == 1


def test_files_through_the_real_command(sample, run_process):
    result = run_process("cat", "/sales/orders")
    assert result.status == 0 and json.loads(result.out)["kind"] == "table"
    result = run_process("rm", "/sales/orders")
    assert result.status == 0 and result.out == "rm: version 4\n"
    assert run_process("ls", "/sales").out == "big_orders  view\n"
