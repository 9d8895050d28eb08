"""The REST server's options: a plain configuration and its command-line flags.

Imports nothing heavy, so `trinityfs --help` stays fast and works without the `rest` extra.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8181
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024


@dataclass
class ServerConfig:
    root: str
    storage_options: dict[str, Any] | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    tokens_file: str | None = None
    allow_unauthenticated: bool = False
    warehouse: str | None = None
    allowed_locations: list[str] = field(default_factory=list)
    allow_any_location: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    cache_entries: int = 4096
    vend_credentials: bool = False
    log_level: str = "warning"
    verify: str | None = None  # the global --verify (else $TRINITYFS_VERIFY)


def add_arguments(parser: argparse.ArgumentParser, *, with_root: bool) -> None:
    """The server's options (`with_root` for `python -m trinityfs.rest`)."""
    if with_root:
        parser.add_argument("--root", required=True, help="the lakehouse URL or directory")
        parser.add_argument(
            "-o",
            "--storage-option",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="an option of the store (repeatable; JSON values allowed)",
        )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any)"
    )
    parser.add_argument(
        "--tokens",
        metavar="FILE",
        help="bearer tokens, one '<read-only|read-write> <token>' a line (chmod 600)",
    )
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="listen on a non-loopback address without --tokens (anyone may write)",
    )
    parser.add_argument("--warehouse", help="where new tables go (default <root>/warehouse)")
    parser.add_argument(
        "--allow-location",
        action="append",
        default=[],
        metavar="PREFIX",
        help="also accept table locations under PREFIX (repeatable)",
    )
    parser.add_argument(
        "--allow-any-location",
        action="store_true",
        help="accept table locations anywhere (no confinement to the warehouse)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        help=f"largest request body accepted (default {DEFAULT_MAX_BODY_BYTES})",
    )
    parser.add_argument(
        "--cache-entries",
        type=int,
        default=4096,
        help="loaded tables kept per catalog version (0: no cache)",
    )
    parser.add_argument(
        "--vend-credentials",
        action="store_true",
        help="send the server's S3 keys to clients in loadTable's config",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn's log level (info and debug log every request)",
    )


def config_from_args(
    args: argparse.Namespace, root: str, storage_options: dict[str, Any] | None
) -> ServerConfig:
    if args.max_body_bytes < 1024:
        raise ValueError("--max-body-bytes must be at least 1024")
    if args.cache_entries < 0:
        raise ValueError("--cache-entries must not be negative")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port {args.port} is not a TCP port")
    if args.tokens is not None and not args.tokens.strip():
        raise ValueError(
            "--tokens needs a file name, not an empty value (an unset variable?): "
            "without it the server would run with no authentication"
        )
    return ServerConfig(
        root=root,
        storage_options=storage_options or None,
        host=args.host,
        port=args.port,
        tokens_file=args.tokens,
        allow_unauthenticated=args.allow_unauthenticated,
        warehouse=args.warehouse,
        allowed_locations=list(args.allow_location),
        allow_any_location=args.allow_any_location,
        max_body_bytes=args.max_body_bytes,
        cache_entries=args.cache_entries,
        vend_credentials=args.vend_credentials,
        log_level=args.log_level,
        verify=getattr(args, "verify", None),
    )


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_PORT",
    "ServerConfig",
    "add_arguments",
    "config_from_args",
]
