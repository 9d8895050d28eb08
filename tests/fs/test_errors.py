"""The one mapping of trinityfs errors to OSError / errno."""

from __future__ import annotations

import errno

import pytest

from trinityfs import errors as e
from trinityfs.fs.errors import (
    CommitConflict,
    InvalidRequest,
    errno_of,
    message_of,
    to_os_error,
    translate,
)


@pytest.mark.parametrize(
    "exc, cls, code",
    [
        (e.NamespaceNotFoundError("x"), FileNotFoundError, errno.ENOENT),
        (e.ObjectNotFoundError("x"), FileNotFoundError, errno.ENOENT),
        (e.VersionNotFoundError("x"), FileNotFoundError, errno.ENOENT),
        (e.LakehouseNotFoundError("x"), FileNotFoundError, errno.ENOENT),
        (e.StorageFileNotFoundError("a/b"), OSError, errno.EIO),
        (e.AlreadyExistsError("x"), FileExistsError, errno.EEXIST),
        (e.ReadOnlyError("x"), PermissionError, errno.EROFS),
        (e.InvalidNameError("x"), InvalidRequest, errno.EINVAL),
        (e.InvalidArgumentError("x"), InvalidRequest, errno.EINVAL),
        (e.NamespaceNotEmptyError("x"), OSError, errno.ENOTEMPTY),
        (e.CommitConflictError("k", 3), CommitConflict, errno.EBUSY),
        (e.CommitRetriesExhaustedError("x"), BlockingIOError, errno.EAGAIN),
        (e.TransactionExpiredError("x"), TimeoutError, errno.ETIMEDOUT),
        (e.CorruptFileError("a", "bad"), OSError, errno.EIO),
        (e.UnsupportedFormatVersionError("x"), OSError, errno.ENOTSUP),
        (e.UnsupportedStorageError("x"), OSError, errno.ENOTSUP),
        (e.AmbiguousWriteError("x"), OSError, errno.EIO),
        (e.TreeInvariantError(["p"]), OSError, errno.EIO),
    ],
)
def test_mapping(exc, cls, code):
    mapped = to_os_error(exc, "/ns/t")
    assert type(mapped) is cls or (cls is OSError and type(mapped) is OSError)
    assert errno_of(mapped) == code
    assert str(exc) in message_of(mapped)


def test_invalid_name_while_looking_up_is_not_found():
    mapped = to_os_error(e.InvalidNameError("bad"), "/x y", lookup=True)
    assert isinstance(mapped, FileNotFoundError)


def test_translate_chains_the_cause():
    with pytest.raises(FileExistsError) as info, translate("/ns"):
        raise e.AlreadyExistsError("namespace 'ns' already exists")
    assert isinstance(info.value.__cause__, e.AlreadyExistsError)
    assert info.value.filename == "/ns"
    assert message_of(info.value) == "/ns: namespace 'ns' already exists"


def test_commit_conflict_names_the_object():
    class Keys:
        def decode(self, key):
            from trinityfs.format.keys import ObjectKey

            return ObjectKey("table", "sales", "orders")

    mapped = to_os_error(
        e.CommitConflictError("C===sales", 7), keys=Keys(), path_of=lambda ns, n: f"/{ns}/{n}"
    )
    assert mapped.object == "table sales.orders" and mapped.path == "/sales/orders"
    assert mapped.version == 7 and mapped.key == "C===sales"
    assert "table sales.orders (/sales/orders): changed by version 7" in str(mapped)


def test_errno_and_message_of_plain_exceptions():
    assert errno_of(ValueError("x")) == errno.EINVAL
    assert errno_of(RuntimeError("x")) == errno.EIO
    assert message_of(KeyError("missing")) == "missing"
    assert message_of(FileNotFoundError(errno.ENOENT, "gone", "/a")) == "/a: gone"
