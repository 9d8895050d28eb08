"""Fixtures of the REST catalog tests: a lakehouse and `python -m trinityfs.rest` serving
it on 127.0.0.1 (a free port) in a real process, and clients of it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import frontend_fixtures
import pytest
from frontend_fixtures import REPO, stopping

if any(importlib.util.find_spec(m) is None for m in ("pyiceberg", "starlette", "uvicorn")):
    collect_ignore_glob = ["test_*.py"]  # needs the `rest` extra


lake_root = frontend_fixtures.lake_root  # the shared fixture: a new, empty lakehouse


class Server:
    """A `python -m trinityfs.rest` process; `url` is its base URL."""

    def __init__(self, root: str, *args: str, cli: bool = False):
        self.root = root
        environ = dict(os.environ)
        environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO), environ.get("PYTHONPATH", "")) if p
        )
        if cli:  # `trinityfs --root ROOT serve`
            cmd = [sys.executable, "-m", "trinityfs.cli", "--root", root, "serve"]
        else:  # `python -m trinityfs.rest --root ROOT`
            cmd = [sys.executable, "-m", "trinityfs.rest", "--root", root]
        cmd += ["--port", "0", *args]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("listening on "):
            self.proc.kill()
            _, err = self.proc.communicate(timeout=10)
            raise RuntimeError(f"the server did not start: {line!r} {err[-2000:]}")
        self.url = line.split()[-1]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


@pytest.fixture
def start_server() -> Iterator[Callable[..., Server]]:
    """Start `python -m trinityfs.rest` (cli=True: `trinityfs serve`) processes."""
    yield from stopping(Server)


@pytest.fixture
def start_thread() -> Iterator[Callable[..., Any]]:
    """Start servers in threads of the test process (keywords: ServerConfig fields)."""
    from trinityfs.rest.server import ServerConfig, ServerThread

    def start(root: str, **options: Any) -> Any:
        return ServerThread(ServerConfig(root=root, port=0, **options)).start()

    yield from stopping(start)


@pytest.fixture
def server(lake_root: str, start_thread: Callable[..., Any]) -> Any:
    """The REST server of `lake_root`, in a thread (tests of the process use start_server)."""
    return start_thread(lake_root)


@pytest.fixture
def rest_catalog(server: Any) -> Callable[..., Any]:
    """A PyIceberg RestCatalog of the server (extra properties as keywords)."""
    from pyiceberg.catalog.rest import RestCatalog

    yield from stopping(lambda **props: RestCatalog("lake", uri=server.url, **props), "close")


@pytest.fixture
def http(server: Any) -> Iterator[Any]:
    import httpx

    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def wait_until(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)
