"""Running the REST catalog server: options, the catalog it serves, uvicorn.

    trinityfs --root ./lake serve [--host 127.0.0.1] [--port 8181] [--tokens FILE] ...
    python -m trinityfs.rest --root ./lake [same options]

The server binds its socket itself (so `--port 0` picks a free port, printed on the first
line of output as `listening on http://HOST:PORT`), then runs uvicorn on it.
"""

from __future__ import annotations

import argparse
import json
import logging
import socket
import sys
from typing import Any

from trinityfs.rest.app import create_app
from trinityfs.rest.locations import LocationPolicy
from trinityfs.rest.options import ServerConfig, add_arguments, config_from_args
from trinityfs.rest.security import Tokens, check_bind, load_tokens
from trinityfs.rest.service import RestCatalogService

CATALOG_NAME = "trinity"
# FileIO settings a client may be told (never secrets unless --vend-credentials)
PUBLIC_CONFIG = ("s3.endpoint", "s3.region", "s3.path-style-access", "client.region")
SECRET_CONFIG = ("s3.access-key-id", "s3.secret-access-key", "s3.session-token")


def build_service(cfg: ServerConfig) -> RestCatalogService:
    """The catalog service of a configuration (opens the lakehouse; no network)."""
    from trinityfs.catalog import read_config
    from trinityfs.errors import InvalidArgumentError
    from trinityfs.iceberg import TrinityCatalog
    from trinityfs.iceberg.io import STORAGE_OPTIONS

    pin = read_config(root=cfg.root)  # the catalog's one reader: is a version pinned?
    if pin.version is not None:
        raise InvalidArgumentError(
            f"{pin.sources['version']} pins catalog version {pin.version!r}, but the REST "
            "server serves every version itself (warehouse 'v/<selector>', read-only): "
            "unset TRINITYFS_VERSION (or the fsspec config's version) to serve"
        )
    props: dict[str, str] = {"root": cfg.root}
    if cfg.storage_options:
        props[STORAGE_OPTIONS] = json.dumps(cfg.storage_options)
    if cfg.warehouse:
        props["warehouse"] = cfg.warehouse
    if cfg.verify:
        props["verify"] = cfg.verify
    # the catalog confines every file it touches too (trinityfs.catalog.locations)
    if cfg.allow_any_location or cfg.allowed_locations:
        props["allowed-locations"] = (
            "*" if cfg.allow_any_location else ",".join(cfg.allowed_locations)
        )
    catalog = TrinityCatalog(CATALOG_NAME, **props)
    allowed = [str(catalog.properties["warehouse"]), *cfg.allowed_locations]
    policy = LocationPolicy(allowed, allow_any=cfg.allow_any_location)
    keys = PUBLIC_CONFIG + (SECRET_CONFIG if cfg.vend_credentials else ())
    table_config = {k: str(catalog.properties[k]) for k in keys if catalog.properties.get(k)}
    return RestCatalogService(
        catalog, policy, cache_entries=cfg.cache_entries, table_config=table_config
    )


def build_app(cfg: ServerConfig) -> Any:
    tokens = load_tokens(cfg.tokens_file) if cfg.tokens_file else Tokens()
    check_bind(cfg.host, tokens, cfg.allow_unauthenticated)
    return create_app(build_service(cfg), tokens, cfg.max_body_bytes)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY on accepted connections only then;
    # without it Nagle and delayed ACKs add ~40 ms to every response
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(cfg: ServerConfig, *, out: Any = None) -> None:
    """Serve until interrupted (SIGINT/SIGTERM stop it gracefully)."""
    import uvicorn

    out = out or sys.stdout
    app = build_app(cfg)
    sock = bind(cfg.host, cfg.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"listening on http://{shown}:{port}", file=out, flush=True)
    config = uvicorn.Config(
        app,
        log_level=cfg.log_level,
        access_log=cfg.log_level in ("debug", "info"),
        lifespan="off",
        timeout_keep_alive=30,
        server_header=False,
    )
    uvicorn.Server(config).run(sockets=[sock])


class ServerThread:
    """A server in a background thread of this process (tests, benchmarks, embedding).

    with ServerThread(ServerConfig(root="./lake", port=0)) as server:
        RestCatalog("lake", uri=server.url)
    """

    def __init__(self, cfg: ServerConfig):
        import threading

        import uvicorn

        app = build_app(cfg)
        self.socket = bind(cfg.host, cfg.port)
        host, port = self.socket.getsockname()[:2]
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
        config = uvicorn.Config(app, log_level=cfg.log_level, access_log=False, lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def start(self, timeout: float = 30) -> ServerThread:
        import time

        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the REST server thread did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.socket.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m trinityfs.rest`: one line on stderr and status 1 for a bad setup."""
    parser = argparse.ArgumentParser(
        prog="python -m trinityfs.rest",
        description="An Iceberg REST catalog server over a TrinityLake lakehouse.",
    )
    add_arguments(parser, with_root=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        from trinityfs.catalog.config import storage_options_from_pairs

        pairs = []
        for pair in args.storage_option:
            key, sep, value = pair.partition("=")
            if not sep or not key:
                raise ValueError(f"--storage-option expects KEY=VALUE, got {pair!r}")
            pairs.append((key, value))
        options = storage_options_from_pairs(pairs)
        serve(config_from_args(args, args.root, options))
    except KeyboardInterrupt:
        return 0
    except (ValueError, OSError, LookupError) as exc:
        print(f"trinityfs serve: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # TrinityError and the like: one line, no traceback
        print(f"trinityfs serve: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


__all__ = ["ServerConfig", "ServerThread", "build_app", "build_service", "main", "serve"]
