"""Regression: `trinityfs serve` keeps running while its lakehouse is removed, or
replaced by another one at the same location.

Found 2026-11-24: every request after that was a 500 (InternalServerError for
LakehouseNotFoundError) until the server was restarted. The server is stateless between
requests, so it now serves whatever lakehouse is at its location: the next request
waits until no request runs and opens the location again; a read that found out is run
again there, a write is answered 503 ServiceUnavailableException (the spec's error
JSON); with no lakehouse there at all every request is a 503 until one is created.
Tested with PyIceberg's RestCatalog against a real `trinityfs serve` process. The
tests marked "fails on 612a50e" fail on the code before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from pyiceberg.exceptions import ServiceUnavailableError  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from trinityfs.catalog import Lakehouse  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


def _lake(root: Path, namespaces: list[str]) -> Lakehouse:
    lake = Lakehouse.create(str(root))
    for ns in namespaces:
        lake.create_namespace(ns)
    return lake


def _remove(root: Path) -> None:
    shutil.rmtree(root)


def _empty_in_place(root: Path) -> None:
    for entry in root.iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


@pytest.fixture
def serve(tmp_path) -> Iterator[tuple[Path, str]]:
    """`trinityfs --root ROOT serve --port 0` in a process of its own."""
    root = tmp_path / "lake"
    _lake(root, ["old_a", "old_b"])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.Popen(
        [sys.executable, "-m", "trinityfs.cli", "--root", str(root), "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("listening on "), (line, proc.stderr.read() if proc.poll() else "")
        yield root, line.split()[-1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def _names(catalog: RestCatalog) -> list[str]:
    return sorted(ns[0] for ns in catalog.list_namespaces())


def test_the_server_serves_the_lakehouse_created_again_at_its_location(serve):
    """A new directory: the next read finds out (a lakehouse replaced inside the same
    directory is found by the next write, the next test, or by a read once the trust
    window passed: docs/LIFECYCLE.md). Fails on 612a50e (500 InternalServerError)."""
    root, url = serve
    catalog = RestCatalog("lake", uri=url)
    assert _names(catalog) == ["old_a", "old_b"]
    catalog.create_table(("old_a", "t"), SCHEMA)
    _remove(root)
    _lake(root, ["new_a"])

    assert _names(catalog) == ["new_a"]  # the read that found out, run again
    catalog.create_table(("new_a", "t"), SCHEMA)
    assert catalog.list_tables("new_a") == [("new_a", "t")]
    assert Lakehouse.open(str(root)).list_tables("new_a") == ["t"]


def test_a_write_that_finds_the_lakehouse_replaced_is_a_503_and_the_next_one_lands(serve):
    """Fails on 612a50e."""
    root, url = serve
    catalog = RestCatalog("lake", uri=url)
    catalog.load_namespace_properties("old_a")  # the server's handle is warm
    _empty_in_place(root)
    _lake(root, ["new_a", "new_b"])
    with pytest.raises(ServiceUnavailableError, match=r"replaced while open|another lakehouse"):
        catalog.create_namespace("from_the_client")
    assert "from_the_client" not in Lakehouse.open(str(root)).list_namespaces()
    catalog.create_namespace("from_the_client")
    assert Lakehouse.open(str(root)).list_namespaces() == ["from_the_client", "new_a", "new_b"]


def test_no_lakehouse_at_the_location_is_a_503_until_one_is_created(serve):
    """Fails on 612a50e (500)."""
    root, url = serve
    with httpx.Client(base_url=url, timeout=30) as http:
        assert http.get("/v1/latest/namespaces").status_code == 200
        _remove(root)
        for _ in range(2):
            response = http.get("/v1/latest/namespaces")
            assert response.status_code == 503
            error = response.json()["error"]
            assert error["type"] == "ServiceUnavailableException"
            assert error["code"] == 503
            assert str(root) in error["message"]
        response = http.post("/v1/latest/namespaces", json={"namespace": ["x"]})
        assert response.status_code == 503
        assert not root.exists()  # a write never makes the lakehouse again
        _lake(root, ["back"])
        response = http.get("/v1/latest/namespaces")
        assert response.status_code == 200
        assert response.json()["namespaces"] == [["back"]]
