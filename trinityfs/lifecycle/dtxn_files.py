"""The stored side of a distributed transaction: its file and its running root's row.

A transaction file (`txn-<id>.binpb`, FORMAT.md section 6) is a TransactionDef with a
checksum trailer; it is read back verified (`decode_transaction_def`): a damaged or
foreign file, or one living longer than the lakehouse allows (`lifetime_bound`), is
CorruptFileError. Ids are Unicode NFC; the closing claim of a transaction
(`claim_location`) is another transaction file (lifecycle/dtxn.py closes with it). The
running root's `trinityfs_dependencies` row carries the conflict dependencies as JSON.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata

from google.protobuf import unknown_fields

from trinityfs import jsontext
from trinityfs.errors import (
    CorruptFileError,
    InvalidArgumentError,
    InvalidNameError,
    StorageFileNotFoundError,
    TransactionNotFoundError,
)
from trinityfs.format.definitions import decode_definition, encode_definition
from trinityfs.format.integrity import add_checksum_trailer, split_checksum_trailer
from trinityfs.format.paths import parse_root_node_file, transaction_location
from trinityfs.format.trinitylake_pb2 import LakehouseDef, TransactionDef
from trinityfs.txn.conflicts import Dependencies
from trinityfs.txn.engine import Engine, now_millis

# the running root's system row holding the dependencies (readers ignore unknown rows)
DEPENDENCIES_ROW = "trinityfs_dependencies"

# The longest a transaction may still live: 30 days. `begin` refuses a longer ttl, and
# a transaction file expiring more than this after now is refused as corrupt and pins
# nothing against expiration (docs/FORMAT-CHOICES.md "Closing a distributed transaction").
MAX_TXN_LIFETIME_MILLIS = 30 * 24 * 3600 * 1000


def lifetime_bound(ldef: LakehouseDef | None) -> int:
    """The longest a transaction of this lakehouse may live: 30 days, or its configured
    txn_ttl_millis when that is longer (FORMAT.md allows any; the lakehouse's own policy
    is the authority, so its honest transactions are never refused)."""
    ttl = ldef.txn_ttl_millis if ldef is not None else 0
    return max(MAX_TXN_LIFETIME_MILLIS, ttl)


# The closing claim of transaction <id>: the transaction file of id <id>~closing, created
# (create-if-absent) by the commit or abort that closes the transaction, before it acts.
# One claim per transaction, so a commit and an abort (or two commits) never both act;
# a save or load that finds it is refused. It is born expired (expire_at_millis one
# millisecond after began_at_millis): expiration keeps it (and its base) for the grace
# period (never shorter than the commit budget), then removes it, like any transaction
# that just expired. docs/FORMAT-CHOICES.md "Closing a distributed transaction".
CLAIM_SUFFIX = "~closing"


def is_claim(txn_id: str) -> bool:
    """Whether the transaction file of id `txn_id` (`txn-<id>.binpb`) is a closing claim,
    not a transaction: fsck and expiration can tell them apart (a claim is born expired
    and kept, with its base, for the grace period; it is no transaction to report)."""
    return txn_id.endswith(CLAIM_SUFFIX)


def canonical_id(txn_id: str, *, new: bool = False) -> str:
    """A transaction id in Unicode NFC (ids that print the same name one transaction).
    A `new` id must already be NFC: InvalidNameError names the spelling to use."""
    if not isinstance(txn_id, str):
        transaction_location(txn_id)  # raises the typed error for a non-str id
    nfc = unicodedata.normalize("NFC", txn_id)
    if new and nfc != txn_id:
        raise InvalidNameError(
            f"invalid transaction id {txn_id!r}: not in Unicode NFC form; it looks the same "
            f"as {nfc!r}, which is the spelling to use"
        )
    if new and nfc.endswith(CLAIM_SUFFIX):
        raise InvalidNameError(
            f"invalid transaction id {txn_id!r}: ids ending in {CLAIM_SUFFIX!r} are reserved "
            "(they name the closing claims of transactions)"
        )
    if new:
        transaction_location(nfc)
    return nfc


def claim_location(txn_id: str) -> str:
    """Where the closing claim of transaction `txn_id` is created: the transaction file of
    id `<id>~closing`, or, for an id too long to take the suffix (valid ids before claims
    existed), of id `<sha256 of the id>~closing`, so every valid id can still close."""
    try:
        return transaction_location(txn_id + CLAIM_SUFFIX)
    except InvalidNameError:
        transaction_location(txn_id)  # the id itself is invalid: that error
        digest = hashlib.sha256(txn_id.encode()).hexdigest()
        return transaction_location(digest + CLAIM_SUFFIX)


def encode_transaction_def(tdef: TransactionDef) -> bytes:
    """A transaction file's bytes: the TransactionDef and a checksum trailer (its name is
    fixed and the file is rewritten, so it cannot carry a content hash in its name)."""
    return add_checksum_trailer(encode_definition(tdef))


def decode_transaction_def(
    data: bytes, location: str, max_lifetime_millis: int = MAX_TXN_LIFETIME_MILLIS
) -> TransactionDef:
    """The TransactionDef stored at `location`, verified: CorruptFileError naming the file
    when its checksum does not match, or (a file without one: another writer's, or
    trinityfs before checksums) when it is not a complete transaction of that name."""
    body, verified = split_checksum_trailer(location, bytes(data))
    tdef = decode_definition(body, TransactionDef, location)
    problem = None if verified else _structural_problem(tdef)
    if problem is None:
        problem = _lifetime_problem(tdef, max_lifetime_millis)
    if problem is None:
        try:
            named = transaction_location(tdef.id)
        except InvalidArgumentError:
            named = None
        if named != location:
            problem = f"holds transaction id {tdef.id[:80]!r}, not the one its name gives"
    if problem is not None:
        raise CorruptFileError(location, f"TransactionDef file: {problem}")
    return tdef


def _structural_problem(tdef: TransactionDef) -> str | None:
    """What a file without a checksum must satisfy: a bit flip in the trailer's head, or
    a truncation, leaves an unknown field or drops the last fields."""
    if len(unknown_fields.UnknownFieldSet(tdef)):
        return "unknown or damaged fields (a damaged checksum?)"
    if parse_root_node_file(tdef.beginning_root_node_file_path) is None:
        return f"beginning root {tdef.beginning_root_node_file_path[:80]!r} is not a root"
    if not tdef.running_root_node_file_path:
        return "no running root (truncated?)"
    if not 0 < tdef.began_at_millis < tdef.expire_at_millis:
        return (
            f"began_at_millis {tdef.began_at_millis} and expire_at_millis "
            f"{tdef.expire_at_millis} are not a lifetime (truncated?)"
        )
    return None


def _lifetime_problem(tdef: TransactionDef, bound: int) -> str | None:
    """An expiry more than `bound` (lifetime_bound) after now: such a file would pin its
    base version against expiration for as long as it says. (Measured from now, not from
    began_at_millis: a bulk load's lease, catalog/bulk.py, renews its expiry.)"""
    ahead = tdef.expire_at_millis - now_millis()
    if ahead > bound:
        return (
            f"expire_at_millis {tdef.expire_at_millis} is {ahead} ms after now, above the "
            f"maximum lifetime of a transaction ({bound} ms)"
        )
    return None


def read_transaction_def(engine: Engine, txn_id: str) -> TransactionDef:
    """The stored TransactionDef of `txn_id`; TransactionNotFoundError if there is none."""
    txn_id = canonical_id(txn_id)
    location = transaction_location(txn_id)
    try:
        data = engine.storage.read(location)
    except StorageFileNotFoundError:
        raise TransactionNotFoundError(
            f"no distributed transaction {txn_id!r} (never begun, committed or aborted)"
        ) from None
    try:
        return decode_transaction_def(data, location)
    except CorruptFileError:
        bound = lifetime_bound(engine.snapshot().lakehouse_def)
        if bound == MAX_TXN_LIFETIME_MILLIS:
            raise
        return decode_transaction_def(data, location, bound)  # a lakehouse TTL > 30 days


def dependencies_to_json(deps: Dependencies, txn_id: str, base: int) -> str:
    """The dependencies row of a running root; it also names the transaction that
    saved it and its base version (checked by `load`; rows saved before have neither)."""
    return json.dumps(
        {
            "txn": txn_id,
            "base": base,
            "written": sorted(deps.written),
            "must_exist": sorted(deps.must_exist),
            # single keys as one-key ranges: the layout saved transactions already use
            "unchanged_ranges": [[k, k + "\x00"] for k in sorted(deps.unchanged_keys)]
            + [list(r) for r in deps.unchanged_ranges],
            "read_keys": sorted(deps.read_keys),
            "read_ranges": [list(r) for r in deps.read_ranges],
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def dependencies_from_json(text: str | None, location: str) -> tuple[Dependencies, dict]:
    """(the dependencies, {"txn": id, "base": version} as far as the row names them)."""
    deps = Dependencies()
    if not text:
        return deps, {}
    try:
        data = jsontext.loads(text)
        saved_by = {k: data[k] for k in ("txn", "base") if k in data}
        deps.written = set(data.get("written", ()))
        deps.must_exist = set(data.get("must_exist", ()))
        for lo, hi in data.get("unchanged_ranges", ()):
            if isinstance(lo, str) and hi == lo + "\x00":
                deps.unchanged_keys.add(lo)
            else:
                deps.unchanged_ranges.append((lo, hi))
        deps.read_keys = set(data.get("read_keys", ()))
        deps.read_ranges = [(lo, hi) for lo, hi in data.get("read_ranges", ())]
    except (ValueError, TypeError, AttributeError) as exc:
        raise CorruptFileError(location, f"unreadable {DEPENDENCIES_ROW} row: {exc}") from None
    return deps, saved_by
