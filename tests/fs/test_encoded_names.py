"""encoded_names (the listing path of trinity:// ls and FUSE readdir) equals
encode_name applied to each name, whatever mix of names needs encoding."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from trinityfs.fs.paths import encode_name
from trinityfs.fs.reading import encoded_names

names = st.lists(st.text(alphabet="%/.a\u00e9*", min_size=1, max_size=3), max_size=12)


@settings(max_examples=500, deadline=None)
@given(names)
def test_encoded_names_equals_encode_name_of_each(listing):
    assert encoded_names(listing) == [encode_name(n) for n in listing]


def test_each_kind_of_name_needing_encoding_on_its_own():
    for odd in ("a/b", "%", ".", "..", "a%2Fb"):
        assert encoded_names(["x", odd, "y"]) == ["x", encode_name(odd), "y"]
