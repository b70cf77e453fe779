"""Rows run_evals built are not walked again by the store; no other row escapes the walk.

The mark that spares a built row its second walk is kept by the row's identity: a row built
elsewhere (by hand, after the built row died at the same address) must still be cleaned, and
the marks of rows long gone must not pile up in memory.
"""

from __future__ import annotations

import gc

from scorecore.evals import ScoreRow
from scorecore.evals._persistence import _sanitize
from scorecore.evals._rows._row import RowBuilder, row_of, storable_row


def _built(index: int) -> ScoreRow:
    builder = RowBuilder(batch_id="b", entity_type=None, entity=None, entity_id=None,
                         source="TEST")
    return row_of(builder.values(
        run_id=f"b:#{index}", scorer_id="s", status="scored", score=1.0, reason=None,
        scorer={"id": "s"}, result=None, input="q", output="a", context={},
        request_context=None, dataset_item_id=None, metadata={},
    ))


def _by_hand() -> ScoreRow:
    return ScoreRow(id="r", scorer_id="s", run_id="r", batch_id="b", status="scored",
                    output="a\x00b")


def test_a_hand_made_row_at_a_dead_built_rows_address_is_still_cleaned() -> None:
    """A row the builder did not make is walked, even where a built row lived.

    Whether the allocator hands a dead row's address to the next row differs from one machine
    (and one run) to another, so the test leaves the dead row's mark at the new row's address
    itself: what a reused address would leave, on every machine. A live built row's mark
    there is not trusted either."""
    reused = 0
    for index in range(200):
        built = _built(index)
        mark = _sanitize._STORABLE[id(built)]
        del built
        gc.collect()
        row = _by_hand()
        _sanitize._STORABLE[id(row)] = mark
        reused += _sanitize._STORABLE.get(id(row)) is mark and mark() is None
        kept = storable_row(row)
        assert kept.output == "a\ufffdb"
        assert kept.metadata == {"sanitized": [
            {"path": "output", "what": "NUL character replaced by U+FFFD"}]}
    assert reused  # the address was taken again at least once: the case above was met
    live = _built(200)
    row = _by_hand()
    _sanitize._STORABLE[id(row)] = _sanitize._STORABLE[id(live)]
    assert storable_row(row).output == "a\ufffdb"


def test_a_built_row_is_returned_as_it_is() -> None:
    """A row RowBuilder built is storable: storable_row gives back the row itself."""
    row = _built(0)
    assert storable_row(row) is row


def test_the_marks_of_dead_rows_do_not_pile_up() -> None:
    """The marks of sixty thousand dead rows leave only a bounded table."""
    for index in range(60_000):
        _built(index)
    assert len(_sanitize._STORABLE) <= 20_000
