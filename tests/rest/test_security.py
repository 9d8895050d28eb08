"""Bearer tokens (read-only, read-write) and the bind-address rule, with PyIceberg's
RestCatalog and the real `trinityfs serve` / `python -m trinityfs.rest` commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import ForbiddenError, UnauthorizedError

from trinityfs.rest.security import SecurityConfigError, check_bind, load_tokens
from trinityfs.rest.server import ServerConfig, build_app

pytestmark = pytest.mark.rest

RW = "rw-0123456789abcdef0123"
RO = "ro-fedcba9876543210fedc"


@pytest.fixture
def tokens_file(tmp_path: Path) -> str:
    path = tmp_path / "tokens"
    path.write_text(f"# who may do what\nread-write {RW}\nread-only  {RO}  # dashboards\n")
    path.chmod(0o600)
    return str(path)


def test_tokens_decide_who_may_read_and_write(start_thread, lake_root, tokens_file):
    import httpx

    server = start_thread(lake_root, tokens_file=tokens_file)
    writer = RestCatalog("lake", uri=server.url, token=RW)
    writer.create_namespace("sales")
    table = writer.create_table("sales.orders", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [1, 2]}))

    reader = RestCatalog("lake", uri=server.url, token=RO)
    assert reader.load_table("sales.orders").scan().to_arrow().num_rows == 2
    with pytest.raises(ForbiddenError, match="read-only"):
        reader.create_namespace("hr")
    with pytest.raises(ForbiddenError, match="read-only"):
        reader.load_table("sales.orders").append(pa.table({"id": [3]}))
    with pytest.raises(UnauthorizedError):
        RestCatalog("lake", uri=server.url)
    with pytest.raises(UnauthorizedError):
        RestCatalog("lake", uri=server.url, token="not-a-token-of-this-server")
    with httpx.Client(base_url=server.url) as client:
        r = client.get("/v1/latest/namespaces", headers={"Authorization": f"Basic {RW}"})
        assert r.status_code == 401
        assert r.json()["error"]["type"] == "NotAuthorizedException"
        r = client.get("/v1/latest/namespaces", headers={"Authorization": f"Bearer {RO}"})
        assert r.status_code == 200 and r.json()["namespaces"] == [["sales"]]
    assert writer.load_table("sales.orders").scan().to_arrow().num_rows == 2


def test_tokens_file_is_checked(tmp_path: Path):
    path = tmp_path / "tokens"
    for text, needle in [
        ("", "no tokens"),
        ("admin abcdefghijklmnopqrstu\n", "line 1"),
        ("read-write short\n", "at least"),
        ("read-write a b c\n", "line 1"),
    ]:
        path.write_text(text)
        path.chmod(0o600)
        with pytest.raises(SecurityConfigError, match=needle):
            load_tokens(path)
    path.write_text(f"read-write {RW}\n")
    path.chmod(0o644)
    with pytest.raises(SecurityConfigError, match="chmod 600"):
        load_tokens(path)
    with pytest.raises(SecurityConfigError, match="cannot read"):
        load_tokens(tmp_path / "missing")


def test_non_loopback_needs_tokens_or_an_explicit_flag(lake_root, tokens_file):
    from trinityfs.rest.security import Tokens

    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        check_bind(host, Tokens(), False)
    for host in ("0.0.0.0", "::", "10.1.2.3", "example.com"):
        with pytest.raises(SecurityConfigError, match="--tokens"):
            check_bind(host, Tokens(), False)
        check_bind(host, Tokens(), True)
        check_bind(host, load_tokens(tokens_file), False)
    with pytest.raises(SecurityConfigError):
        build_app(ServerConfig(root=lake_root, host="0.0.0.0"))


@pytest.mark.parametrize(
    "command",
    [["trinityfs.cli", "--root", "{root}", "serve"], ["trinityfs.rest", "--root", "{root}"]],
)
def test_commands_refuse_an_open_address_in_one_line(lake_root, command):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    cmd = [sys.executable, "-m", *(c.format(root=lake_root) for c in command), "--host", "0.0.0.0"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to listen on 0.0.0.0" in lines[0], proc.stderr
