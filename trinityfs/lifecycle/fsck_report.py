"""fsck's report and what turns findings into it: the problem and report types, the
confirmation of errors by a second pass, and the attribution of each missing or corrupt
file to every kept version whose tree reaches it (trinityfs/lifecycle/fsck.py runs the
checks, trinityfs/lifecycle/fsck_checks.py holds them)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from trinityfs.format.keys import KEY_LAKEHOUSE_DEF
from trinityfs.format.nodefile import NodeFile
from trinityfs.format.paths import root_node_file
from trinityfs.lifecycle.inventory import StoredFile


@dataclass(frozen=True)
class FsckProblem:
    kind: str  # missing, corrupt, tree, gap, marker, export, transaction, ...
    location: str
    message: str
    version: int | None = None
    versions: tuple[int, ...] = ()  # every kept version that reaches the file

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "location": self.location,
            "message": self.message,
            "version": self.version,
            "versions": list(self.versions),
        }


@dataclass
class FsckReport:
    url: str
    oldest_version: int | None = None
    latest_version: int | None = None
    versions_checked: int = 0
    exports_checked: list[str] = field(default_factory=list)
    transactions: list[dict] = field(default_factory=list)
    nodes_checked: int = 0
    definitions_checked: int = 0
    unverified_files: int = 0
    affected_versions: dict[int, list[str]] = field(default_factory=dict)
    errors: list[FsckProblem] = field(default_factory=list)
    warnings: list[FsckProblem] = field(default_factory=list)
    orphans: list[StoredFile] = field(default_factory=list)
    unknown_files: list[StoredFile] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)
    elapsed_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def exit_status(self) -> int:
        return 0 if self.ok else 1

    @property
    def orphan_bytes(self) -> int:
        return sum(f.size for f in self.orphans)

    def error(self, kind: str, location: str, message: str, version: int | None = None) -> None:
        self.errors.append(FsckProblem(kind, location, message, version))

    def warn(self, kind: str, location: str, message: str, version: int | None = None) -> None:
        self.warnings.append(FsckProblem(kind, location, message, version))

    def to_dict(self) -> dict:
        return {
            "url": self.url,
            "ok": self.ok,
            "oldest_version": self.oldest_version,
            "latest_version": self.latest_version,
            "versions_checked": self.versions_checked,
            "exports_checked": self.exports_checked,
            "transactions": self.transactions,
            "nodes_checked": self.nodes_checked,
            "definitions_checked": self.definitions_checked,
            "unverified_files": self.unverified_files,
            "affected_versions": {str(v): locs for v, locs in self.affected_versions.items()},
            "errors": [p.to_dict() for p in self.errors],
            "warnings": [p.to_dict() for p in self.warnings],
            "orphans": [f.to_dict() for f in self.orphans],
            "orphan_bytes": self.orphan_bytes,
            "unknown_files": [f.to_dict() for f in self.unknown_files],
            "requests": self.requests,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


def confirmed(first: FsckReport, second: FsckReport) -> FsckReport:
    """`second` with the errors both passes found; the others become warnings."""
    seen_first = {(p.kind, p.location) for p in first.errors}
    kept = [p for p in second.errors if (p.kind, p.location) in seen_first]
    kept_keys = {(p.kind, p.location) for p in kept}
    once = [p for p in (*first.errors, *second.errors) if (p.kind, p.location) not in kept_keys]
    for problem in dict.fromkeys(once):
        second.warn(
            "changed",
            problem.location,
            f"seen in one of two passes only (the lakehouse changed while it was checked: "
            f"an expiration, an export dropped or a commit): {problem.kind}: {problem.message}",
            problem.version,
        )
    second.errors = kept
    locations = {p.location for p in kept}
    second.affected_versions = {
        v: [loc for loc in locs if loc in locations]
        for v, locs in second.affected_versions.items()
        if any(loc in locations for loc in locs)
    }
    return second


def pointers(nf: NodeFile) -> list[str]:
    out = list(nf.children or ())
    out.extend(nf.values)
    out.extend(value for _key, value, _txn in nf.buffer if value is not None)
    if KEY_LAKEHOUSE_DEF in nf.system:
        out.append(nf.system[KEY_LAKEHOUSE_DEF])
    return out


def attribute_to_versions(
    report: FsckReport, refs: dict[str, list[str]], oldest: int, latest: int
) -> None:
    """Name, for each missing or corrupt file, every kept version whose tree reaches it."""
    bad = {p.location for p in report.errors if p.kind in ("missing", "corrupt")}
    if not bad:
        return
    below: dict[str, frozenset[str]] = {}
    entered: set[str] = set()  # a ring of node files (a lie) is expanded once, not forever

    def bad_below(start: str) -> frozenset[str]:
        # iterative post-order over the DAG of node files (shared subtrees once)
        stack = [(start, False)]
        while stack:
            loc, expanded = stack.pop()
            if loc in below:
                continue
            targets = refs.get(loc, ())
            if not expanded:
                if loc in entered:
                    continue
                entered.add(loc)
                stack.append((loc, True))
                stack.extend((t, False) for t in targets if t in refs and t not in below)
                continue
            found = {loc} if loc in bad else set()
            for t in targets:
                found |= below.get(t, frozenset({t} & bad))
            below[loc] = frozenset(found)
        return below[start]

    reached: dict[str, list[int]] = {}
    for version in range(oldest, latest + 1):
        root = root_node_file(version)
        files = bad_below(root) if root in refs else frozenset({root} & bad)
        for loc in files:
            reached.setdefault(loc, []).append(version)
        if files:
            report.affected_versions[version] = sorted(files)
    report.errors = [
        replace(p, versions=tuple(reached.get(p.location, ()))) if p.location in reached else p
        for p in report.errors
    ]
    for p in report.errors:
        if p.version is not None and p.kind not in ("missing", "corrupt"):
            report.affected_versions.setdefault(p.version, []).append(p.location)
