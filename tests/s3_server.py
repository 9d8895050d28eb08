"""A real S3 API server (moto) on 127.0.0.1 for the tests marked ``s3``."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from moto.server import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    ThreadedMotoServer,
    create_backend_app,
)
from werkzeug.serving import make_server


class SerializedApp:
    """Handles one request at a time.

    moto checks If-None-Match and then stores the object as two steps, so racing
    requests in its threads could both pass the check. Real S3 is atomic here; the lock
    makes moto atomic too, so the race tests test trinityfs, not moto.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self.lock:
            result = self.app(environ, start_response)
            try:
                return list(result)  # produce the whole response under the lock
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()


class SerializedMotoServer(ThreadedMotoServer):
    """moto's threaded server with its WSGI app wrapped in `SerializedApp`."""

    def _server_entry(self) -> None:
        app = SerializedApp(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(
            self._ip_address, self._port, app, True, request_handler=MotoRequestHandler
        )
        self._server_ready_event.set()
        self._server.serve_forever()


@contextmanager
def moto_s3(bucket: str) -> Iterator[dict[str, Any]]:
    """Run the server on a free port, create `bucket`, yield s3fs storage options."""
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
        server = SerializedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            endpoint = f"http://{host}:{port}"
            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(
                Bucket=bucket
            )
            yield {
                "key": "testing",
                "secret": "testing",
                "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
            }
        finally:
            server.stop()
