"""A pageToken or request body nesting thousands of arrays drove `json.loads` in the REST
server to the interpreter's recursion limit; the RecursionError was caught (400), but
anything else that ran at that depth failed too: in the fresh-clone CI of f8a7deb a
finalizer run by the garbage collector there raised RecursionError and pytest failed
test_a_token_never_issued_is_400[...-nested] ("Failed to process unraisable
exception"). The server now measures the nesting of such text without parsing it and
answers 400 before the parser sees it."""

from __future__ import annotations

import base64
import json

import pytest

import trinityfs.rest.requests as requests
from trinityfs.rest.requests import MAX_JSON_DEPTH, RestError, json_object, page


@pytest.fixture
def parser_calls(monkeypatch) -> list[bytes]:
    calls: list[bytes] = []
    real = json.loads

    def loads(text, *args, **kwargs):
        calls.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(requests.json, "loads", loads)
    return calls


def _token(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("raw", [b"[" * 4000, b'{"after": ' + b"[" * 3000 + b"]" * 3000 + b"}"])
def test_a_deep_token_is_refused_unparsed(raw, parser_calls):
    with pytest.raises(RestError) as info:
        page(_token(raw), None)
    assert info.value.status == 400
    assert parser_calls == []


def test_a_deep_body_is_refused_unparsed(parser_calls):
    with pytest.raises(RestError, match="nests deeper"):
        json_object(b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert parser_calls == []


def test_brackets_inside_strings_and_real_bodies_still_parse(parser_calls):
    deep_text = "[" * 500
    body = json.dumps({"name": deep_text, "nested": [[{"ok": 1}]] * 3}).encode()
    assert json_object(body)["name"] == deep_text
    assert page(_token(json.dumps({"after": "t[[[{"}).encode()), None)[1] == "t[[[{"
    ok = b"[" * (MAX_JSON_DEPTH - 1) + b"]" * (MAX_JSON_DEPTH - 1)
    assert json_object(b'{"a": ' + ok + b"}")["a"] is not None
