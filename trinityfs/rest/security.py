"""Bearer tokens, read-only and read-write, from a file; and the bind-address rule.

The tokens file has one token a line, with its role first:

    # comments and blank lines are ignored
    read-write  4f0c2d...   # may change the catalog
    read-only   9a77be...   # may only read

Tokens are compared in constant time. Without a tokens file the server accepts every
request with full rights, so it refuses to listen on anything but a loopback address
unless told explicitly (`--allow-unauthenticated`).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import stat
from dataclasses import dataclass
from pathlib import Path

READ_ONLY = "read-only"
READ_WRITE = "read-write"
ROLES = (READ_ONLY, READ_WRITE)
MIN_TOKEN_CHARS = 16


class SecurityConfigError(ValueError):
    """A tokens file or bind address the server refuses to start with."""


@dataclass(frozen=True)
class Tokens:
    """token -> role; empty means authentication is off."""

    entries: tuple[tuple[bytes, str], ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.entries)

    def role_of(self, token: str) -> str | None:
        given = token.encode("utf-8", "surrogateescape")
        role = None
        for known, known_role in self.entries:  # no early exit: constant time per file
            if hmac.compare_digest(known, given):
                role = known_role
        return role


def load_tokens(path: str | os.PathLike) -> Tokens:
    """Read a tokens file (SecurityConfigError naming the line for anything wrong)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
        mode = file.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        raise SecurityConfigError(f"cannot read the tokens file {file}: {exc}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SecurityConfigError(
            f"the tokens file {file} is readable by other users; chmod 600 it"
        )
    entries: list[tuple[bytes, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or words[0] not in ROLES:
            raise SecurityConfigError(
                f"{file} line {number}: expected '<read-only|read-write> <token>'"
            )
        role, token = words
        if len(token) < MIN_TOKEN_CHARS:
            raise SecurityConfigError(
                f"{file} line {number}: a token needs at least {MIN_TOKEN_CHARS} characters"
            )
        entries.append((token.encode(), role))
    if not entries:
        raise SecurityConfigError(f"the tokens file {file} has no tokens")
    return Tokens(tuple(entries))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, tokens: Tokens, allow_unauthenticated: bool) -> None:
    """Refuse a non-loopback address without tokens unless explicitly allowed."""
    if tokens.enabled or allow_unauthenticated or is_loopback(host):
        return
    raise SecurityConfigError(
        f"refusing to listen on {host} without authentication: give --tokens FILE "
        "(read-only and read-write bearer tokens), or --allow-unauthenticated to let anyone "
        "who reaches the address change the catalog"
    )


__all__ = [
    "READ_ONLY",
    "READ_WRITE",
    "SecurityConfigError",
    "Tokens",
    "check_bind",
    "is_loopback",
    "load_tokens",
]
