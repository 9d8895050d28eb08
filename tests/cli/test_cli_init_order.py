"""`trinityfs init --order N`: a larger tree order for lakehouses expected to hold
hundreds of thousands of tables (docs/FORMAT-CHOICES.md), and a one-line error for an
order the format cannot hold."""

from __future__ import annotations

import pytest


def test_init_order_256_sizes_node_files_for_the_key_table(run):
    result = run("init", "--order", "256")
    assert result.status == 0, result.err
    definition = run("--json", "show").json()["definition"]
    assert definition["order"] == 256
    # 256 rows * (namespace max + table max + 204) + 64 KiB of buffer (new-lakehouse rule)
    assert int(definition["node_file_max_size_bytes"]) == 256 * 404 + 65536
    assert run("mkdir", "/sales").status == 0
    assert run("ls", "/").out == "sales/  namespace\n"


@pytest.mark.parametrize("order", ["2", "0", "-5", "many", "4097", "100000", "4294967296"])
def test_init_refuses_a_bad_order_in_one_line(run, root, order):
    result = run("init", "--order", order)
    assert result.status != 0
    assert result.err.count("\n") == 1 and "order" in result.err
    assert "Value out of range" not in result.err  # protobuf's words, not ours
    assert "Traceback" not in result.err
    assert run("show").status != 0  # nothing was created
