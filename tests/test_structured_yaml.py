"""generator.structured_yaml's writers give exactly what the json module writes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.structured_yaml import compact, flow, indented, quote

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(values)
def test_writers_match_json(value):
    assert indented(value) == json.dumps(value, indent=2)
    assert indented(value, " ") == json.dumps(value, indent=1)
    assert flow(value) == json.dumps(value)
    assert compact(value) == json.dumps(value, separators=(",", ":"))


@given(st.text())
def test_quote_is_json_for_a_string(text):
    assert quote(text) == json.dumps(text)


def test_indented_refuses_keys_json_would_convert():
    with pytest.raises(TypeError, match="string keys"):
        indented({1: "a"})
