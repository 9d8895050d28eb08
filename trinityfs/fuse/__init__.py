"""The FUSE mount of a trinityfs lakehouse (`trinityfs mount`, `mount -t fuse.trinityfs`).

- `trinityfs.fuse.operations.TrinityOperations`: the FUSE operations over the catalog API
  and the shared path grammar, file content and errno mapping of `trinityfs.fs`;
- `trinityfs.fuse.scratch`: temporary files of editors kept in memory until renamed;
- `trinityfs.fuse.mount`: the command (`add_mount_parser`, `run_mount`, `main`), the
  foreground and daemon modes, option parsing for mount(8) and /etc/fstab.

Nothing here imports the FUSE binding (mfusepy, the `fuse` extra) until a mount starts.
"""

from trinityfs.fuse.mount import MountError, add_mount_parser, main, run_mount

__all__ = ["MountError", "add_mount_parser", "main", "run_mount"]
