"""Writing the trinity:// filesystem: definitions (create, replace, upsert with a base
version), `pipe`, `touch`, `put`, `mkdir`, `rmdir`, `rm`, `cp`, `mv` (literal paths: glob
characters are name characters), and namespace properties as properties and xattrs.
Every call is one commit, or joins the running transaction.

A mixin of `TrinityFileSystem` (trinityfs.fs.spec).
"""

from __future__ import annotations

import errno
from typing import Any

from fsspec.implementations.local import trailing_sep
from fsspec.utils import other_paths

from trinityfs.catalog import CatalogTransaction
from trinityfs.fs.common import (
    TWO_LEVELS,
)
from trinityfs.fs.errors import (
    InvalidRequest,
    exists,
    is_a_directory,
    namespace_not_movable_to,
    not_a_directory,
    not_found,
    not_permitted,
    translate,
)
from trinityfs.fs.paths import (
    TrinityPath,
    parse_path,
    strip_protocol,
)


class WritingMixin:
    """The write side of `TrinityFileSystem` (see the module docstring)."""

    # -- writing -------------------------------------------------------------------------

    def _write_object(
        self, path: str, data: bytes, mode: str = "overwrite", base_version: int | None = None
    ) -> int | None:
        """Parse and commit written bytes; the new version (None if nothing changed)."""
        p = self._writable_object(path)
        parsed = self.model.parse(data, p.path)
        put_mode = "create" if mode == "create" else "upsert"

        def change(txn: CatalogTransaction) -> None:
            self.model.write(txn, p.namespace, p.name, parsed, path=p.path, mode=put_mode)

        return self._apply(p.path, change, base_version)

    def write_definition(
        self, path: str, data: bytes, mode: str = "overwrite", base_version: int | None = None
    ) -> int | None:
        """Write file content; with `base_version`, conflict if it changed since then.

        Returns the committed version, or None when nothing changed (or inside a
        transaction). `mode="create"` raises FileExistsError if the object exists.
        """
        return self._write_object(path, data, mode, base_version)

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        if mode not in ("overwrite", "create"):
            raise InvalidRequest(f"{path}: pipe_file mode must be 'overwrite' or 'create'")
        self._write_object(path, value, mode)

    def pipe(self, path, value=None, **kwargs):
        with self._batch():
            return super().pipe(path, value, **kwargs)

    def touch(self, path: str, truncate: bool = True, **kwargs: Any) -> None:
        """An empty definition; with truncate=False an existing object is left alone."""
        if not truncate and self.exists(path):
            return
        self._write_object(path, b"")

    def put(self, lpath, rpath, recursive=False, callback=None, maxdepth=None, **kwargs):
        with self._batch():
            if callback is None:
                return super().put(lpath, rpath, recursive=recursive, maxdepth=maxdepth, **kwargs)
            return super().put(
                lpath, rpath, recursive=recursive, callback=callback, maxdepth=maxdepth, **kwargs
            )

    def mkdir(
        self,
        path: str,
        create_parents: bool = True,
        properties: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Create a namespace (optionally with properties); FileExistsError if it exists."""
        p = parse_path(path)
        if p.is_versions_dir:
            raise exists(p.path, "/v is the versions directory")
        p = self._writable(path)
        if p.is_root:
            raise exists(p.path, "the root directory always exists")
        if p.depth > 1:
            raise not_permitted(p.path, "directories are namespaces, at the top level only")
        self._apply(p.path, lambda txn: txn.create_namespace(p.namespace, properties))

    def makedirs(
        self, path: str, exist_ok: bool = False, properties: dict[str, str] | None = None
    ) -> None:
        p = parse_path(path)
        if p.is_versions_dir or p.is_root:
            if not exist_ok:
                raise exists(p.path)
            if not p.is_versions_dir:
                self._resolve(p.path)  # the version must exist
            return
        if not p.writable:
            if exist_ok and self.isdir(p.path):
                return
            self._writable(path)
        if p.depth > 1:
            raise not_permitted(p.path, "directories are namespaces, at the top level only")

        def change(txn: CatalogTransaction) -> None:
            txn.create_namespace(p.namespace, properties, exist_ok=exist_ok)

        self._apply(p.path, change)

    def mkdirs(self, path: str, exist_ok: bool = False) -> None:
        self.makedirs(path, exist_ok=exist_ok)

    def rmdir(self, path: str) -> None:
        """Drop an empty namespace (OSError ENOTEMPTY if it holds tables or views)."""
        p = self._writable(path)
        if p.is_root:
            raise OSError(errno.EBUSY, "the root directory cannot be removed", p.path)
        if not p.is_namespace:
            raise not_a_directory(p.path)
        self._apply(p.path, lambda txn: txn.drop_namespace(p.namespace))

    def _drop(self, txn: CatalogTransaction, p: TrinityPath) -> None:
        with translate(p.path):
            self.model.remove(txn, p.namespace, p.name)

    def rm_file(self, path: str) -> None:
        p = self._writable(path)
        if not p.is_object:
            if p.depth > 2:
                raise not_found(p.path, TWO_LEVELS)
            raise is_a_directory(p.path, "use rmdir, or rm with recursive=True")
        self._apply(p.path, lambda txn: self._drop(txn, p))

    def _rm(self, path: str) -> None:
        self.rm_file(path)

    def rm(self, path, recursive: bool = False, maxdepth: int | None = None) -> None:
        """Delete files, and with recursive namespaces too: one commit in all."""
        with self._batch() as txn:
            paths = self.expand_path(path, recursive=recursive, maxdepth=maxdepth)
            parsed = [self._writable(p) for p in paths]
            dropped: set[str] = set()
            cascade = maxdepth is None
            for p in parsed:  # namespaces first: a cascade drops what is inside
                if p.is_root and not recursive:
                    raise is_a_directory(p.path, "use recursive=True")
                if p.is_namespace:
                    if not recursive:
                        raise is_a_directory(
                            p.path, "is a namespace: use rmdir, or rm with recursive=True"
                        )
                    if cascade:
                        with translate(p.path):
                            txn.drop_namespace(p.namespace, cascade=True)
                        dropped.add(p.namespace)
            for p in reversed(parsed):
                if p.is_object and p.namespace not in dropped:
                    with translate(p.path):
                        self._drop(txn, p)
                elif p.depth > 2:
                    raise not_found(p.path, TWO_LEVELS)
            if not cascade:
                for p in reversed(parsed):
                    if p.is_namespace:
                        with translate(p.path):
                            txn.drop_namespace(p.namespace)

    def _copy_pairs(
        self, path1, path2, recursive: bool, maxdepth: int | None
    ) -> list[tuple[str, str]]:
        """Source and destination paths, exactly as fsspec's `copy` computes them."""
        if isinstance(path1, list) and isinstance(path2, list):
            return list(zip(path1, path2, strict=True))
        source_is_str = isinstance(path1, str)
        paths1 = self.expand_path(path1, recursive=recursive, maxdepth=maxdepth)
        if source_is_str and (not recursive or maxdepth is not None):
            paths1 = [p for p in paths1 if not (trailing_sep(p) or self.isdir(p))]
            if not paths1:
                return []
        dest_is_dir = isinstance(path2, str) and (trailing_sep(path2) or self.isdir(path2))
        exist = source_is_str and (
            dest_is_dir and not trailing_sep(path1)
        )  # (paths are literal: glob characters are name characters)
        paths2 = other_paths(paths1, path2, exists=exist, flatten=not source_is_str)
        return list(zip(paths1, paths2, strict=True))

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        """Copy one definition (any version to the latest), or make the directory.

        The copy gets a fresh id, except when it restores the same object from an older
        version (`cp /v/99/ns/t /ns/t`), which keeps the id that version had. The
        destination's namespace is created when missing. Unchanged -> no commit.
        """
        src = self._resolve(path1)
        dst = self._writable(path2)
        if src.p.is_versions_dir or src.p.is_root or src.p.is_namespace:
            properties = None
            if src.p.is_namespace:
                properties = self.info(src.p.path)["properties"]
            elif not src.p.is_root:
                raise not_permitted(dst.path, "cannot copy /v itself")
            if not dst.is_root:
                self.makedirs(dst.path, exist_ok=True, properties=properties)
            return
        if not src.p.is_object:
            raise not_found(src.p.path, TWO_LEVELS)
        kind, msg = self._object(src)
        dst = self._writable_object(dst.path)
        same_object = (src.p.namespace, src.p.name) == (dst.namespace, dst.name)

        def change(txn: CatalogTransaction) -> None:
            self.model.copy(txn, kind, msg, dst.namespace, dst.name, keep_id=same_object)

        self._apply(dst.path, change)

    def copy(self, path1, path2, recursive=False, maxdepth=None, on_error=None, **kwargs):
        """fsspec's copy of literal paths (glob characters are name characters), as one
        commit; pass `fs.glob(pattern)` for a pattern."""
        with self._batch():
            pairs = self._copy_pairs(path1, path2, recursive, maxdepth)
            if not pairs:
                return None
            return super().copy(
                [a for a, _ in pairs],
                [b for _, b in pairs],
                recursive=recursive,
                maxdepth=maxdepth,
                on_error=on_error,
                **kwargs,
            )

    def expand_path(self, path, recursive=False, maxdepth=None, assume_literal=True, **kwargs):
        """fsspec's expand_path, literal by default: `rm`, `mv`, `cp`, `get` of an exact
        name never expand `* ? [ ]` (a name may hold them). Patterns: `glob`, or
        `expand_path(..., assume_literal=False)`."""
        return super().expand_path(
            path, recursive=recursive, maxdepth=maxdepth, assume_literal=assume_literal, **kwargs
        )

    def mv(
        self, path1, path2, recursive: bool = False, maxdepth: int | None = None, **kwargs: Any
    ) -> None:
        """Rename tables and views (keeping their ids) and namespaces: one commit.

        A directory moves with its content even without recursive=True (like POSIX mv).
        Moving out of an old version is refused (PermissionError EROFS): use cp.
        """
        if path1 == path2:
            if isinstance(path1, str):  # nothing to move, but never a success for a
                self.info(self._writable(path1).path)  # missing or read-only path
            return
        with self._batch() as txn:
            if isinstance(path1, str) and isinstance(path2, str):
                src, dst = self._writable(path1), self._writable(path2)
                fresh = False
                if src.is_namespace and dst.is_namespace:
                    with translate(dst.path):
                        fresh = not txn.namespace_exists(dst.namespace)
                if fresh:
                    with translate(src.path, lookup=True):
                        txn.describe_namespace(src.namespace)  # FileNotFoundError if missing
                    with translate(dst.path):
                        self.model.move_namespace(txn, src.namespace, dst.namespace)
                    return
            if isinstance(path1, str) and self.isdir(path1):
                recursive = True
            pairs = self._copy_pairs(path1, path2, recursive, maxdepth)
            moved: dict[str, str] = {}  # namespaces moved with their content: old -> new
            for p1, p2 in pairs:
                src = self._writable(p1)
                if src.is_root:
                    raise not_permitted(src.path, "the root directory cannot be moved")
                if src.is_namespace:
                    dst = self._writable(p2)
                    if dst.is_object:  # the mount's answer too (namespace_not_movable_to)
                        with translate(dst.path, lookup=True):
                            taken = txn.object_kind(dst.namespace, dst.name) is not None
                        raise namespace_not_movable_to(dst.path, taken)
                    if not dst.is_namespace:
                        raise not_permitted(
                            dst.path, "directories are namespaces, at the top level only"
                        )
                    with translate(src.path, lookup=True):
                        txn.describe_namespace(src.namespace)
                    with translate(dst.path):  # ids kept; into an existing one: merged
                        self.model.move_namespace(txn, src.namespace, dst.namespace, merge=True)
                    moved[src.namespace] = dst.namespace
                elif src.is_object:
                    dst = self._writable_object(p2)
                    if moved.get(src.namespace) == dst.namespace and src.name == dst.name:
                        continue  # moved with its namespace
                    self._rename(txn, src, dst)
                else:
                    raise not_found(src.path, TWO_LEVELS)

    def _rename(self, txn: CatalogTransaction, src: TrinityPath, dst: TrinityPath) -> None:
        with translate(src.path, lookup=True):
            if txn.object_kind(src.namespace, src.name) is None:
                raise not_found(src.path, f"no table or view {src.namespace}.{src.name}")
        with translate(dst.path):
            self.model.move(
                txn, (src.namespace, src.name), (dst.namespace, dst.name), make_namespace=True
            )

    # -- namespace properties ------------------------------------------------------------

    def properties(self, path: str) -> dict[str, str]:
        """The properties of a namespace (any version)."""
        info = self.info(path)
        if info.get("kind") != "namespace":
            raise not_a_directory(info["name"], "only namespaces have properties")
        return dict(info["properties"])

    def set_properties(
        self, path: str, updates: dict[str, str] | None = None, removals=()
    ) -> int | None:
        """Set and remove namespace properties: one commit (none if nothing changes)."""
        p = self._writable(path)
        if not p.is_namespace:
            raise not_a_directory(p.path, "only namespaces have properties")

        def change(txn: CatalogTransaction) -> None:
            self.model.set_properties(txn, p.namespace, updates, removals)

        return self._apply(p.path, change)

    def getxattr(self, path: str, attr: str) -> str:
        """A namespace property (OSError ENODATA if it is not set)."""
        props = self.properties(path)
        if attr not in props:
            raise OSError(errno.ENODATA, f"no property {attr!r}", strip_protocol(path))
        return props[attr]

    def listxattr(self, path: str) -> list[str]:
        return sorted(self.properties(path))

    def setxattrs(self, path: str, copy_kwargs: Any = None, **properties: str | None) -> None:
        """Set namespace properties; a value of None removes that property."""
        updates = {k: v for k, v in properties.items() if v is not None}
        removals = [k for k, v in properties.items() if v is None]
        self.set_properties(path, updates, removals)

    def removexattr(self, path: str, attr: str) -> None:
        self.getxattr(path, attr)
        self.set_properties(path, removals=[attr])


__all__ = ["WritingMixin"]
