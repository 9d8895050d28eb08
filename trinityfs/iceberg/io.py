"""One set of credentials for the catalog root and the Iceberg files.

The lakehouse root is opened with fsspec storage options (s3fs style: `key`, `secret`,
`token`, `client_kwargs.endpoint_url`, `client_kwargs.region_name`); PyIceberg's FileIO
takes `s3.*` properties. Either may be given; the other is derived from it, so the
catalog, its Iceberg metadata and data files all use the same endpoint and keys.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from pyiceberg.io import (
    PY_IO_IMPL,
    S3_ACCESS_KEY_ID,
    S3_ENDPOINT,
    S3_REGION,
    S3_SECRET_ACCESS_KEY,
    S3_SESSION_TOKEN,
    FileIO,
    InputFile,
    OutputFile,
    load_file_io,
)
from pyiceberg.io.fsspec import FsspecFileIO

from trinityfs import jsontext
from trinityfs.catalog.locations import ALLOWED_LOCATIONS, LocationPolicy, parse_allow_list

STORAGE_OPTIONS = "storage-options"

_S3_SCHEMES = ("s3", "s3a", "s3n")


def scheme_of(url: str) -> str:
    return urlparse(url).scheme if "://" in url else "file"


def parse_storage_options(value: Any) -> dict[str, Any] | None:
    """The `storage-options` property: a dict, or a JSON object in a string."""
    if value is None or value == "":
        return None
    if isinstance(value, dict):
        return dict(value)
    try:
        parsed = jsontext.loads(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{STORAGE_OPTIONS} must be a JSON object: {exc}") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"{STORAGE_OPTIONS} must be a JSON object, not {type(parsed).__name__}")
    return parsed


def storage_options_from_s3_properties(props: dict[str, Any]) -> dict[str, Any] | None:
    """s3fs storage options equivalent to PyIceberg's `s3.*` properties (None if none)."""
    opts: dict[str, Any] = {}
    client: dict[str, Any] = {}
    if props.get(S3_ACCESS_KEY_ID):
        opts["key"] = props[S3_ACCESS_KEY_ID]
    if props.get(S3_SECRET_ACCESS_KEY):
        opts["secret"] = props[S3_SECRET_ACCESS_KEY]
    if props.get(S3_SESSION_TOKEN):
        opts["token"] = props[S3_SESSION_TOKEN]
    if props.get(S3_ENDPOINT):
        client["endpoint_url"] = props[S3_ENDPOINT]
    if props.get(S3_REGION):
        client["region_name"] = props[S3_REGION]
    if client:
        opts["client_kwargs"] = client
    return opts or None


def s3_properties_from_storage_options(opts: dict[str, Any] | None) -> dict[str, str]:
    """PyIceberg `s3.*` properties equivalent to s3fs storage options."""
    if not opts:
        return {}
    out: dict[str, str] = {}
    client = opts.get("client_kwargs") or {}
    pairs = {
        S3_ACCESS_KEY_ID: opts.get("key") or client.get("aws_access_key_id"),
        S3_SECRET_ACCESS_KEY: opts.get("secret") or client.get("aws_secret_access_key"),
        S3_SESSION_TOKEN: opts.get("token") or client.get("aws_session_token"),
        S3_ENDPOINT: opts.get("endpoint_url") or client.get("endpoint_url"),
        S3_REGION: client.get("region_name") or opts.get("region"),
    }
    for name, value in pairs.items():
        if value:
            out[name] = str(value)
    return out


def resolve_io_properties(
    root: str, warehouse: str, props: dict[str, Any]
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """(storage options for the root, extra catalog properties for PyIceberg's FileIO)."""
    extra: dict[str, str] = {}
    opts = parse_storage_options(props.get(STORAGE_OPTIONS))
    root_scheme = scheme_of(root)
    if opts is None and root_scheme in _S3_SCHEMES:
        opts = storage_options_from_s3_properties(props)
    if scheme_of(warehouse) in _S3_SCHEMES or root_scheme in _S3_SCHEMES:
        for name, value in s3_properties_from_storage_options(opts).items():
            if not props.get(name):
                extra[name] = value
    if scheme_of(warehouse) == "memory" and not props.get(PY_IO_IMPL):
        extra[PY_IO_IMPL] = "trinityfs.iceberg.io.TrinityFileIO"
    return opts, extra


def _memory_fs(_: Any) -> Any:
    import fsspec

    return fsspec.filesystem("memory")


class TrinityFileIO(FsspecFileIO):
    """PyIceberg's fsspec FileIO plus `memory://` (for lakehouses in memory, in tests)."""

    def __init__(self, properties: dict[str, str]):
        super().__init__(properties)
        self._scheme_to_fs["memory"] = _memory_fs

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._scheme_to_fs["memory"] = _memory_fs


def location_policy(props: dict[str, Any]) -> LocationPolicy:
    """The policy of a catalog's properties: its `warehouse` plus `allowed-locations`."""
    from pyiceberg.io import WAREHOUSE

    return LocationPolicy([props[WAREHOUSE], *parse_allow_list(props.get(ALLOWED_LOCATIONS))])


class ConfinedFileIO(FileIO):
    """A FileIO that checks every path against a LocationPolicy before touching it.

    Wraps the FileIO PyIceberg would use; metadata files, manifest lists, manifests,
    data and delete files are all opened through new_input/new_output/delete (PyIceberg
    0.12 reads data files via io.new_input), so nothing outside the allowed locations is
    read, written or deleted, whatever a metadata or manifest file names.
    """

    def __init__(self, inner: FileIO, policy: LocationPolicy):
        super().__init__(inner.properties)
        self.inner = inner
        self.policy = policy

    def new_input(self, location: str) -> InputFile:
        return self.inner.new_input(self.policy.check(location, "file"))

    def new_output(self, location: str) -> OutputFile:
        return self.inner.new_output(self.policy.check(location, "file"))

    def delete(self, location: str | InputFile | OutputFile) -> None:
        path = location if isinstance(location, str) else location.location
        self.policy.check(path, "file")
        self.inner.delete(location)


def confined_file_io(props: dict[str, Any], location: str | None = None) -> ConfinedFileIO:
    """load_file_io(props, location), confined to the catalog's allowed locations."""
    return ConfinedFileIO(load_file_io(props, location), location_policy(props))


__all__ = [
    "STORAGE_OPTIONS",
    "ConfinedFileIO",
    "TrinityFileIO",
    "confined_file_io",
    "location_policy",
    "parse_storage_options",
    "resolve_io_properties",
    "s3_properties_from_storage_options",
    "storage_options_from_s3_properties",
]
