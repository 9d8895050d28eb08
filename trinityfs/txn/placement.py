"""Where a new definition file goes: of a few candidate names, the cheapest to create.

A definition's name carries random bits (FORMAT.md's `<uuid4>` part), and its optimized
path, three hash directories deep, follows from the whole name. On local disk a file in
a directory no commit used before costs that directory's `mkdir` and an fsync of its
parent before the root may point to it: most creates of a young lakehouse pay it. Drawing
up to the store's `placement_choices` names and keeping the first whose directory exists
(else the one needing fewest new directories) removes most of those fsyncs. Measured on
local disk it cost more CPU than the fsyncs it saved, so every store draws one name
today (`storage/localdirs.PLACEMENT_CHOICES`); object stores and unsynced disks never
would. docs/FORMAT-CHOICES.md "Definition placement: measured, shipped off" has the
figures and what it does to the spread of files.
"""

from __future__ import annotations

from itertools import islice
from typing import Protocol

from trinityfs.format.paths import definition_locations


class Placement(Protocol):
    @property
    def placement_choices(self) -> int: ...

    def directories_to_make(self, loc: str, *, probe: bool = False) -> int: ...


def place_definition(
    storage: Placement, kind: str, namespace: str, name: str | None, data: bytes
) -> str:
    """A fresh location for a definition file holding `data`: of the store's
    `placement_choices` candidates, the first whose directory exists (the first
    candidate's may be probed: in a lakehouse used for long it is there), else the one
    needing fewest new directories."""
    candidates = definition_locations(kind, namespace, name, data)
    best = next(candidates)
    choices = storage.placement_choices
    if choices <= 1:
        return best
    fewest = storage.directories_to_make(best, probe=True)
    for location in islice(candidates, choices - 1):
        if fewest == 0:
            break
        missing = storage.directories_to_make(location)
        if missing < fewest:
            best, fewest = location, missing
    return best
