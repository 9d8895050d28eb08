"""Whether the process that closes a descriptor of a mounted file still holds another one.

The kernel sends FUSE a flush on every close() of a descriptor (dup'd ones included) and
a release, without waiting for its answer, once the last one is gone: close() reports
the flush's error only. A file emptied by O_TRUNC and closed without a write must be
committed at a flush for close() to report a failed commit, but a shell's `> file`
closes a dup of the descriptor before the command writes: that flush must not commit
an empty version the command is about to overwrite, nor one closing a copy a child
inherited. The descriptor tables under /proc (read at the flush, where the closed
descriptor is already gone) tell the last close from the others.
"""

from __future__ import annotations

import os
import re

_PID = re.compile(r"[0-9]+")  # the process directories of /proc


def _holds(pid: str, target: str) -> bool | None:
    """Whether process `pid` has a descriptor open on `target`; None if its table may
    not be read (another user's process: a mount with allow_other). A process that is
    gone or exiting holds nothing."""
    fd_dir = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fd_dir)
    except PermissionError:
        return None
    except OSError:
        return False
    for name in names:
        try:
            if os.readlink(f"{fd_dir}/{name}") == target:
                return True
        except OSError:  # closed meanwhile
            continue
    return False


def holds_another(pid: int, target: str) -> bool:
    """True if a descriptor is still open on `target` (an absolute path in the mount):
    in process `pid`, which is closing one (a shell's dup), or in another process (a
    child that inherited it: `Popen(stdout=f)` and the parent closes its copy first).
    Also True when the closing process cannot be seen (another pid namespace, another
    user's process): the caller then leaves the commit to the release, as before. A
    few ms for a hundred processes; asked only for a file emptied or created and not
    written."""
    if pid <= 0:
        return True
    mine = _holds(str(pid), target)
    if mine is None or mine:
        return True
    try:
        others = [p for p in os.listdir("/proc") if _PID.fullmatch(p) and p != str(pid)]
    except OSError:
        return True
    return any(_holds(p, target) for p in others)


__all__ = ["holds_another"]
