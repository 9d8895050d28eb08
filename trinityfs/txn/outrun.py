"""When an oldest marker is a lie the lakehouse caught up with: written before the root
it names existed (expiration writes the marker naming a root that exists). Used by
readers (trinityfs/txn/roots.py) and by expiration and fsck (trinityfs/lifecycle/markers.py).

Store mtimes tell the order the files were written in, unless the lakehouse was copied
without them (`cp -r`, `aws s3 sync`: every file gets the time it was copied, in
whatever order the copy took): a marker copied a few seconds before the root it names
then looked outrun, and readers served versions below it, which the original refuses
as expired. So an outrun by the mtimes is confirmed by the root's `created_at_millis`,
the writer's clock, which a copy keeps: a root stamped well before the marker's mtime
existed when the marker was written, whatever the copy did to its mtime.
"""

from __future__ import annotations

from trinityfs.format.keys import KEY_CREATED_AT_MILLIS
from trinityfs.tree import Node

#: An oldest marker older than the root it names by more than this (store mtimes) was
#: written before that root existed: a lie (`written_before_its_root`)
OUTRUN_SLACK_SECONDS = 2.0
#: How far a writer's clock (a root's created_at_millis) may run behind the store's
#: (the marker's mtime): a root stamped more than this before the marker's mtime was
#: there when the marker was written. Wide on purpose: a writer minutes behind must
#: not make a lie look true (versions refused), and the root a marker names is the
#: oldest kept one, usually hours or days old when a lakehouse is copied; a copy made
#: within this of that root's commit is still judged by the mtimes alone
OUTRUN_CLOCK_MARGIN_SECONDS = 3600.0


def written_before_its_root(
    marker_mtime: float | None, root_mtime: float | None, root_created_millis: int | None = None
) -> bool:
    """Whether an oldest marker with this mtime was written before the root it names
    existed: older than the root by more than OUTRUN_SLACK_SECONDS of the store's clock,
    and (when the root's `created_at_millis` is given) the root not stamped more than
    OUTRUN_CLOCK_MARGIN_SECONDS before the marker's mtime (then the mtimes are a copy's).
    Unknown times: no."""
    if marker_mtime is None or root_mtime is None:
        return False
    if root_mtime - marker_mtime <= OUTRUN_SLACK_SECONDS:
        return False
    if root_created_millis is None:
        return True
    return root_created_millis / 1000 > marker_mtime - OUTRUN_CLOCK_MARGIN_SECONDS


def created_millis(root: Node) -> int | None:
    """A root's created_at_millis, None when absent or malformed."""
    try:
        return int(root.system.get(KEY_CREATED_AT_MILLIS, ""))
    except ValueError:
        return None
