"""`UPath("trinity://ns/t", root=...)`: the trinity protocol for universal_pathlib.

Registered when `trinityfs.fs` is imported and universal_pathlib is installed (it is not
a dependency), and through the `universal_pathlib.implementations` entry point, so UPath
uses this class instead of warning that the filesystem is "not explicitly implemented".
`stat().st_mtime` is when the definition took effect (`info()["mtime"]`).
"""

from __future__ import annotations

from upath import UPath


class TrinityUPath(UPath):
    """A path of the trinity:// filesystem (tables and views are files of JSON)."""

    __slots__ = ()

    @property
    def path(self) -> str:
        path = super().path
        return "/" if path in {"", "."} else path


def register() -> None:
    """Make UPath use `TrinityUPath` for trinity:// (idempotent)."""
    from upath.registry import register_implementation

    register_implementation("trinity", TrinityUPath, clobber=True)


__all__ = ["TrinityUPath", "register"]
