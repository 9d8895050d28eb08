"""The rule "a table location may not hold `?` or `#`" (PyArrow and fsspec read them as a
URL query or fragment, so files went elsewhere) lived in two front ends with two wordings
(TrinityCatalog.check_location, and since 0db1956 the REST location policy: review7 R6);
the catalog's LocationPolicy itself allowed such a location, so any other caller of it
(PyIceberg's confined FileIO, a future front end) did not refuse it. Now the catalog's
policy refuses it, even with the allow-list `*`, and both front ends only map it."""

from __future__ import annotations

import pytest

from trinityfs.catalog.locations import ANY_LOCATION, LocationPolicy
from trinityfs.errors import LocationNotAllowedError


@pytest.mark.parametrize("allowed", [["file:///lake/warehouse"], [ANY_LOCATION]])
@pytest.mark.parametrize("location", ["file:///lake/warehouse/t?x", "/lake/warehouse/h#x"])
def test_the_catalog_policy_refuses_query_and_fragment_characters(allowed, location):
    with pytest.raises(LocationNotAllowedError, match="query or fragment"):
        LocationPolicy(allowed).check(location, "table location")
    assert LocationPolicy(allowed).allows("file:///lake/warehouse/t")
