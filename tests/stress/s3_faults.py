"""A moto S3 server that fails requests the ways S3 does, on the wire.

`FaultyS3` is a WSGI layer in front of the serialized moto app (tests/s3_server.py).
Rules pick requests (method, object key pattern, conditional or not) and fail the
chosen ones before the request reaches moto or after moto stored it:

- ``500-before`` / ``500-after``: 500 InternalError (botocore retries these);
- ``409-before`` / ``409-after``: 409 ConditionalRequestConflict, what S3 answers a
  conditional write that raced another one (botocore does not retry these);
- ``403-before``: 403 AccessDenied (a definite failure: nothing was stored);
- ``timeout-before`` / ``timeout-after``: the reply comes after the client's read
  timeout (the client gives up and retries; "after": the object was stored);
- ``slow``: the reply comes late but within the timeout;
- ``truncate``: the reply's body is cut in half, with the full Content-Length and
  ``Connection: close`` (a connection dropped mid-body).

The layer also records every request (method, key, conditional, status, action) while
`recording` is set, so a test can see how trinityfs reacted (a read-back GET after an
ambiguous PUT, a botocore retry, a replay).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from moto.server import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from s3_server import SerializedApp, SerializedMotoServer
from werkzeug.serving import make_server

BEFORE = ("500-before", "409-before", "403-before", "timeout-before")
AFTER = ("500-after", "409-after", "timeout-after")
ACTIONS = (*BEFORE, *AFTER, "slow", "truncate")

READ_TIMEOUT = 2.0  # client side
TIMEOUT_SECONDS = 5.0  # a "timeout" reply comes this late (well past it, even under load)
SLOW_SECONDS = 0.2


@dataclass
class Rule:
    """Fault the requests `at`..`at+times-1` (1-based) among those that match."""

    action: str
    method: str | None = "PUT"
    key: str = ""  # regex searched in the object key
    conditional: bool | None = None  # If-None-Match present (None: either)
    at: int = 1
    times: int = 1
    seen: int = 0

    def matches(self, method: str, key: str, conditional: bool) -> bool:
        return (
            (self.method is None or method == self.method)
            and (self.conditional is None or conditional == self.conditional)
            and re.search(self.key, key) is not None
        )


@dataclass(frozen=True)
class Request:
    method: str
    key: str
    conditional: bool
    status: int
    action: str | None


_ERROR_XML = (
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
    "<Message>injected by the trinityfs stress suite</Message>"
    "<RequestId>injected</RequestId></Error>"
)
_CODES = {500: "InternalError", 409: "ConditionalRequestConflict", 403: "AccessDenied"}


class FaultyS3:
    """WSGI middleware: fault, delay, truncate and record requests to the app."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.rules: list[Rule] = []
        self.log: list[Request] = []
        self.recording = False
        self.injected = 0
        self._lock = threading.Lock()

    # -- control -------------------------------------------------------------------------

    def reset(self) -> None:
        with self._lock:
            self.rules = []
            self.log = []
            self.recording = False

    @contextmanager
    def faults(self, *rules: Rule, record: bool = True) -> Iterator[list[Request]]:
        """Apply `rules` (and record requests) inside the block."""
        with self._lock:
            self.rules = list(rules)
            self.log = []
            self.recording = record
        try:
            yield self.log
        finally:
            self.reset()

    def _decide(self, method: str, key: str, conditional: bool) -> str | None:
        with self._lock:
            for rule in self.rules:
                if rule.matches(method, key, conditional):
                    rule.seen += 1
                    if rule.at <= rule.seen < rule.at + rule.times:
                        self.injected += 1
                        return rule.action
            return None

    def _record(self, method: str, key: str, conditional: bool, status: int, action: Any):
        if self.recording:
            with self._lock:
                self.log.append(Request(method, key, conditional, status, action))

    # -- WSGI ----------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        _bucket, _, key = environ.get("PATH_INFO", "").lstrip("/").partition("/")
        conditional = "HTTP_IF_NONE_MATCH" in environ
        action = self._decide(method, key, conditional)
        delay = 0.0
        if action is None or action == "slow":
            if action == "slow":
                time.sleep(SLOW_SECONDS)
            status, headers, body = self._forward(environ)
        elif action in BEFORE:
            _drain(environ)
            if action == "timeout-before":
                delay = TIMEOUT_SECONDS  # the client gives up: any answer will do
            status, headers, body = _error(int(action[:3]) if action[0] != "t" else 500)
        else:
            status, headers, body = self._forward(environ)
            if action == "500-after":
                status, headers, body = _error(500)
            elif action == "409-after":
                status, headers, body = _error(409)
            elif action == "timeout-after":
                delay = TIMEOUT_SECONDS
            elif action == "truncate":
                headers = [(k, v) for k, v in headers if k.lower() != "connection"]
                headers.append(("Connection", "close"))
                body = body[: len(body) // 2]
        # recorded on arrival order, before a delayed reply lets the client's retry in
        self._record(method, key, conditional, int(status.split()[0]), action)
        if delay:
            time.sleep(delay)
        start_response(status, headers)
        return [body]

    def _forward(self, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
        captured: dict[str, Any] = {}

        def start_response(status: str, headers: list, exc_info: Any = None) -> Any:
            captured["status"], captured["headers"] = status, list(headers)
            return lambda data: None

        body = b"".join(self.app(environ, start_response))
        return captured["status"], captured["headers"], body


def _drain(environ: dict[str, Any]) -> None:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if length:
        environ["wsgi.input"].read(length)


def _error(status: int) -> tuple[str, list[tuple[str, str]], bytes]:
    body = _ERROR_XML.format(code=_CODES[status]).encode()
    reason = {500: "Internal Server Error", 409: "Conflict", 403: "Forbidden"}[status]
    headers = [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))]
    return f"{status} {reason}", headers, body


class FaultyMotoServer(SerializedMotoServer):
    """The serialized moto server with `FaultyS3` in front (outside its lock)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.faults = FaultyS3(SerializedApp(DomainDispatcherApplication(create_backend_app)))

    def _server_entry(self) -> None:
        self._server = make_server(
            self._ip_address, self._port, self.faults, True, request_handler=MotoRequestHandler
        )
        self._server_ready_event.set()
        self._server.serve_forever()


@contextmanager
def faulty_moto_s3(bucket: str) -> Iterator[tuple[dict[str, Any], FaultyS3]]:
    """Run the server on a free port, create `bucket`; yield storage options and faults.

    The client gives up on a reply after READ_TIMEOUT seconds and makes 2 attempts.
    """
    import boto3

    with pytest.MonkeyPatch.context() as env:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }.items():
            env.setenv(name, value)
        server = FaultyMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            endpoint = f"http://{host}:{port}"
            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(
                Bucket=bucket
            )
            yield (
                {
                    "key": "testing",
                    "secret": "testing",
                    "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
                    "config_kwargs": {
                        "read_timeout": READ_TIMEOUT,
                        "connect_timeout": READ_TIMEOUT,
                        "retries": {"max_attempts": 2, "mode": "standard"},
                    },
                },
                server.faults,
            )
        finally:
            server.stop()
