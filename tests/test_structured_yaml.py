"""generator.structured_yaml's writers give exactly what the json module writes."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from generator.structured_yaml import compact, flow, indented, quote, to_yaml

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


# ports as a structured config lists them, with strings that look like the item boundary
boundaries = st.text(alphabet='{}, ab"', max_size=8)
port_lists = st.lists(
    st.dictionaries(
        st.sampled_from(["name", "peer", "ports"]),
        boundaries
        | st.dictionaries(st.sampled_from(["device", "port"]), boundaries, max_size=2)
        | st.lists(st.dictionaries(st.sampled_from(["id"]), boundaries), max_size=2),
        max_size=3,
    ),
    min_size=1,
    max_size=5,
)


@given(st.dictionaries(st.sampled_from(["interfaces", "vlans"]), port_lists, min_size=1))
def test_to_yaml_writes_one_json_flow_line_per_list_item_and_yaml_reads_it_back(config):
    text = to_yaml(config)
    for key, value in config.items():
        if type(value) is list and value:
            lines = [f"  - {flow(item)}" for item in value]
            assert f"{key}:\n" + "\n".join(lines) + "\n" in text + "\n"
    assert yaml.safe_load(text) == json.loads(json.dumps(config))


_plain = st.text(alphabet="ab -:/.", max_size=5) | st.integers() | st.floats() | st.booleans()
# each is one thing the csv module writes differently from a comma join, or a row it rejects
ODD = [None, '"', "a\rb", "a\nb", "\0", "a,b", "None", ["only"], [""], []]


@pytest.mark.parametrize("odd", [*ODD, "plain"], ids=repr)
@given(
    rows=st.integers(1, 4).flatmap(
        lambda width: st.lists(st.lists(_plain, min_size=width, max_size=width), max_size=5)
    ),
    at=st.integers(0, 20),
    column=st.integers(0, 3),
)
def test_csv_bytes_is_what_the_csv_module_writes(odd, rows, at, column):
    """Tables as emitters make them (rows as wide as the header), plain or with one odd field or
    row put in: a quote, CR, line break, NUL or comma in a field, None, the text None, a short
    row. Each is written exactly as the csv module writes it."""
    import csv
    import io

    from generator.artifacts import csv_bytes

    header = ["h"] * (len(rows[0]) if rows else 2)  # one column: csv writes an empty field ""
    rows = [list(r) for r in rows]
    if isinstance(odd, list):
        rows.insert(at % (len(rows) + 1), odd)
    elif odd != "plain":
        row = rows[at % len(rows)] if rows else header
        row[column % len(row)] = odd
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    assert csv_bytes(header, rows) == buf.getvalue().encode()
    assert csv_bytes(header, iter(rows)) == buf.getvalue().encode()  # any iterable of rows


def test_csv_bytes_quotes_an_empty_field_alone_on_its_row():
    """A row of one empty field is `""` for the csv module (an empty line would be no row)."""
    from generator.artifacts import csv_bytes

    assert csv_bytes(["name"], [["a"], [""]]) == b'name\na\n""\n'


@pytest.mark.parametrize("odd", ["", '"', "\\", "\n", "\x1f", "\x7f", "\u00e9"], ids=repr)
@given(
    rows=st.lists(st.tuples(st.text("ab-/:1 .", max_size=4), st.integers(), st.text(max_size=3))),
    at=st.integers(0, 20),
)
def test_json_rows_is_what_the_encoder_writes_for_each_row(odd, rows, at):
    """Rows as JSON arrays joined by commas (the design review's tables), plain or with one
    string holding a character JSON escapes: the same text as encoding each row."""
    from generator.structured_yaml import json_rows

    rows = [(a, n, b.replace("\\", "").replace('"', "")) for a, n, b in rows]  # plain but one
    rows = [(a.encode("ascii", "ignore").decode(), n, b) for a, n, b in rows]
    rows = [(a, n, "".join(ch for ch in b if " " <= ch <= "~")) for a, n, b in rows]
    if rows:
        a, n, b = rows[at % len(rows)]
        rows[at % len(rows)] = (a + odd, n, b)
    assert json_rows(rows, '["%s",%s,"%s"]', compact, ",") == ",".join(map(compact, rows))
