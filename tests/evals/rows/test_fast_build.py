"""Rows built the fast way are the rows built the careful way, for any data.

``run_evals`` builds its rows by setting their slots and, when the scorer JSON and the entity
hold nothing to clean, without walking those shared columns again for each row. Whatever the
item, the scorer or the target hold (secrets, NUL characters, lone surrogates, deep nesting,
huge ints, non-str keys), the rows must be exactly what walking every column of a row built by
``ScoreRow(...)`` gives: the same values, the same notes in the same order, no secret kept.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore import Scorer, create_scorer
from scorecore.evals import ItemResult, ScoreRow, run_evals
from scorecore.evals._persistence._sanitize import Sanitizer
from scorecore.evals._rows._per_item import ItemRows
from scorecore.evals._rows._row import storable_row

_SECRET = "sk-proj-abc123def456ghi789jkl0"
_ODD_TEXT = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["a\x00b", "x\ud800", "\udfffy\x00", _SECRET, f"Bearer {_SECRET}",
                     "password=hunter2", "é\u2028"]),
)


def _nested(depth: int) -> object:
    value: object = "deep"
    for _ in range(depth):
        value = [value]
    return value


# An int of more than 4,300 digits (its repr raises, so it is made, not shown).
_HUGE = st.integers(0, 3).map(lambda n: 10 ** (5000 + n))
_LEAF = st.one_of(
    _ODD_TEXT, st.none(), st.booleans(), st.floats(), st.integers(),
    _HUGE, st.builds(_nested, st.integers(195, 205)),
)
# Keys are the user's names (redaction reads them, it does not rewrite them): no secret here.
_KEY = st.one_of(st.text(max_size=6), st.sampled_from(["a\x00b", "x\ud800"]),
                 st.sampled_from(["apiKey", "token", "password", "note"]),
                 st.integers(), _HUGE, st.booleans())
_VALUE = st.recursive(
    _LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(_KEY, inner, max_size=3)),
    max_leaves=8,
)


async def _results(items: list[dict[str, Any]], scorers: list[Scorer[Any, Any]]) -> list[
        ItemResult]:
    report = await run_evals(items, scorers, keep_results=True, batch_id="b")
    return list(report.results or ())


def _careful(row: ScoreRow) -> ScoreRow:
    """``row`` rebuilt by ``ScoreRow(...)`` and walked column by column, as a store walks a row
    it did not see built."""
    rebuilt = ScoreRow(**attrs.asdict(row, recurse=False))
    return storable_row(rebuilt, Sanitizer())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    input=_VALUE, output=_VALUE, extra=st.dictionaries(_KEY, _VALUE, max_size=3),
    description=_ODD_TEXT, target_name=_ODD_TEXT, with_target=st.booleans(),
)
def test_fast_rows_are_the_rows_every_column_walked_gives(
    *, input: object, output: object, extra: dict[object, object], description: str,
    target_name: str, with_target: bool,
) -> None:
    """Same values, same notes in the same order, whatever the data, scorer and target."""
    scorers = [
        create_scorer(id="a", description=description).generate_score(lambda _: 1.0),
        create_scorer(id="b", description="plain").generate_score(lambda _: 0.5)
        .generate_reason(lambda ctx: f"it said {ctx.run.output!r} {_SECRET}"),
    ]
    item = {"id": "x", "input": input, "output": output, "extra": extra}
    results = anyio.run(_results, [item], scorers)
    target = None
    if with_target:
        def target() -> None: ...
        target.__qualname__ = target_name  # the entity columns carry the target's name
    builder = ItemRows(batch_id="b", scorers=scorers, target=target)
    _, rows = builder.rows(results[0])
    assert [row.scorer_id for row in rows] == ["a", "b"]
    for row in rows:
        assert type(row) is ScoreRow
        careful = _careful(row)
        assert careful == row
        assert repr(careful) == repr(row)
        # The explaining texts and the contexts never keep a secret.
        kept = json.dumps([row.reason, row.additional_context, row.metadata], default=str)
        assert _SECRET not in kept
        # The shared columns are cleaned in every row, and their losses noted in each.
        assert row.scorer == Sanitizer().value(
            {"id": row.scorer_id, "name": row.scorer_id,
             "description": description if row.scorer_id == "a" else "plain",
             "hasJudge": False, "fingerprint": scorers["ab".index(row.scorer_id)].fingerprint},
            "scorer")
        notes = [n["path"] for n in (row.metadata or {}).get("sanitized", [])]
        if row.scorer_id == "a" and description != Sanitizer().text(description, "scorer"):
            assert "scorer.description" in notes
        if with_target and target_name != Sanitizer().text(target_name, "entityId"):
            assert "entityId" in notes
            assert "entity.id" in notes
