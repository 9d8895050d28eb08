"""Numbers int() refuses (more than 4,300 digits, or digits such as "²" that
`str.isdigit` accepts) in query parameters and headers: a 400 in the spec's error model,
never a 500 (regression: they raised a bare ValueError)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.rest


@pytest.mark.parametrize("size", ["9" * 5000, "²"], ids=["5000 digits", "superscript"])
def test_page_size_that_int_refuses_is_400(http, size):
    r = http.get("/v1/latest/namespaces", params={"pageSize": size})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "BadRequestException"
    assert "pageSize" in r.json()["error"]["message"]
