"""The one configuration reader: which lakehouse, with which storage options, at which
version, how fresh "latest" must be, and what a commit verifies. Used by the CLI, the
mount, the fsspec filesystem, the Iceberg catalog and the Spark source.

Each setting comes from the first source that has it:

1. arguments (command-line options, catalog or data source properties, fs kwargs);
2. the environment: ``TRINITYFS_ROOT``, ``TRINITYFS_STORAGE_OPTIONS`` (a JSON object),
   ``TRINITYFS_VERSION`` (a version selector), ``TRINITYFS_MAX_STALENESS`` (seconds),
   ``TRINITYFS_VERIFY`` (``reads`` or ``tree``: see trinityfs/txn/verify.py);
3. fsspec's configuration for the ``trinity`` protocol (``fsspec.config.conf["trinity"]``,
   from fsspec's config files or ``FSSPEC_TRINITY_*`` variables): keys ``root``,
   ``storage_options``, ``version``, ``max_staleness_seconds``, ``verify``;
4. defaults: root ``./lakehouse``, no storage options, the latest version, staleness 0,
   verify ``reads``.

The verify mode is also what `Lakehouse` uses when it is not given one, so every front
end (CLI, mount, REST server, PyIceberg, Spark) follows ``TRINITYFS_VERIFY``.

Storage options merge key by key instead (a higher source overrides single keys), so
credentials from the environment combine with an endpoint given as an argument. A local
root becomes an absolute path (workers may run in another directory). Bad values raise
InvalidArgumentError naming the source.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trinityfs import jsontext
from trinityfs.catalog.freshness import Freshness
from trinityfs.catalog.selector import parse_selector
from trinityfs.errors import InvalidArgumentError, JsonTooDeepError

if TYPE_CHECKING:
    from trinityfs.catalog.lakehouse import Lakehouse

PROTOCOL = "trinity"
DEFAULT_ROOT = "lakehouse"
ROOT_ENV = "TRINITYFS_ROOT"
STORAGE_OPTIONS_ENV = "TRINITYFS_STORAGE_OPTIONS"
VERSION_ENV = "TRINITYFS_VERSION"
STALENESS_ENV = "TRINITYFS_MAX_STALENESS"
VERIFY_ENV = "TRINITYFS_VERIFY"


@dataclass(frozen=True)
class LakehouseConfig:
    """A resolved configuration; `sources` says where each setting came from."""

    root: str
    storage_options: dict[str, Any] = field(default_factory=dict)
    version: str | None = None  # a version selector to pin (None: follow the latest)
    max_staleness_seconds: float = 0.0
    sources: dict[str, str] = field(default_factory=dict)
    verify: str = "reads"  # what a commit verifies: "reads" or "tree" (txn/verify.py)

    @property
    def freshness(self) -> Freshness:
        return Freshness(self.max_staleness_seconds)

    def open(self, *, create: bool = False) -> Lakehouse:
        """The Lakehouse this configuration names (created first when `create`)."""
        from trinityfs.catalog.lakehouse import Lakehouse

        if create:
            lake = Lakehouse.create(
                self.root, storage_options=self.storage_options, exist_ok=True, verify=self.verify
            )
            lake.freshness = self.freshness
            return lake
        return Lakehouse.open(
            self.root,
            storage_options=self.storage_options,
            freshness=self.freshness,
            verify=self.verify,
        )


def storage_option_value(key: str, text: str) -> Any:
    """One KEY=VALUE storage option's value (`-o`, `--storage-option`, `storage.KEY=`):
    JSON when it parses as JSON (numbers, booleans, objects), else the text itself.
    JSON nested too deeply is refused naming the option."""
    try:
        return jsontext.loads(text)
    except JsonTooDeepError as exc:
        raise InvalidArgumentError(
            f"storage option {key}: the value is {exc}; give a plain value or a flat JSON object"
        ) from None
    except ValueError:
        return text


def storage_options_from_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """KEY=VALUE storage options as a dict (later keys win); `read_config` then merges
    them over $TRINITYFS_STORAGE_OPTIONS and fsspec's config key by key."""
    return {key: storage_option_value(key, value) for key, value in pairs}


def normalize_root(root: str | os.PathLike[str]) -> str:
    """A lakehouse URL; a local path becomes absolute."""
    text = os.fspath(root)
    if not text:
        raise InvalidArgumentError("the lakehouse root is empty")
    if "://" not in text:
        text = os.path.abspath(os.path.expanduser(text))
    return text


def _fsspec_conf() -> Mapping[str, Any]:
    try:
        from fsspec.config import conf
    except ImportError:  # pragma: no cover - fsspec is a dependency
        return {}
    section = conf.get(PROTOCOL)
    return section if isinstance(section, Mapping) else {}


