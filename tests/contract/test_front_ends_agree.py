"""Contract suite (issue 12 item 5): each scenario runs through `trinity://`, the FUSE
mount and the CLI (`python -m trinityfs.cli` in a subprocess) on a fresh lakehouse, and
the catalog state that results (names, kinds, definitions, ids, properties, versions) is
the same whichever front end made it; reads of /v agree too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuse"))
from fuse_helpers import SKIP_REASON, mounted

FRONT_ENDS = ["fs", pytest.param("mount", marks=pytest.mark.fuse), "cli"]
TABLE = {"table_format": "ICEBERG", "properties": {"owner": "ops"}}
NEW = {"kind": "table", "definition": {"table_format": "DELTA"}}


def build(root: str) -> Lakehouse:
    lake = Lakehouse.create(root)
    lake.create_namespace("sales", {"tier": "gold"})  # 1
    lake.create_table("sales", "orders", TABLE)  # 2
    lake.create_view("sales", "big", {"properties": {"sql": "select 1"}})  # 3
    lake.create_namespace("empty")  # 4
    lake.export("2000-01-01", version=2)  # 5: named like a time
    lake.export("3", version=2)  # 6: named like a version
    return lake


def state(root: str) -> dict:
    """Everything a scenario may change, ids included."""
    snap = Lakehouse.open(root).snapshot()
    out: dict = {"version": snap.version}
    for ns in snap.list_namespaces():
        msg = snap.describe_namespace(ns)
        out[ns] = {"id": msg.id, "properties": dict(msg.properties)}
        for ref in snap.list_objects(ns):
            definition = snap.describe(ref.kind, ns, ref.name)
            out[f"{ns}/{ref.name}"] = (ref.kind, str(definition))
    return out


class FrontEnd:
    """One way in: `run(op, *paths)` returns (ok, text) for list/read ops."""

    def __init__(self, kind: str, root: str, base: Path):
        self.kind, self.root, self.base = kind, root, base
        self.fs = TrinityFileSystem(root=root, skip_instance_cache=True)
        self.mnt: Path | None = None

    def _cli(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "trinityfs.cli", "--root", self.root, *args],
            capture_output=True,
            input=stdin,
            timeout=120,
            env={**os.environ},
        )

    def _m(self, path: str) -> Path:
        assert self.mnt is not None
        return self.mnt / path.lstrip("/")

    def mv(self, src: str, dst: str) -> bool:
        if self.kind == "fs":
            self.fs.mv(src, dst)
            return True
        if self.kind == "mount":
            os.rename(self._m(src), self._m(dst))
            return True
        return self._cli("mv", src, dst).returncode == 0

    def rm(self, path: str) -> bool:
        if self.kind == "fs":
            self.fs.rm(path)
        elif self.kind == "mount":
            os.unlink(self._m(path))
        else:
            return self._cli("rm", path).returncode == 0
        return True

    def rmdir(self, path: str) -> bool:
        if self.kind == "fs":
            self.fs.rmdir(path)
        elif self.kind == "mount":
            os.rmdir(self._m(path))
        else:
            return self._cli("rmdir", path).returncode == 0
        return True

    def write(self, path: str, data: bytes) -> bool:
        """Write a definition; False when refused (nothing may be committed then)."""
        try:
            if self.kind == "fs":
                self.fs.pipe(path, data)
            elif self.kind == "mount":
                with open(self._m(path), "wb") as f:
                    f.write(data)
            else:
                return self._cli("put", "-", path, stdin=data).returncode == 0
        except (OSError, ValueError):
            return False
        return True

    def set_property(self, path: str, key: str, value: str) -> None:
        if self.kind == "fs":
            self.fs.set_properties(path, {key: value})
        elif self.kind == "mount":
            os.setxattr(self._m(path), f"user.{key}", value.encode())
        else:
            assert self._cli("props", path, f"{key}={value}").returncode == 0

    def ls(self, path: str) -> list[str]:
        if self.kind == "fs":
            return sorted(p.rsplit("/", 1)[1] for p in self.fs.ls(path, detail=False))
        if self.kind == "mount":
            return sorted(os.listdir(self._m(path)))
        result = self._cli("--json", "ls", path)
        assert result.returncode == 0, result.stderr
        return sorted(e["name"].rsplit("/", 1)[1] for e in json.loads(result.stdout))

    def cat(self, path: str) -> dict:
        if self.kind == "fs":
            return json.loads(self.fs.cat_file(path))
        if self.kind == "mount":
            return json.loads(self._m(path).read_bytes())
        result = self._cli("cat", path)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture(params=FRONT_ENDS)
def front(request, tmp_path) -> Iterator[FrontEnd]:
    root = str(tmp_path / "lake")
    build(root)
    fe = FrontEnd(request.param, root, tmp_path)
    if request.param != "mount":
        yield fe
        return
    if SKIP_REASON is not None:
        pytest.skip(SKIP_REASON)
    with mounted(root, tmp_path / "mnt", "-o", "latest_ttl=0") as m:
        fe.mnt = m.path
        yield fe


def _expected(scenario: Callable[[Lakehouse], None], tmp_path: Path) -> dict:
    """The state the catalog API itself gives for a scenario (the reference)."""
    root = str(tmp_path / "reference")
    lake = build(root)
    scenario(lake)
    return state(root)


def _same(got: dict, want: dict) -> None:
    # ids of new objects are random: compare them only where they must be kept
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == want[key], key


def test_rename_namespace_keeps_ids(front: FrontEnd, tmp_path) -> None:
    before = state(front.root)
    assert front.mv("/sales", "/sales2")
    after = state(front.root)
    assert after["version"] == before["version"] + 1
    assert after["sales2"] == before["sales"]  # the id and properties
    assert after["sales2/orders"] == before["sales/orders"]  # the table's id with it
    assert after["sales2/big"] == before["sales/big"]
    assert "sales" not in after


def test_rename_object_keeps_its_id(front: FrontEnd) -> None:
    before = state(front.root)
    assert front.mv("/sales/orders", "/empty/orders2")
    after = state(front.root)
    assert after["empty/orders2"] == before["sales/orders"]
    assert "sales/orders" not in after and after["version"] == before["version"] + 1


def test_replace_and_create(front: FrontEnd, tmp_path) -> None:
    before = state(front.root)
    assert front.write("/sales/orders", json.dumps(NEW).encode())
    assert front.write("/empty/t", json.dumps(NEW).encode())
    after = state(front.root)
    assert after["version"] == before["version"] + 2
    kind, text = after["sales/orders"]
    assert kind == "table" and "DELTA" in text
    assert before["sales/orders"][1].split("\n")[0] in text  # the id is kept (first field)
    assert front.cat("/empty/t")["definition"]["table_format"] == "DELTA"


def test_rm_and_rmdir(front: FrontEnd) -> None:
    before = state(front.root)
    assert front.rm("/sales/big")
    assert front.rmdir("/empty")
    after = state(front.root)
    assert "sales/big" not in after and "empty" not in after
    assert after["version"] == before["version"] + 2


def test_properties(front: FrontEnd) -> None:
    front.set_property("/sales", "owner", "ana")
    assert state(front.root)["sales"]["properties"] == {"tier": "gold", "owner": "ana"}


def test_bad_content_and_read_only_commit_nothing(front: FrontEnd) -> None:
    before = state(front.root)
    assert not front.write("/sales/orders", b"garbage")
    assert not front.write("/sales/orders", b'{"kind": "table"}{}')
    assert not front.write("/v/2/sales/x", json.dumps(NEW).encode())
    assert state(front.root) == before


def test_versions_listing_and_exports_named_like_selectors(front: FrontEnd) -> None:
    # the catalog's selectors listing: the export named "3" is listed as export:3 (a bare
    # "3" is version 3), each entry once, each resolving to itself
    listed = ["0", "1", "2", "3", "4", "5", "6", "latest", "2000-01-01", "export:3"]
    assert front.ls("/v") == sorted(listed)
    # the export named like a time is the export (version 2: no view yet), /v/3 version 3
    assert front.ls("/v/2000-01-01/sales") == ["orders"]
    assert front.ls("/v/3/sales") == ["big", "orders"]
    assert front.ls("/v/export:3/sales") == ["orders"]
    assert front.ls("/v/export:2000-01-01/sales") == ["orders"]


def test_time_paths_read_the_version_current_then(front: FrontEnd) -> None:
    lake = Lakehouse.open(front.root)
    when = lake.version_info(2).created_at_millis
    from datetime import UTC, datetime

    stamp = datetime.fromtimestamp(when / 1000, UTC).isoformat(timespec="milliseconds")
    stamp = stamp.replace("+00:00", "")
    assert front.ls(f"/v/{stamp}/sales") == ["orders"]
    assert front.cat(f"/v/{stamp}/sales/orders")["definition"]["table_format"] == "ICEBERG"
