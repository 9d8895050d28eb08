"""The trinity:// fsspec filesystem: a TrinityLake catalog as browsable, writable files.

`fsspec.filesystem("trinity", root=...)`, `fsspec.open("trinity://ns/t", root=...)` and
pandas' `storage_options={"root": ...}` all reach `TrinityFileSystem` (registered through
the `fsspec.specs` entry point, and again here when this package is imported).
"""

import fsspec

from trinityfs.fs.errors import CommitConflict, InvalidRequest
from trinityfs.fs.paths import TrinityPath, parse_path
from trinityfs.fs.spec import TrinityFileSystem
from trinityfs.fs.transaction import TrinityTransaction

if fsspec.registry.get("trinity") is not TrinityFileSystem:
    fsspec.register_implementation("trinity", TrinityFileSystem, clobber=True)

try:  # universal_pathlib is optional: register the trinity protocol when it is there
    from trinityfs.fs.universal_path import register as _register_upath
except ImportError:
    pass
else:
    _register_upath()

__all__ = [
    "CommitConflict",
    "InvalidRequest",
    "TrinityFileSystem",
    "TrinityPath",
    "TrinityTransaction",
    "parse_path",
]