def _options(value: Any, source: str) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            value = jsontext.loads(value)
        except ValueError as exc:
            raise InvalidArgumentError(
                f"storage options from {source} are not a JSON object: {exc}"
            ) from None
        if isinstance(value, dict):
            return value
    raise InvalidArgumentError(
        f"storage options from {source} must be a JSON object, not {type(value).__name__}"
    )


def _staleness(value: Any, source: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"max staleness from {source} is a number of seconds, not {value!r}"
        ) from None
    if math.isnan(seconds) or seconds < 0:
        raise InvalidArgumentError(f"max staleness from {source} must be >= 0, not {value!r}")
    return seconds


def _named(source: str, variable: str) -> str:
    """A source for an error message: the environment variable itself when it is one."""
    return f"the environment (${variable})" if source == "the environment" else source


def verify_mode(
    argument: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    fsspec_conf: Mapping[str, Any] | None = None,
) -> tuple[str, str]:
    """(mode, source): what a commit verifies, from `argument`, then $TRINITYFS_VERIFY,
    then fsspec's [trinity] verify, else "reads"; InvalidArgumentError naming the source."""
    from trinityfs.txn.verify import VERIFY_READS, parse_verify_mode

    env = os.environ if env is None else env
    conf = _fsspec_conf() if fsspec_conf is None else fsspec_conf
    for source, value in (
        ("arguments", argument),
        ("the environment", env.get(VERIFY_ENV)),
        (f"fsspec config [{PROTOCOL}]", conf.get("verify")),
    ):
        if value is not None and value != "":
            where = _named(source, VERIFY_ENV)
            return parse_verify_mode(value, f"the verify mode from {where}"), source
    return VERIFY_READS, "default"


def read_config(
    root: str | os.PathLike[str] | None = None,
    storage_options: Mapping[str, Any] | str | None = None,
    version: str | int | None = None,
    *,
    max_staleness_seconds: float | str | None = None,
    verify: str | None = None,
    env: Mapping[str, str] | None = None,
    fsspec_conf: Mapping[str, Any] | None = None,
) -> LakehouseConfig:
    """The configuration from arguments, then the environment, then fsspec's config."""
    env = os.environ if env is None else env
    conf = _fsspec_conf() if fsspec_conf is None else fsspec_conf
    layers: list[tuple[str, dict[str, Any]]] = [
        (
            "arguments",
            {
                "root": root,
                "storage_options": storage_options,
                "version": version,
                "max_staleness_seconds": max_staleness_seconds,
            },
        ),
        (
            "the environment",
            {
                "root": env.get(ROOT_ENV),
                "storage_options": env.get(STORAGE_OPTIONS_ENV),
                "version": env.get(VERSION_ENV),
                "max_staleness_seconds": env.get(STALENESS_ENV),
            },
        ),
        (f"fsspec config [{PROTOCOL}]", dict(conf)),
    ]
    sources: dict[str, str] = {}

    def first(name: str) -> Any:
        for source, values in layers:
            value = values.get(name)
            if value is not None and value != "":
                sources[name] = source
                return value
        return None

    chosen_root = first("root")
    if chosen_root is None:
        chosen_root, sources["root"] = DEFAULT_ROOT, "default"
    pin = first("version")
    if pin is not None:
        pin = parse_selector(pin if isinstance(pin, int) else str(pin)).text
    staleness = first("max_staleness_seconds")
    verify, verify_source = verify_mode(verify, env=env, fsspec_conf=conf)
    if verify_source != "default":
        sources["verify"] = verify_source
    options: dict[str, Any] = {}
    for source, values in reversed(layers):
        layer = _options(values.get("storage_options"), _named(source, STORAGE_OPTIONS_ENV))
        if layer:
            options.update(layer)
            sources["storage_options"] = source
    return LakehouseConfig(
        root=normalize_root(chosen_root),
        storage_options=options,
        version=pin,
        max_staleness_seconds=(
            0.0
            if staleness is None
            else _staleness(
                staleness, _named(sources.get("max_staleness_seconds", ""), STALENESS_ENV)
            )
        ),
        sources=sources,
        verify=verify,
    )


__all__ = [
    "DEFAULT_ROOT",
    "ROOT_ENV",
    "STALENESS_ENV",
    "STORAGE_OPTIONS_ENV",
    "VERIFY_ENV",
    "VERSION_ENV",
    "LakehouseConfig",
    "normalize_root",
    "read_config",
    "storage_option_value",
    "storage_options_from_pairs",
    "verify_mode",
]
