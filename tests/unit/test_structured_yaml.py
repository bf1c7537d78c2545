"""What generator.structured_yaml writes, JSON files and YAML flow lines, reads back as the value
written, in json and in both YAML loaders Ansible may use (PyYAML and libyaml)."""

from __future__ import annotations

import json

import msgspec
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from generator.structured_yaml import (
    FastVariablesLoader,
    VariablesLoader,
    indented,
    line,
    to_yaml,
    variables_file,
)

# the model's numbers fit 64 bits; floats are checked through json only (YAML 1.1 reads 1e16 as
# a string whoever writes it)
scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
# YAML 1.1 line breaks and characters it refuses raw, which a JSON string may hold
ODD = 'a\u2028b\u2029c\x85d\x80e\ufeff\ufffe\U0001f600\n"\\'


@given(values | st.floats(allow_nan=False, allow_infinity=False))
@example(ODD)
@example("\ud800")  # a lone surrogate
def test_json_writers_read_back_as_the_value(value):
    assert json.loads(line(value)) == value and "\n" not in line(value)
    assert json.loads(indented(value)) == value
    if type(value) is not float and line(value).isascii():  # json: 1e+16, orjson: 1e16
        assert indented(value) == json.dumps(value, indent=2)  # the rank table's layout


# a block mapping's keys are the generator's own; the values anything
keys = st.sampled_from(["interfaces", "vlans", "name"])
configs = st.recursive(
    st.dictionaries(keys, st.lists(values, min_size=1) | scalars, min_size=1),
    lambda inner: st.dictionaries(keys, inner, min_size=1),
    max_leaves=4,
)


@given(configs)
@example({"interfaces": [{"description": ODD}, {"name": "}, {"}]})
def test_yaml_writers_read_back_as_the_value(config):
    for loader in (yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        assert yaml.load(to_yaml(config), Loader=loader) == config
    text = variables_file("test", config)
    for loader in (VariablesLoader, FastVariablesLoader):
        assert yaml.load(text, Loader=loader) == config


class _Row(msgspec.Struct, frozen=True, gc=False):
    name: str
    u: int
    length: float


@given(
    st.text(), st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=False, allow_infinity=False)
)
@example(ODD, 1, 2.5)
@example("\ud800", 0, 0.0)  # a lone surrogate: UTF-8 cannot hold it
def test_a_record_is_written_as_the_dict_of_its_fields(name, u, length):
    """A msgspec Struct (cabling.json's rows) is written as the dict of its fields, in order."""
    assert line(_Row(name=name, u=u, length=length)) == line(
        {"name": name, "u": u, "length": length}
    )
