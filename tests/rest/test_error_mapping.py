"""The REST server's one error mapping (trinityfs/rest/errors.py)."""

from __future__ import annotations

from trinityfs.errors import JsonTooDeepError
from trinityfs.rest.errors import to_rest_error


def test_json_nested_too_deeply_is_the_request_s_fault():
    error = to_rest_error(JsonTooDeepError(64))
    assert (error.status, error.type) == (400, "BadRequestException")


def test_a_recursion_error_is_the_server_s_failure_not_a_bad_request():
    """Request bodies are measured before parsing (trinityfs.jsontext): a RecursionError
    is no longer how a hostile body shows, and reporting one as 400 blamed the client."""
    error = to_rest_error(RecursionError("maximum recursion depth exceeded"))
    assert (error.status, error.type) == (500, "InternalServerError")
