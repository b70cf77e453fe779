"""How a file cache reads its rows back: the same replies as the full reading, faster."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore.judge import JudgeResponse, TokenLogprob
from scorecore_adapters._reply_rows import RowReader, decode, encode
from tests.adapters.cache.test_cache_adapters import _responses


@settings(max_examples=200)
@given(replies=st.lists(_responses, min_size=1, max_size=6), texts=st.lists(st.text()))
def test_rows_read_as_the_full_reading_reads_them(
    replies: list[JudgeResponse], texts: list[str]
) -> None:
    """Every row, and rows sharing all but their text (the kept part of a row), read back as
    ``decode`` reads them: each with its own text, never another row's."""
    reader = RowReader()
    rows = [encode(reply) for reply in replies]
    rows += [encode(JudgeResponse(text=text, usage=replies[0].usage,
                                  model_id=replies[0].model_id)) for text in texts]
    for row in rows + rows:
        got = reader.read(row)
        assert got == decode(row)
        assert got is not None


def test_a_row_with_its_text_written_twice_reads_as_the_full_reading() -> None:
    """A row edited to hold a second ``text`` is read as JSON reads it (the last one wins),
    whichever row of the same shape was read before it."""
    reader = RowReader()
    plain = encode(JudgeResponse(text=""))
    edited = plain[:-1] + ', "text": "second"}'
    assert reader.read(edited.replace('"text": ""', '"text": "first"', 1)) is None
    assert reader.read(plain) == JudgeResponse(text="")
    assert decode(edited) == JudgeResponse(text="second")
    assert reader.read(edited) is None  # not read here: decode reads it


def test_rows_this_reader_leaves_to_the_full_reading() -> None:
    """Rows not as ``encode`` writes them without log-probabilities are not read here (the
    full reading reads them)."""
    reader = RowReader()
    row = json.loads(encode(JudgeResponse(text="t")))
    for other in ('{"text": "cut', '{"text": "a"} {}', "[1]", "",
                  json.dumps({**row, "text": 3}),
                  json.dumps({"usage": row["usage"], **row}),  # another key first
                  json.dumps({**row, "usage": {**row["usage"], "input_tokens": True}})):
        assert reader.read(other) is None
        assert reader.read(other) is None  # a rest seen before: still left to decode
    with_logprobs = JudgeResponse(text="t", logprobs=(TokenLogprob(token="t", logprob=-0.1),))
    assert reader.read(encode(with_logprobs)) is None
    assert decode(encode(with_logprobs)) == with_logprobs


def test_a_row_written_before_modes_were_recorded_reads_through_the_full_reading() -> None:
    """An old row (no structured_output) is left to decode, which reads it, every time."""
    reader = RowReader()
    row = json.loads(encode(JudgeResponse(text="t", model_id="m")))
    del row["structured_output"]
    for text in ("t", "u", "t"):
        old = json.dumps({**row, "text": text})
        assert reader.read(old) is None
        assert decode(old) == JudgeResponse(text=text, model_id="m")
