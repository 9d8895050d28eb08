"""The corruption matrix: damage one file of a lakehouse, then read, fsck and commit.

Every file kind the format has (the latest and an older root, an inner node, a leaf,
namespace, table and view definitions, the lakehouse definition, the latest-version hint
and the oldest-version marker) gets every damage (deleted, truncated to 0 bytes, to half,
by one byte, bit flips spread over the file, one-bit flips inside stored keys). Each case
runs on a fresh copy of one pristine lakehouse, through a fresh `Lakehouse` handle, and is
judged on three counts:

- reads: every version whose tree reaches the file (and the latest) is read in full; the
  outcome is an error naming the file (or, for a deleted root, its version), or exactly
  the pristine answer. Anything else is a *silent wrong answer*.
- checkers: fsck and the independent checker (tests/stress/lakecheck.py) must flag every
  case whose reads failed.
- commits (docs/FORMAT-CHOICES.md, "What a commit verifies"): a commit through a fresh
  handle either fails, or lands a version whose every file verifies and whose content is
  exactly the pristine latest plus its change, or lands one that carries the damaged file
  forward by name untouched (the base reached it, the commit did not read it: the root,
  the lakehouse definition and every node it rewrote are read and verified); then reads
  of the new version and fsck name the file like they did for the base. Anything else
  is LANDED-CORRUPT (a damaged file the commit must have read, or new damage) or
  LANDED-WRONG (a new version with other content). For definitions a second commit
  reads the damaged object (replace / set properties): it must be refused.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from integrity_lakes import NO_FSYNC, OPEN
from integrity_lakes import SMALL_TREE as SMALL_TREE_LIMITS
from integrity_lakes import stored_files as _files

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, NotFoundError, TrinityError, VersionNotFoundError
from trinityfs.format.node_decode import decode_node
from trinityfs.format.paths import LATEST_HINT, OLDEST_VERSION, root_node_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stress"))
from lakecheck import reachable, read_state, verify_files

# uncompressed, so the key flips can find the keys' bytes
SMALL_TREE = {**SMALL_TREE_LIMITS, "properties": {"node-file.compression": "none"}}
SILENT = "SILENT-WRONG-ANSWER"
# name -> counts, printed at the end of the run by conftest.py
MATRIX_FIGURES: dict[str, dict[str, int]] = {}


@dataclass
class Pristine:
    path: Path
    latest: int
    oldest: int
    states: dict[int, object]
    targets: dict[str, str]  # kind -> location
    objects: dict[str, tuple[str, str | None]]  # definition kind -> (namespace, name)
    reached_by: dict[str, list[int]]  # location -> versions whose tree reaches it


@dataclass
class Outcome:
    case: str
    read: str  # correct | detected | unnamed-error | SILENT
    fsck_flags: bool
    independent_flags: bool
    # refused | landed-verified | landed-carrying-damage | LANDED-CORRUPT | LANDED-WRONG
    commit: str
    detail: str = ""
    # a commit reading the damaged definition: refused | READ-DAMAGED-LANDED | "" (n/a)
    reading_commit: str = ""
    # the same commit with verify="tree": refused | landed-verified | a failure (upper case)
    strict: str = ""


@dataclass
class Figures:
    outcomes: list[Outcome] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        c: Counter[str] = Counter()
        for o in self.outcomes:
            c["cases"] += 1
            c[f"read {o.read}"] += 1
            c[f"commit {o.commit}"] += 1
            if o.reading_commit:
                c[f"commit reading it {o.reading_commit}"] += 1
            c[f"strict commit {o.strict.partition(':')[0]}"] += 1
            if o.commit == "landed-carrying-damage":
                c[f"strict commit where the default one carried damage: {o.strict}"] += 1
            if o.read in ("detected", "unnamed-error") and not o.fsck_flags:
                c["fsck missed a failed read"] += 1
            if o.read in ("detected", "unnamed-error") and not o.independent_flags:
                c["independent checker missed a failed read"] += 1
        return dict(sorted(c.items()))

    def failures(self) -> list[Outcome]:
        return [
            o
            for o in self.outcomes
            if o.read in (SILENT, "unnamed-error")
            or o.commit in ("LANDED-CORRUPT", "LANDED-WRONG")
            or o.reading_commit == "READ-DAMAGED-LANDED"
            or o.strict not in ("refused", "landed-verified")
            or (o.read == "detected" and not (o.fsck_flags and o.independent_flags))
        ]


def build_pristine(path: Path) -> Pristine:
    """A small multi-level lakehouse with history, a dropped table, views and markers."""
    lake = Lakehouse.create(str(path), storage_options=NO_FSYNC, **SMALL_TREE)
    lake.create_namespace("ns1", {"owner": "alice"})
    lake.create_namespace("ns2")
    for i in range(0, 80, 2):
        lake.create_table("ns1", f"t{i:02d}", {"properties": {"n": str(i)}})
    lake.create_view("ns2", "v1", {"properties": {"sql": "select 1"}})
    lake.drop_table("ns1", "t04")  # a flip must not make it reappear
    lake.create_table("ns2", "last", {"properties": {"n": "last"}})
    lake.storage.write(OLDEST_VERSION, b"0\n")
    latest = lake.latest_version()
    states = {v: read_state(lake.at(v)) for v in range(0, latest + 1)}

    storage = lake.storage
    reached_by: dict[str, list[int]] = {}
    inner = leaf = None
    for v in range(0, latest + 1):
        todo = [root_node_file(v)]
        seen: set[str] = set()
        while todo:
            loc = todo.pop()
            if loc in seen:
                continue
            seen.add(loc)
            nf = decode_node(storage.read(loc), None, loc)
            if v == latest and loc != root_node_file(v):
                if nf.children is not None:
                    inner = inner or loc
                else:
                    leaf = leaf or loc
            todo.extend(nf.children or ())
            seen.update(nf.values)
            seen.update(val for _k, val, _t in nf.buffer if val is not None)
            if "lakehouse_def" in nf.system:
                seen.add(nf.system["lakehouse_def"])
        for loc in seen:
            reached_by.setdefault(loc, []).append(v)
    assert inner and leaf, "the pristine tree must have inner nodes and leaves"
    view = lake.snapshot()
    defs = {ref.kind: loc for ref, loc in view.iter_all()}
    objects = {f"{ref.kind} definition": (ref.namespace, ref.name) for ref, _loc in view.iter_all()}
    targets = {
        "root (latest)": root_node_file(latest),
        "root (older)": root_node_file(latest - 3),
        "inner node": inner,
        "leaf": leaf,
        "namespace definition": defs["namespace"],
        "table definition": defs["table"],
        "view definition": defs["view"],
        "lakehouse definition": lake.engine.snapshot().lakehouse_def_location,
        "hint": LATEST_HINT,
        "marker": OLDEST_VERSION,
    }
    for v in range(0, latest + 1):
        reached_by.setdefault(root_node_file(v), []).append(v)
    return Pristine(path, latest, 0, states, targets, objects, reached_by)


def damages(data: bytes, flips: int) -> list[tuple[str, bytes | None]]:
    """(name, new content or None for deleted) for one file's bytes."""
    out: list[tuple[str, bytes | None]] = [
        ("deleted", None),
        ("truncated to 0 bytes", b""),
        ("truncated to half", data[: len(data) // 2]),
        ("truncated by 1 byte", data[:-1]),
    ]
    n = len(data)
    for i in range(flips):
        offset = min(n - 1, (i * n) // flips + (i * 7919) % max(1, n // flips))
        bit = i % 8
        flipped = bytearray(data)
        flipped[offset] ^= 1 << bit
        out.append((f"bit {bit} flipped at byte {offset}", bytes(flipped)))
    # one-bit flips inside stored keys that keep the key table in order
    for name in (b"t02", b"t10", b"last", b"v1"):
        at = data.find(name)
        if at >= 0:
            flipped = bytearray(data)
            flipped[at + len(name) - 1] ^= 0x01
            out.append((f"key flip in {name.decode()!r} at byte {at}", bytes(flipped)))
    return out


def independent_check(storage, versions: list[int]) -> list[str]:
    """Problems the stress suites' independent checker finds in these versions."""
    try:
        reach = reachable(storage, versions)
    except Exception as exc:  # a root or node it cannot walk
        return [f"walk: {exc}"]
    present = {e.location for e in storage.list("")}
    problems = [f"missing: {loc}" for loc in sorted(reach.all - present)]
    problems += [f"{loc}: {why}" for loc, why in verify_files(storage, reach.all & present)]
    return problems


def _marker_malformed(case_dir: Path) -> bool:
    """The independent check of the oldest marker: present and not a decimal version."""
    marker = case_dir / OLDEST_VERSION
    if not marker.exists():
        return False
    text = marker.read_bytes().strip()
    return not (text.isascii() and text.isdigit() and 0 < len(text) <= 20)


def _names(exc: BaseException, location: str, versions: list[int]) -> bool:
    text = str(exc)
    if location in text or location.rpartition("/")[2] in text:
        return True
    # a deleted root is a version that no longer exists: the error names the version
    return isinstance(exc, VersionNotFoundError) and any(f"{v}" in text for v in versions)


def run_case(pristine: Pristine, work: Path, kind: str, name: str, content: bytes | None):
    location = pristine.targets[kind]
    case_dir = work / "case"
    _damaged_copy(pristine, case_dir, location, content)
    url = str(case_dir)
    reaching = sorted(pristine.reached_by.get(location, []))
    # the newest and oldest versions reaching the file, and the latest
    versions = sorted({*reaching[:1], *reaching[-1:], pristine.latest})

    # a lakehouse whose oldest marker is damaged is refused at open, naming the marker
    # (it bounds what may be read): every reader, fsck and committer stop there
    try:
        Lakehouse.open(url, storage_options=NO_FSYNC)
    except TrinityError as exc:
        named = _names(exc, location, versions)
        return Outcome(
            f"{kind}: {name}",
            "detected" if named else "unnamed-error",
            True,  # `trinityfs fsck` exits 1 with the same error
            _marker_malformed(case_dir),
            "refused",
            str(exc),
            "refused" if kind in pristine.objects else "",
            "refused",
        )

    # reads
    read = "correct"
    detail = ""
    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    try:
        latest = lake.latest_version()
        if latest not in (pristine.latest, pristine.latest - 1) or (
            latest != pristine.latest and location != root_node_file(pristine.latest)
        ):
            read, detail = SILENT, f"latest version {latest}"
    except TrinityError as exc:
        read, detail = (
            ("detected" if _names(exc, location, versions) else "unnamed-error"),
            str(exc),
        )
    for v in versions:
        try:
            state = read_state(lake.at(v))
        except TrinityError as exc:
            if read == "correct":
                named = _names(exc, location, versions)
                read, detail = ("detected" if named else "unnamed-error"), str(exc)
            continue
        if state != pristine.states[v] and read != "detected":
            read, detail = SILENT, f"version {v} differs"

    # checkers
    report = Lakehouse.open(url, storage_options=NO_FSYNC).fsck()
    fsck_flags = not report.ok or bool(report.warnings)  # a lost latest root: hint ahead
    independent_flags = bool(independent_check(lake.storage, versions))

    # a commit with whole-tree verification (verify="tree"): refused naming the file
    # whenever the tree it would build on reaches damage, else lands fully verified
    detectable = read != "correct" or fsck_flags or independent_flags
    before = _files(case_dir)
    markers = {m: (case_dir / m).read_bytes() for m in (LATEST_HINT, OLDEST_VERSION) if m in before}
    strict = strict_commit(pristine, url, kind, location, versions, detectable)
    if strict != "refused":  # the default commit's turn, on the same damaged lakehouse
        for new in set(_files(case_dir)) - set(before):
            (case_dir / new).unlink()
        for marker, data in markers.items():
            (case_dir / marker).write_bytes(data)
        assert _files(case_dir) == before

    # commits
    committer = Lakehouse.open(url, storage_options=NO_FSYNC)
    try:
        new_version = committer.create_table("ns1", "after_damage")
    except (TrinityError, NotFoundError):
        commit = "refused"
    else:
        commit, why = judge_landed(pristine, lake, kind, new_version)
        detail = why or detail
    reading_commit = ""
    if kind in pristine.objects:
        reading_commit = commit_reading(pristine, url, kind)
    return Outcome(
        f"{kind}: {name}",
        read,
        fsck_flags,
        independent_flags,
        commit,
        detail,
        reading_commit,
        strict,
    )


def _damaged_copy(pristine: Pristine, case_dir: Path, location: str, content: bytes | None):
    """A fresh copy of the pristine lakehouse with `location` damaged (None: deleted)."""
    if case_dir.exists():
        shutil.rmtree(case_dir)
    shutil.copytree(pristine.path, case_dir)
    target = case_dir / location
    if content is None:
        target.unlink()
    else:
        target.write_bytes(content)


def strict_commit(
    pristine: Pristine, url: str, kind: str, location: str, versions, detectable: bool
) -> str:
    """Outcome of a commit through a `verify="tree"` handle: "refused" (CorruptFileError
    naming the damaged file, nothing written), "landed-verified", or a failure:
    STRICT-LANDED-OVER-DAMAGE (the version it built on reaches the damaged file and the
    damage is detectable: a read, fsck or the independent checker flags it),
    STRICT-REFUSED-UNNAMED, STRICT-WROTE-FILES, LANDED-CORRUPT, LANDED-WRONG."""
    before = _files(Path(url))
    lake = Lakehouse.open(url, storage_options=NO_FSYNC, verify="tree")
    try:
        base = lake.latest_version()
    except TrinityError:
        return "refused"  # no latest version to build on (e.g. every root unreadable)
    try:
        new_version = lake.create_table("ns1", "after_damage")
    except (TrinityError, NotFoundError) as exc:
        # damage is named: CorruptFileError with the version, or (a missing file found
        # by the commit's own reads) StorageFileNotFoundError
        named = _names(exc, location, versions) and (
            not isinstance(exc, CorruptFileError) or exc.version is not None
        )
        if not named and base in pristine.reached_by.get(location, []):
            return f"STRICT-REFUSED-UNNAMED: {exc}"
        return "refused" if _files(Path(url)) == before else "STRICT-WROTE-FILES"
    if base in pristine.reached_by.get(location, []) and detectable:
        return "STRICT-LANDED-OVER-DAMAGE"
    commit, why = judge_landed(pristine, lake, kind, new_version)
    return commit if commit == "landed-verified" else f"{commit}: {why}"


# Files every commit reads (and so verifies): a damage to them must refuse the commit.
READ_BY_EVERY_COMMIT = ("root (latest)", "lakehouse definition")


def judge_landed(pristine: Pristine, lake, kind: str, new_version: int) -> tuple[str, str]:
    """Outcome of a commit that landed `new_version` while `kind`'s file is damaged."""
    location = pristine.targets[kind]
    bad = independent_check(lake.storage, [new_version])
    short = location.rpartition("/")[2]
    if bad:
        carried = (
            all(short in p for p in bad)
            and kind not in READ_BY_EVERY_COMMIT
            and pristine.latest in pristine.reached_by.get(location, [])
        )
        return ("landed-carrying-damage" if carried else "LANDED-CORRUPT"), bad[0]
    try:
        state = read_state(Lakehouse.open(lake.storage.url, **OPEN).at(new_version))
    except TrinityError as exc:
        return "LANDED-CORRUPT", f"version {new_version} unreadable: {exc}"
    # its base: the latest, or the one before when the latest root was deleted
    expected = pristine.states[new_version - 1]
    ns_props, objects = state.get("ns1", ({}, {}))
    if objects.pop("after_damage", None) is None or {**state, "ns1": (ns_props, objects)} != (
        expected
    ):
        return "LANDED-WRONG", f"version {new_version} is not its base plus the new table"
    return "landed-verified", ""


def commit_reading(pristine: Pristine, url: str, kind: str) -> str:
    """A commit that reads the damaged definition must be refused."""
    namespace, name = pristine.objects[kind]
    lake = Lakehouse.open(url, **OPEN)
    try:
        if name is None:
            lake.set_namespace_properties(namespace, {"after": "damage"})
        elif kind == "view definition":
            lake.replace_view(namespace, name, {"properties": {"after": "damage"}})
        else:
            lake.replace_table(namespace, name, {"properties": {"after": "damage"}})
    except (TrinityError, NotFoundError):
        return "refused"
    return "READ-DAMAGED-LANDED"


def run_matrix(work: Path, flips: int = 18, kinds: tuple[str, ...] | None = None) -> Figures:
    """Every damage of every target kind (or of `kinds`), each on a fresh copy."""
    pristine = build_pristine(work / "pristine")
    figures = Figures()
    for kind, location in pristine.targets.items():
        if kinds is not None and kind not in kinds:
            continue
        data = (pristine.path / location).read_bytes()
        for name, content in damages(data, flips):
            figures.outcomes.append(run_case(pristine, work, kind, name, content))
    return figures
