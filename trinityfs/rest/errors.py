"""The REST error model: every failure becomes `{"error": {message, type, code}}`.

Errors are mapped here once: trinityfs' typed errors and PyIceberg's catalog exceptions
(raised by TrinityCatalog) to the status codes and exception type names of the Iceberg
REST catalog spec (open-api/rest-catalog-open-api.yaml), so that clients raise the
matching exception (PyIceberg maps 404 to NoSuchTableError, 409 to CommitFailedException
or AlreadyExists, ...). Bad input is always a 4xx naming the problem, never a 500.
"""

from __future__ import annotations

import json
import logging

from pydantic import ValidationError
from pyiceberg import exceptions as ice

from trinityfs import errors as tfs

log = logging.getLogger("trinityfs.rest")

MAX_MESSAGE_CHARS = 2000


class RestError(Exception):
    """An error response: HTTP status, the spec's exception type name, a message."""

    def __init__(self, status: int, type_: str, message: str):
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message

    def body(self) -> bytes:
        message = " ".join(self.message.split())
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS] + "..."
        return json.dumps(
            {"error": {"message": message, "type": self.type, "code": self.status}}
        ).encode()


def bad_request(message: str) -> RestError:
    return RestError(400, "BadRequestException", message)


def forbidden(message: str) -> RestError:
    return RestError(403, "ForbiddenException", message)


def not_found(type_: str, message: str) -> RestError:
    return RestError(404, type_, message)


def unauthorized(message: str) -> RestError:
    return RestError(401, "NotAuthorizedException", message)


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return "; ".join(parts) + more


def validation_detail(exc: BaseException) -> str:
    """What a PyIceberg ValidationError (which wraps pydantic's) says is wrong, without
    quoting the input (a stored file's content)."""
    cause = exc.__cause__ if exc.__cause__ is not None else (exc.args[0] if exc.args else None)
    if isinstance(cause, ValidationError):
        return _validation_message(cause)
    return type(exc).__name__


# Order matters: the first matching class wins (subclasses before their bases).
_MAPPING: list[tuple[type[BaseException], int, str]] = [
    (ice.NoSuchTableError, 404, "NoSuchTableException"),
    (ice.NoSuchIcebergTableError, 404, "NoSuchTableException"),
    (ice.NoSuchNamespaceError, 404, "NoSuchNamespaceException"),
    (ice.NoSuchViewError, 404, "NoSuchViewException"),
    (ice.TableAlreadyExistsError, 409, "AlreadyExistsException"),
    (ice.ViewAlreadyExistsError, 409, "AlreadyExistsException"),
    (ice.NamespaceAlreadyExistsError, 409, "AlreadyExistsException"),
    (ice.NamespaceNotEmptyError, 409, "NamespaceNotEmptyException"),
    (ice.CommitFailedException, 409, "CommitFailedException"),
    (ice.CommitStateUnknownException, 500, "CommitStateUnknownException"),
    (tfs.NamespaceNotFoundError, 404, "NoSuchNamespaceException"),
    (tfs.ObjectNotFoundError, 404, "NoSuchTableException"),
    (tfs.VersionNotFoundError, 404, "NoSuchWarehouseException"),
    # removed or replaced while served (trinityfs.rest.app.Binding opens it again)
    (tfs.LakehouseNotFoundError, 503, "ServiceUnavailableException"),
    (tfs.AlreadyExistsError, 409, "AlreadyExistsException"),
    (tfs.NamespaceNotEmptyError, 409, "NamespaceNotEmptyException"),
    (tfs.CommitConflictError, 409, "CommitFailedException"),
    (tfs.CommitRetriesExhaustedError, 409, "CommitFailedException"),
    (tfs.ReadOnlyError, 403, "ForbiddenException"),
    (tfs.AmbiguousWriteError, 500, "CommitStateUnknownException"),
    (tfs.LocationNotAllowedError, 403, "ForbiddenException"),
    (tfs.InvalidNameError, 400, "BadRequestException"),
    (tfs.InvalidArgumentError, 400, "BadRequestException"),
    (ice.ValidationError, 400, "BadRequestException"),
]


def to_rest_error(exc: BaseException) -> RestError:
    """The spec's error for an exception raised while serving a request."""
    if isinstance(exc, RestError):
        return exc
    if isinstance(exc, ValidationError):
        return bad_request(f"invalid request: {_validation_message(exc)}")
    for cls, status, type_ in _MAPPING:
        if isinstance(exc, cls):
            return RestError(status, type_, str(exc) or type_)
    if isinstance(exc, NotImplementedError):
        return RestError(406, "UnsupportedOperationException", str(exc) or "not supported")
    if isinstance(exc, tfs.TrinityError):
        # storage trouble, corrupt files: the server's side, not the request's
        log.warning("request failed: %s: %s", type(exc).__name__, exc)
        return RestError(500, "InternalServerError", f"{type(exc).__name__}: {exc}")
    if isinstance(exc, ValueError):
        # PyIceberg validates updates and requirements with ValueError (JSON nested too
        # deeply is one too, JsonTooDeepError, refused before parsing: trinityfs.jsontext);
        # a RecursionError is the server's failure, not the request's
        return bad_request(str(exc) or type(exc).__name__)
    log.exception("internal error while serving a request")
    return RestError(500, "InternalServerError", f"internal error: {type(exc).__name__}")


__all__ = [
    "RestError",
    "bad_request",
    "forbidden",
    "not_found",
    "to_rest_error",
    "unauthorized",
    "validation_detail",
]
