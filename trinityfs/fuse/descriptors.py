"""Whether the process that closes a descriptor of a mounted file still holds another one.

The kernel sends FUSE a flush on every close() of a descriptor (dup'd ones included) and
a release, without waiting for its answer, once the last one is gone: close() reports
the flush's error only. A file emptied by O_TRUNC and closed without a write must be
committed at a flush for close() to report a failed commit, but a shell's `> file`
closes a dup of the descriptor before the command writes: that flush must not commit
an empty version the command is about to overwrite. The descriptor table of the
closing process (/proc/<pid>/fd, read at the flush, where the closed descriptor is
already gone) tells the two apart.
"""

from __future__ import annotations

import os


def holds_another(pid: int, target: str) -> bool:
    """True if process `pid` has a descriptor open on `target` (an absolute path in the
    mount), or when that cannot be told (another pid namespace, another user's process):
    the caller then leaves the commit to the release, as for a dup."""
    if pid <= 0:
        return True
    fd_dir = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fd_dir)
    except FileNotFoundError:  # exited: its descriptors are gone
        return False
    except OSError:
        return True
    for name in names:
        try:
            if os.readlink(f"{fd_dir}/{name}") == target:
                return True
        except OSError:  # closed meanwhile
            continue
    return False


__all__ = ["holds_another"]
