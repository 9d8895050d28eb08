"""Reading the trinity:// filesystem: entries, listings (cached), sizes, `ls`, `info`,
`cat`, `open`, modification times, and `find`/`glob`/`du` by one scan per version.

A mixin of `TrinityFileSystem` (trinityfs.fs.spec), which provides path resolution
(`_resolve`), the lakehouse, snapshots and the transaction plumbing.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from trinityfs.catalog import ObjectRef
from trinityfs.catalog.content import rendered_id
from trinityfs.fs.common import (
    SIZE_THREADS,
    TWO_LEVELS,
    _millis_to_datetime,
    _Target,
)
from trinityfs.fs.errors import (
    InvalidRequest,
    exists,
    is_a_directory,
    not_found,
    translate,
)
from trinityfs.fs.files import TrinityReadFile, TrinityTextWriter, TrinityWriteFile
from trinityfs.fs.paths import (
    VERSIONS_DIR,
    TrinityPath,
    encode_name,
    parse_path,
    strip_protocol,
)


class Listing:
    """A directory's entries: their paths, and fsspec's info dicts built when first
    asked for (a names-only `ls` of a namespace of 100,000 tables builds none)."""

    __slots__ = ("_build", "_entries", "names")

    def __init__(self, names: list[str], build: Callable[[], list[dict[str, Any]]]) -> None:
        self.names = names
        self._build = build
        self._entries: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return len(self.names)

    @property
    def entries(self) -> list[dict[str, Any]]:
        if self._entries is None:
            self._entries = self._build()
        return self._entries


def encoded_names(names: list[str]) -> list[str]:
    """`encode_name` of every name, in one pass over the list when no name needs
    encoding (the common case: memchr over the joined names); `names` itself then."""
    joined = "".join(names)
    dots = "." in joined and ("." in names or ".." in names)
    if "%" in joined or "/" in joined or dots:
        return [encode_name(name) for name in names]
    return names


def _child_paths(p: TrinityPath, names: list[str]) -> list[str]:
    """The paths of the children `names` of directory `p`."""
    return list(map(p.child("").__add__, encoded_names(names)))  # the directory's path + "/"


class ReadingMixin:
    """The read side of `TrinityFileSystem` (see the module docstring)."""

    # -- entries -------------------------------------------------------------------------

    @staticmethod
    def _dir_entry(name: str, kind: str, version: int | None, **extra: Any) -> dict[str, Any]:
        return {
            "name": name,
            "type": "directory",
            "size": 0,
            "kind": kind,
            "version": version,
            **extra,
        }

    @staticmethod
    def _file_entry(
        name: str, kind: str, version: int | None, size: int | None = None
    ) -> dict[str, Any]:
        return {"name": name, "type": "file", "size": size, "kind": kind, "version": version}

    def _version_time(self, version: int) -> datetime:
        with translate(f"/v/{version}", lookup=True):
            return _millis_to_datetime(self.lake.version_info(version).created_at_millis)

    def _versions_listing(self) -> list[dict[str, Any]]:
        """`/v`: the catalog's selectors listing (an export named like a version or
        `latest` is listed as `export:<name>`, so every entry reads what it names)."""
        with translate("/v", lookup=True):
            entries = self.model.versions()
        out = []
        for entry in entries:
            path = f"/{VERSIONS_DIR}/{encode_name(entry.selector)}"
            if entry.how == "export":
                out.append(self._dir_entry(path, "export", None))
            else:
                out.append(self._dir_entry(path, "version", entry.version))
        return out

    def _list(self, t: _Target) -> Listing:
        """The entries of a version root or a namespace (one key-range scan per kind);
        the paths first, the info dicts when asked for."""
        p, version = t.p, t.version
        if p.is_root:
            namespaces = list(self.model.namespaces(t.place))
            if p.prefix == "" and VERSIONS_DIR in namespaces:
                namespaces.remove(VERSIONS_DIR)  # /v is the versions directory; "v" is /v/latest/v
            roots = _child_paths(p, namespaces)

            def dirs() -> list[dict[str, Any]]:
                return [self._dir_entry(path, "namespace", version) for path in roots]

            return Listing(roots, dirs)
        if p.is_namespace:
            names, kinds = self.model.object_names(t.place)
            paths = _child_paths(p, names)

            def entries() -> list[dict[str, Any]]:
                return [
                    {"name": path, "type": "file", "size": None, "kind": kind, "version": version}
                    for path, kind in zip(paths, kinds, strict=True)
                ]

            return Listing(paths, entries)
        raise AssertionError(p)

    def _cached_listing(self, t: _Target) -> Listing:
        key = t.p.path
        in_txn = t.p.writable and self._current_txn() is not None
        if not in_txn:
            hit = self._listings.get(key)
            if hit is not None and hit[0] == t.version:
                return hit[1]
        with translate(t.p.path, lookup=True):
            listing = self._list(t)
        if not in_txn:
            self._listings.put(key, (t.version, listing))
        return listing

    def _invalidate_latest(self) -> None:
        """Forget listings of the latest version (after a write through this instance)."""
        self._listings.discard_if(lambda k: parse_path(k).writable)

    def invalidate_cache(self, path: str | None = None) -> None:
        if path is None:
            self._listings.clear()
            self._catalogs.clear()
            if self._model is not None:
                self._model.forget()
        else:
            path = strip_protocol(path)
            self._listings.discard_if(
                lambda k: k == path or k.startswith(path + "/") or path == "/"
            )
        super().invalidate_cache(path)

    # -- sizes (read definitions) --------------------------------------------------------

    def _render(self, reader: Any, ref: ObjectRef, location: str) -> bytes:
        return self.model.render(reader, ref.kind, ref.namespace, ref.name, location)

    def _sizes(self, reader: Any, items: list[tuple[ObjectRef, str]]) -> list[int]:
        """JSON sizes of many objects, reading their definitions in parallel."""
        if len(items) < 8:
            return [len(self._render(reader, ref, loc)) for ref, loc in items]
        with ThreadPoolExecutor(SIZE_THREADS) as pool:
            return list(pool.map(lambda item: len(self._render(reader, *item)), items))

    def _fill_sizes(self, t: _Target, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        wanted = [e for e in entries if e["type"] == "file" and e["size"] is None]
        if not wanted:
            return entries
        items = []
        for e in wanted:
            p = parse_path(e["name"])
            location = t.reader.object_location(e["kind"], p.namespace, p.name)
            items.append((ObjectRef(p.namespace, p.name, e["kind"]), location))
        with translate(t.p.path, lookup=True):
            sizes = self._sizes(t.reader, items)
        by_name = {e["name"]: size for e, size in zip(wanted, sizes, strict=True)}
        return [{**e, "size": by_name[e["name"]]} if e["name"] in by_name else e for e in entries]

    # -- reading -------------------------------------------------------------------------

    def ls(self, path: str, detail: bool = True, sizes: bool = False, **kwargs: Any):
        """Entries of a directory (or the file itself). `sizes=True` reads every definition."""
        t = self._resolve(path)
        p = t.p
        if p.is_versions_dir:
            entries = self._versions_listing()
        elif p.is_root or p.is_namespace:
            listing = self._cached_listing(t)
            if not detail and not sizes:
                return list(listing.names)  # no info dict per name
            entries = listing.entries
        elif p.is_object:
            entries = [self.info(p.path)]
        else:
            raise not_found(p.path, TWO_LEVELS)
        if sizes:
            entries = self._fill_sizes(t, entries)
        if detail:
            return list(entries)
        return [e["name"] for e in entries]

    def _object(self, t: _Target) -> tuple[str, Any]:
        """(kind, definition) of the object at `t`, or FileNotFoundError."""
        with translate(t.p.path, lookup=True):
            return self.model.definition(t.place)

    def _object_info(self, t: _Target) -> tuple[dict[str, Any], bytes]:
        """(file entry, JSON file) of the object at `t`: the file as `cat` reads it (the
        catalog's rendering, cached by definition location) and the definition's id read
        from that file (`rendered_id`: no decode, no cache of our own)."""
        with translate(t.p.path, lookup=True):
            kind, _location, data = self.model.read(t.place)
        info = self._file_entry(t.p.path, kind, t.version, len(data))
        info["id"] = rendered_id(data)
        return info, data

    def _object_data(self, t: _Target) -> bytes:
        """The JSON file of the object at `t` (cached by definition location)."""
        with translate(t.p.path, lookup=True):
            return self.model.read(t.place)[2]

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        """type, size, kind, version (and properties for a namespace): a point lookup."""
        t = self._resolve(path)
        p = t.p
        if p.is_versions_dir:
            with translate(p.path, lookup=True):
                latest = self.lake.latest_version()
            return self._dir_entry(p.path, "versions", None, latest=latest)
        if p.is_root:
            kind = "export" if t.export else "version"
            created = self._version_time(t.version) if t.export is None else None
            return self._dir_entry(p.path, kind, t.version, created=created)
        if p.is_namespace:
            with translate(p.path, lookup=True):
                st = self.model.stat(t.place)
            return self._dir_entry(
                p.path,
                "namespace",
                t.version,
                properties=st.properties,
                id=st.id,
                **self._times(t),
            )
        if p.is_object:
            info = self._object_info(t)[0]
            info.update(self._times(t))
            return info
        raise not_found(p.path, TWO_LEVELS)

    def _times(self, t: _Target) -> dict[str, datetime]:
        """`mtime` (when what the path holds took effect) and `created` of an existing
        namespace or object (the time of the version read, for an export)."""
        if t.export is not None:
            return {}
        return {
            "mtime": self._changed_at_target(t, created=False),
            "created": self._changed_at_target(t, created=True),
        }

    def _light(self, path: str) -> str | None:
        """'directory', 'file' or None, by key lookups only (no definition read)."""
        try:
            t = self._resolve(path)
            p = t.p
            if p.is_versions_dir:
                return "directory" if self.lake is not None else None
            if p.is_root:
                return "directory"
            if p.depth > 2:
                return None
            with translate(p.path, lookup=True):
                return self.model.exists(t.place)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def exists(self, path: str, **kwargs: Any) -> bool:
        return self._light(path) is not None

    def lexists(self, path: str, **kwargs: Any) -> bool:
        return self.exists(path)

    def isdir(self, path: str) -> bool:
        return self._light(path) == "directory"

    def isfile(self, path: str) -> bool:
        return self._light(path) == "file"

    def cat(self, path, recursive=False, on_error="raise", **kwargs):
        """fsspec's cat; one exact path (the common call) goes straight to `cat_file`,
        as fsspec's would after expanding it to itself (names are literal here)."""
        if isinstance(path, str) and not recursive and "assume_literal" not in kwargs:
            # (cat_file's parse strips the protocol, and remembers the text it parsed)
            return self.cat_file(path, **kwargs)
        return super().cat(path, recursive=recursive, on_error=on_error, **kwargs)

    def cat_file(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        t = self._resolve(path)
        if not t.p.is_object:
            if t.p.depth > 2:
                raise not_found(t.p.path, TWO_LEVELS)
            self.info(t.p.path)  # FileNotFoundError when it does not exist
            raise is_a_directory(t.p.path)
        data = self._object_data(t)
        return data[start:end] if (start is not None or end is not None) else data

    def open(
        self, path, mode="rb", block_size=None, cache_options=None, compression=None, **kwargs
    ):
        """fsspec's open; text writes leave nothing behind when their block raises."""
        if "b" not in mode and ("w" in mode or "x" in mode):
            text = {k: kwargs.pop(k) for k in ("encoding", "errors", "newline") if k in kwargs}
            binary = super().open(
                path,
                mode.replace("t", "") + "b",
                block_size=block_size,
                cache_options=cache_options,
                compression=compression,
                **kwargs,
            )
            return TrinityTextWriter(binary, **text)
        return super().open(
            path,
            mode,
            block_size=block_size,
            cache_options=cache_options,
            compression=compression,
            **kwargs,
        )

    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: Any = None,
        autocommit: bool = True,
        cache_options: Any = None,
        **kwargs: Any,
    ):
        path = strip_protocol(path)
        if mode == "rb":
            t = self._resolve(path)
            if not t.p.is_object:
                self.cat_file(path)  # raises the right error
            info, data = self._object_info(t)
            return TrinityReadFile(self, path, data, info)
        if mode in ("wb", "xb"):
            p = self._writable_object(path)
            if mode == "xb" and self.exists(p.path):
                raise exists(p.path, f"{p.namespace}.{p.name} already exists")
            return TrinityWriteFile(self, p.path, mode, autocommit)
        raise InvalidRequest(
            f"{path}: mode {mode!r} is not supported; definitions open as 'rb', 'wb' or 'xb'"
        )

    def modified(self, path: str) -> datetime:
        """When the current definition (or namespace) took effect, or a version's time.

        A binary search over versions for the one that wrote what `path` holds now
        (O(log versions) point lookups).
        """
        return self._changed_at(path, created=False)

    def created(self, path: str) -> datetime:
        """When the object or namespace came into existence (its latest creation)."""
        return self._changed_at(path, created=True)

    def _changed_at(self, path: str, created: bool) -> datetime:
        t = self._resolve(path)
        p = t.p
        if p.is_versions_dir:
            with translate(p.path, lookup=True):
                return self._version_time(
                    self.lake.oldest_version() if created else self.lake.latest_version()
                )
        if p.is_root:
            if t.export is not None:
                raise not_found(p.path, "an export has no commit time")
            return self._version_time(t.version)
        if p.depth > 2:
            raise not_found(p.path, TWO_LEVELS)
        self.info(p.path)  # FileNotFoundError if missing
        return self._changed_at_target(t, created)

    def _changed_at_target(self, t: _Target, created: bool) -> datetime:
        """When what `t` holds took effect (`created`: its latest creation), by the
        catalog's history (O(log versions)); now for what only the running
        transaction holds."""
        with translate(t.p.path, lookup=True):
            info = self.model.changed(t.place, created=created)
        if info is None:
            return datetime.now(UTC)
        return _millis_to_datetime(info.created_at_millis)

    def ukey(self, path: str) -> str:
        """Changes exactly when the content changes (not with unrelated commits)."""
        info = self.info(path)
        if info["type"] == "file":
            return hashlib.sha256(self.cat_file(path)).hexdigest()
        stable = {k: v for k, v in info.items() if k not in ("version", "latest", "created")}
        return hashlib.sha256(repr(sorted(stable.items())).encode()).hexdigest()

    def checksum(self, path: str) -> int:
        return int(self.ukey(path)[:32], 16)

    # -- find, glob, du ------------------------------------------------------------------

    def find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        detail: bool = False,
        sizes: bool = False,
        **kwargs: Any,
    ):
        """Everything below `path` by one range scan over the catalog (not one ls per dir)."""
        if maxdepth is not None and maxdepth < 1:
            raise ValueError("maxdepth must be at least 1")
        out: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self._find_into(out, path, maxdepth, withdirs, sizes)
        names = sorted(out)
        if detail:
            return {name: out[name] for name in names}
        return names

    def _find_into(
        self, out: dict, path: str, maxdepth: int | None, withdirs: bool, sizes: bool
    ) -> None:
        t = self._resolve(path)
        p = t.p
        if p.is_versions_dir:
            if withdirs:
                out[p.path] = self.info(p.path)
            for entry in self._versions_listing():
                if withdirs:
                    out[entry["name"]] = entry
                if maxdepth is None or maxdepth > 1:
                    self._find_into(
                        out,
                        entry["name"],
                        None if maxdepth is None else maxdepth - 1,
                        withdirs,
                        sizes,
                    )
            return
        if p.is_object:
            out[p.path] = self.info(p.path)
            return
        if p.depth > 2:
            return
        if withdirs and p.path != "/":
            out[p.path] = self.info(p.path)
        if p.is_namespace or maxdepth == 1:
            entries = self._cached_listing(t).entries
            if sizes:
                entries = self._fill_sizes(t, entries)
            for entry in entries:
                if withdirs or entry["type"] == "file":
                    out[entry["name"]] = entry
            return
        # the whole catalog of a version: one scan per kind, in key order
        files: list[tuple[ObjectRef, str]] = []
        with translate(p.path, lookup=True):
            for ref, location in self._catalog(t):
                if p.prefix == "" and ref.namespace == VERSIONS_DIR:
                    continue  # reachable as /v/latest/v
                if ref.name is None:
                    if withdirs:
                        name = p.child(ref.namespace)
                        out[name] = self._dir_entry(name, "namespace", t.version)
                else:
                    files.append((ref, location))
            found = self._sizes(t.reader, files) if sizes else [None] * len(files)
        for (ref, _location), size in zip(files, found, strict=True):
            name = p.with_names(ref.namespace, ref.name)
            out[name] = self._file_entry(name, ref.kind, t.version, size)

    def _catalog(self, t: _Target) -> list[tuple[ObjectRef, str]]:
        """Every namespace, table and view of a version with its location (one range scan
        per kind), cached for the last few versions: a version never changes."""
        if t.p.writable and self._current_txn() is not None:
            return list(t.reader.iter_all())
        key = (t.export or "", t.version)
        return self._catalogs.get_or_load(key, lambda: list(t.reader.iter_all()))

    def du(
        self,
        path: str,
        total: bool = True,
        maxdepth: int | None = None,
        withdirs: bool = False,
        **kwargs: Any,
    ):
        """Bytes of the definitions (as JSON) below `path`: one scan, then parallel reads."""
        found = self.find(path, maxdepth=maxdepth, withdirs=withdirs, detail=True, sizes=True)
        sizes = {name: info.get("size") or 0 for name, info in found.items()}
        return sum(sizes.values()) if total else sizes


__all__ = ["ReadingMixin"]
