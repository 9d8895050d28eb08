"""trinityfs-demo: the tour runs end to end, reads as a product (no Python reprs), and ends
with what to try next (issue 11 item 10). Folder safety: tests/regression/test_demo_*."""

from __future__ import annotations

import importlib.util
import re

import pytest

from trinityfs import demo

REPR = re.compile(r"<[a-zA-Z_.]+ object at|\b[A-Z][a-zA-Z]+\(|\['|\bdict_items\b")


def _run(tmp_path, capsys) -> str:
    assert demo.main([str(tmp_path / "demo-lake")]) == 0
    out = capsys.readouterr().out
    assert not REPR.search(out.replace("pa.table(", "").replace("DataFrame(", "")), out
    return out


def test_the_tour_shows_the_product(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(demo, "_fuse_available", lambda: "not in this test (see the fuse one)")
    out = _run(tmp_path, capsys)
    for shown in (
        "$ trinityfs init",
        "$ trinityfs sync ./",
        "$ trinityfs ls /v",
        "$ trinityfs ls /v/2/sales",
        "$ trinityfs diff 2 latest",
        "$ trinityfs rollback --dry-run 2",
        "rollback: dry run, nothing changed",
        "(skipped: not in this test",
        "What to try next",
        "trinityfs --help",
    ):
        assert shown in out, shown
    if importlib.util.find_spec("pandas"):
        assert 'pd.read_json("trinity://sales/orders"' in out and "('ICEBERG'" in out
    if importlib.util.find_spec("pyiceberg"):
        assert "created table sales.payments" in out and "410.0" in out
    assert out.rstrip().splitlines()[-1].startswith("Run `trinityfs-demo")
    # it runs again over its own folder
    assert demo.main([str(tmp_path / "demo-lake")]) == 0


def test_missing_optional_parts_are_one_sentence(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_extras(name, *args, **kwargs):
        if name.split(".")[0] in ("pandas", "pyiceberg"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_extras)
    monkeypatch.setattr(demo, "_fuse_available", lambda: "libfuse is not installed")
    out = _run(tmp_path, capsys)
    assert "(skipped: pandas is not installed" in out
    assert "(skipped: PyIceberg is not installed" in out
    assert "(skipped: libfuse is not installed)" in out


@pytest.mark.fuse
def test_the_tour_mounts_when_libfuse_is_there(tmp_path, capsys):
    if demo._fuse_available() is not None:
        pytest.skip(demo._fuse_available())
    out = _run(tmp_path, capsys)
    assert "$ ls /mnt/lake/v/2/sales" in out and "big_orders  customers  items  orders" in out
