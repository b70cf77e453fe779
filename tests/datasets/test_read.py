"""Reading dataset files: items as written, every bad line one error naming line and field,
and a large file read in flat memory."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.datasets import DatasetError, DatasetItem, read_csv, read_jsonl, read_rows


def _lines(rows: list[object]) -> list[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in rows]


def test_jsonl_items_keep_their_ids_and_fields() -> None:
    """Ids stay as written (a whole number as its text), fields as given; blank lines and a
    leading byte-order mark are skipped."""
    lines = [b"\xef\xbb\xbf" + _lines([{"id": "a", "input": "q", "extra": {"k": 1}}])[0],
             b"   \n", *_lines([{"id": 7, "input": "r"}])]
    items = list(read_jsonl(lines, source="d.jsonl"))
    assert items == [DatasetItem(id="a", fields={"input": "q", "extra": {"k": 1}}),
                     DatasetItem(id="7", fields={"input": "r"})]
    assert [i.line for i in items] == [1, 3]


def test_items_without_an_id_take_their_position_when_asked() -> None:
    """``ids="position"`` names an id-less item ``#N`` (its place among the items), which is
    the id ``scorecore eval`` gives its rows; by default it is an error naming the line."""
    lines = _lines([{"input": "a"}, {"id": "x", "input": "b"}, {"input": "c"}])
    assert [i.id for i in read_jsonl(lines, source="d", ids="position")] == ["#0", "x", "#2"]
    with pytest.raises(DatasetError, match=r"^d:1: field 'id': no 'id'"):
        list(read_jsonl(lines, source="d"))


@pytest.mark.parametrize(("line", "message"), [
    (b'{"id": true, "input": 1}', "d:2: field 'id': must be a non-empty string (or a whole "
                                  "number), got True"),
    (b'{"id": ["a"], "input": 1}', "d:2: field 'id': must be a non-empty string"),
    (b'{"id": "", "input": 1}', "d:2: field 'id': must be a non-empty string"),
    (b'"just a string"', "d:2: expected a JSON object, got str"),
    (b'{"id": "b", "input": ', "d:2: not JSON: Expecting value (column 22)"),
    (b'{"id": "b", "input": "\\ud800"}', "d:2: field 'input': holds a lone surrogate"),
    (b'{"id": "b", "input": {"k": "\\u0000"}}', "d:2: field 'input.k': holds a NUL"),
    (b'{"id": "b", "input": NaN}', "d:2: field 'input': nan is not JSON"),
    (b'{"id": "b", "input": "\xff"}', "d:2: not UTF-8 text (byte 0xff at column 23)"),
    (b'{"id": "b", "input": ' + b"[" * 200 + b"]" * 200 + b"}",
     "d:2: field 'input"),
])
def test_each_bad_line_is_one_error_naming_the_line_and_field(line: bytes, message: str) -> None:
    """Ids that are not strings, lines that are not objects or not JSON, text no store keeps,
    bytes that are not UTF-8, nesting past the limit: one DatasetError with the place."""
    with pytest.raises(DatasetError) as raised:
        list(read_jsonl([b'{"id": "a", "input": 1}\n', line], source="d"))
    assert str(raised.value).startswith(message), str(raised.value)
    assert raised.value.line == 2


def test_csv_rows_of_another_shape_and_bad_headers_are_named() -> None:
    """A record with more or fewer cells than the header, a repeated or empty column name."""
    with pytest.raises(DatasetError, match=r"^d.csv:3: 1 cells, but the header"):
        list(read_csv(["id,input\n", "a,q\n", "b\n"], source="d.csv"))
    with pytest.raises(DatasetError, match=r"^d.csv:1: field 'id': the header names a column "
                                           r"twice"):
        list(read_csv(["id,id\n"], source="d.csv"))
    with pytest.raises(DatasetError, match=r"^d.csv:1: the header names a column with no name"):
        list(read_csv(["id,,input\n"], source="d.csv"))


def test_csv_values_are_text_empty_cells_absent_and_quoted_newlines_kept() -> None:
    """A record spanning two lines is one item named by its first line."""
    lines = ["id,input,output,extra.topic\n", 'a,"two\n', 'lines",,math\n', "b,q,x,\n"]
    items = list(read_csv(lines, source="d.csv"))
    assert [(i.id, i.line, dict(i.fields)) for i in items] == [
        ("a", 2, {"input": "two\nlines", "extra": {"topic": "math"}}),
        ("b", 4, {"input": "q", "output": "x"})]


def test_rows_nest_dotted_columns_and_refuse_values_json_cannot_say() -> None:
    """A Parquet row's timestamp or bytes is an error naming the row and the column."""
    from datetime import datetime  # noqa: PLC0415

    rows = [{"id": "a", "input": "q", "extra.when": datetime(2025, 1, 1)}]
    with pytest.raises(DatasetError, match=r"^p: row 1: field 'extra.when': a datetime is not "
                                           r"JSON"):
        list(read_rows(rows, source="p"))


_TEXT = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)))


@given(st.lists(st.dictionaries(st.sampled_from(["input", "output", "ground_truth"]), _TEXT,
                                min_size=1), max_size=8))
def test_jsonl_and_csv_of_the_same_text_items_are_the_same_items(
        rows: list[dict[str, str]]) -> None:
    """Text items written as JSON lines or as CSV read back as the same items (empty text is
    absent in CSV, so it is left out of both)."""
    rows = [{k: v for k, v in r.items() if v and "\r" not in v} for r in rows]
    columns = ["id", "input", "output", "ground_truth"]
    keyed = [{"id": f"i{n}", **r} for n, r in enumerate(rows)]

    def quoted(value: str) -> str:
        return '"' + value.replace('"', '""') + '"'

    text = ",".join(columns) + "\n" + "".join(
        ",".join(quoted(r.get(c, "")) if r.get(c) else "" for c in columns) + "\n"
        for r in keyed)
    from_csv = list(read_csv(text.splitlines(keepends=True), source="c"))
    from_jsonl = list(read_jsonl(_lines(keyed), source="j"))  # type: ignore[arg-type]
    assert from_csv == from_jsonl


def _big_file(items: int) -> Iterator[bytes]:
    filler = "x" * 400
    for i in range(items):
        yield json.dumps({"id": f"item-{i}", "input": f"{i} {filler}", "output": filler,
                          "extra": {"category": i % 7}}).encode() + b"\n"


def test_a_large_file_is_read_in_flat_memory() -> None:
    """15,000 lines (about 13 MB) pass through the reader while it holds one line at a time:
    the peak of what it allocates does not grow with the file."""
    def peak(items: int) -> int:
        tracemalloc.start()
        try:
            count = sum(1 for _ in read_jsonl(_big_file(items), source="big"))
            assert count == items
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(1_500), peak(15_000)
    assert large < small * 1.5 + 64_000, (small, large)
