"""Updates that commute with concurrent ones on the same key, and catalog names for keys.

A transaction that loses the race for a version normally conflicts when a winner changed
a key it wrote. Some writes only change part of what the key points to: setting and
removing some property names of a namespace. Two such writes commute when they touch
different property names, so instead of failing, the losing transaction re-applies its
part onto the winner's definition (a new definition file) and replays. Touching a
property name the winner changed too is a real conflict and still fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from google.protobuf.message import Message

from trinityfs.errors import CommitConflictError, InvalidArgumentError
from trinityfs.format.definitions import decode_definition, encode_definition
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF, KeyCodec
from trinityfs.format.paths import new_definition_location

LAKEHOUSE_DEF_KEY = KEY_LAKEHOUSE_DEF


def describe_key(key: str, codec: KeyCodec | None) -> str:
    """A key as users name the object: namespace 'ns', table 'ns.t' (never padded)."""
    if key == LAKEHOUSE_DEF_KEY:
        return "the lakehouse definition"
    if codec is not None:
        try:
            obj = codec.decode(key)
        except InvalidArgumentError:
            pass
        else:
            if obj.name is None:
                return f"{obj.kind} {obj.namespace!r}"
            return f"{obj.kind} {obj.namespace + '.' + obj.name!r}"
    return f"key {key.rstrip(' ')!r}"


class Reapply(Protocol):
    """Re-applies one key's write onto the definition a newer version holds."""

    def __call__(self, latest: bytes | None, version: int) -> tuple[str, bytes]:
        """(new location, its bytes); CommitConflictError if it does not commute."""
        ...


@dataclass
class PropertyUpdate:
    """Set/remove some property names of one object, re-applicable on a newer definition.

    `base` holds, for every touched name, its value (None: absent) in the definition the
    transaction read; a newer definition commutes when it still has those values.
    """

    key: str
    cls: type[Message]
    kind: str
    namespace: str
    name: str | None
    describe: str
    base: dict[str, str | None] = field(default_factory=dict)
    delta: dict[str, str | None] = field(default_factory=dict)  # None removes

    def touch(self, read: Mapping[str, str], updates: Mapping[str, str], removals) -> None:
        """Record more changes of this transaction (read: properties as first read)."""
        for prop in [*removals, *updates]:
            self.base.setdefault(prop, read.get(prop))
        for prop in removals:
            self.delta[prop] = None
        for prop, value in updates.items():
            self.delta[prop] = value

    def apply(self, msg: Message) -> Message:
        for prop, value in self.delta.items():
            if value is None:
                msg.properties.pop(prop, None)
            else:
                msg.properties[prop] = value
        return msg

    def __call__(self, latest: bytes | None, version: int) -> tuple[str, bytes]:
        if latest is None:
            raise CommitConflictError(
                self.key,
                version,
                f"commit conflict: {self.describe} was dropped by version {version}",
            )
        msg = decode_definition(latest, self.cls, f"{self.describe} at version {version}")
        changed = sorted(p for p, v in self.base.items() if msg.properties.get(p) != v)
        if changed:
            raise CommitConflictError(
                self.key,
                version,
                f"commit conflict: version {version} also changed propert"
                f"{'y' if len(changed) == 1 else 'ies'} {', '.join(map(repr, changed))} "
                f"of {self.describe}",
            )
        self.apply(msg)
        data = encode_definition(msg)
        location = new_definition_location(self.kind, self.namespace, self.name, data)
        return location, data
