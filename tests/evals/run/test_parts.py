"""The parts of run_evals, used directly: run ids, reading items, the item scorer, item rows."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from scorecore import create_scorer
from scorecore.evals import EvalItem, InvalidItem, ItemResult
from scorecore.evals._checks import is_finite_number
from scorecore.evals.engine import (
    ItemFailure,
    ItemRows,
    ItemScorer,
    RunIds,
    item_from_mapping,
    item_key,
    read_item,
)
from scorecore.evals.results import ScorerOutcome
from scorecore.evals.store import CompletedScore
from scorecore.validators import is_int, is_number
from scorecore_adapters.testing import virtual_runtime

pytestmark = pytest.mark.anyio


def test_run_ids_are_claimed_by_the_first_item() -> None:
    """A repeated id, or an id spelling an id-less item's position, fails with the first index."""
    ids = RunIds("b")
    assert ids.claim(0, None, None) == Success(None)
    assert ids.claim(1, "x", 4) == Success(None)
    repeat = ids.claim(2, "x", None).failure()
    assert repeat == ItemFailure(error="duplicate id 'x', first seen at line 4", duplicate_of=1)
    position = ids.claim(3, "#0", None).failure()
    assert position.duplicate_of == 0
    assert ids.of(3, "#0") == ids.of(0, None) == "b:#0"


@given(st.lists(st.none() | st.sampled_from(["a", "b", "#0", "#1", "#2"]), max_size=12))
def test_each_run_id_is_granted_once(item_ids: list[str | None]) -> None:
    """Claiming in order grants every run id to exactly one item: the first using it."""
    ids = RunIds("b")
    granted: dict[str, int] = {}
    for index, item_id in enumerate(item_ids):
        run_id = ids.of(index, item_id)
        claim = ids.claim(index, item_id, None)
        if isinstance(claim, Success):
            assert run_id not in granted
            granted[run_id] = index
        else:
            assert granted[run_id] == claim.failure().duplicate_of


def test_read_item_says_why_an_entry_is_not_an_item() -> None:
    """Each unusable entry becomes one ItemFailure line naming the item's position."""
    assert read_item({"input": 1, "output": 2}, 0, needs_output=True).unwrap().input == 1
    assert read_item(InvalidItem(reason="bad line"), 4, needs_output=False).failure().error == (
        "bad line"
    )
    assert read_item([1], 2, needs_output=False).failure().error == (
        "item #2: expected a mapping or EvalItem, got list [1]"
    )
    assert read_item({"input": 1, "x": 2}, 3, needs_output=False).failure().error.startswith(
        "item #3: unknown field 'x'"
    )


_ABSENT = object()


@given(
    value=st.integers() | st.text(max_size=3),
    item_id=st.just(_ABSENT) | st.none() | st.text(max_size=4) | st.integers(-3, 3)
    | st.sampled_from(["", "a\x00", "\ud800", 1.5, True, 2**70]),
    context=st.just(_ABSENT) | st.none()
    | st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)
    | st.sampled_from([[1], "ctx"]),
    line=st.none() | st.integers(-2, 3) | st.sampled_from([True, 2.0]),
)
def test_an_item_read_from_a_mapping_is_what_eval_item_builds(
    value: object, item_id: object, context: object, line: Any
) -> None:
    """Any mapping reads as the item EvalItem(...) builds from its fields (equal, same repr,
    frozen), or fails with the message EvalItem(...) raises."""
    raw: dict[str, Any] = {"input": value, "output": "o", "groundTruth": None}
    fields: dict[str, Any] = {"input": value, "output": "o", "ground_truth": None}
    if item_id is not _ABSENT:
        raw["id"] = item_id
        fields["id"] = str(item_id) if is_int(item_id) and item_id.bit_length() <= 64 else (
            item_id)
    if context is not _ABSENT:
        raw["requestContext"] = fields["request_context"] = context
    try:
        expected: EvalItem | Exception = EvalItem(**fields, line=line)
    except (TypeError, ValueError) as exc:
        expected = exc
    try:
        got: EvalItem | Exception = item_from_mapping(raw, line=line)
    except ValueError as exc:
        got = exc
    if isinstance(expected, Exception):
        assert isinstance(got, ValueError)
        assert str(got) == str(expected)
        return
    assert isinstance(got, EvalItem)
    assert got == expected
    assert repr(got) == repr(expected)
    with pytest.raises(AttributeError):
        got.id = "changed"  # type: ignore[misc]


def test_item_key_keeps_a_usable_id_of_an_unusable_entry() -> None:
    """The id (and line) of an entry; an invalid entry keeps a usable id, never an unusable one."""
    assert item_key(EvalItem(input=1, id="q", line=7), 0) == ("q", 7)
    assert item_key({"id": 5}, 0) == ("5", None)  # no input: not an item, still named
    assert item_key({"id": "a\x00b"}, 0) == (None, None)
    assert item_key(InvalidItem(reason="r", id="z"), 0) == ("z", None)


async def test_item_scorer_scores_and_takes_stored_outcomes(anyio_backend: str) -> None:
    """One item: each scorer runs, except pairs the store already holds as final."""
    runtime, _ = virtual_runtime()
    calls: list[str] = []

    def scorer(scorer_id: str, value: float) -> Any:
        def score(ctx: Any) -> float:
            calls.append(scorer_id)
            return value

        return create_scorer(id=scorer_id, description="d").generate_score(score)

    done = {("b:q", "kept"): CompletedScore(status="scored", score=0.25)}
    score = ItemScorer(scorers=[scorer("run", 1.0), scorer("kept", 0.0)], target=None,
                       runtime=runtime, batch_id="b", done=done)
    result = await score(0, {"input": "x", "output": "y", "id": "q"})
    assert calls == ["run"]
    assert [(o.scorer_id, o.status, o.score, o.resumed) for o in result.outcomes] == [
        ("run", "scored", 1.0, False), ("kept", "scored", 0.25, True),
    ]
    again = await score(1, {"input": "x", "output": "y", "id": "q"})
    assert (again.error, again.duplicate_of) == ("duplicate id 'q', first seen at item #0", 0)


async def test_a_scored_item_is_the_value_its_classes_build(anyio_backend: str) -> None:
    """A scored item's result and outcome (built slot by slot on the run path) are the values
    ItemResult and ScorerOutcome build from the same fields: each field in its place, the
    result's extra a dict of its own."""
    runtime, _ = virtual_runtime()
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 1)
    score = ItemScorer(scorers=[scorer], target=None, runtime=runtime, batch_id="b")
    claimed = score.prepare(0, {"input": "x", "output": "y", "id": "q"})
    item = EvalItem(input="x", output="y", id="q")
    assert repr(claimed) == f"ClaimedItem(index=0, item={item!r}, run_id='b:q')"
    result = await score.run(claimed)
    (outcome,) = result.outcomes
    assert outcome.result is not None
    expected = ScorerOutcome(scorer_id="s", status="scored", score=1.0,
                             reason=outcome.result.reason, result=outcome.result)
    assert (repr(outcome), outcome.result, outcome.run_error) == (repr(expected),
                                                                   expected.result, None)
    assert type(outcome.score) is float
    assert result == ItemResult(index=0, item_id="q", run_id="b:q", item=claimed.item,
                                output="y", outcomes=(expected,))
    assert repr(result) == repr(ItemResult(index=0, item_id="q", run_id="b:q",
                                           item=claimed.item, output="y", outcomes=(expected,)))
    again = await score.run(score.prepare(1, {"input": "x", "output": "y", "id": "r"}))
    assert result.extra == {}
    assert result.extra is not again.extra


async def test_item_scorer_fails_the_item_when_the_target_raises(anyio_backend: str) -> None:
    """A raising target fails the whole item with one line; no scorer runs."""
    runtime, _ = virtual_runtime()

    async def target(item: EvalItem) -> Any:
        raise KeyError("gone")

    one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
    score = ItemScorer(scorers=[one], target=target, runtime=runtime, batch_id="b")
    result = await score(0, {"input": "x"})
    assert result.error == "target raised KeyError: 'gone'"
    assert [(o.status, o.error) for o in result.outcomes] == [("failed", result.error)]


async def test_item_rows_store_each_run_once_and_nothing_for_a_repeat(anyio_backend: str) -> None:
    """Rows for fresh outcomes only; an item repeating a run id gets none."""
    runtime, _ = virtual_runtime()
    one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
    two = create_scorer(id="two", description="d").generate_score(lambda ctx: 0.5)
    done = {("b:#0", "two"): CompletedScore(status="scored", score=0.5)}
    score = ItemScorer(scorers=[one, two], target=None, runtime=runtime, batch_id="b", done=done)
    rows = ItemRows(batch_id="b", scorers=[one, two], target=None)
    first = await score(0, {"input": "x", "output": "x"})
    kept, saved = rows.rows(first)
    assert kept == first
    assert [(r.scorer_id, r.run_id, r.status, r.score, r.batch_id) for r in saved] == [
        ("one", "b:#0", "scored", 1.0, "b"),
    ]
    repeat = await score(1, {"input": "x", "output": "x", "id": "#0"})
    assert rows.rows(repeat) == (repeat, [])


@given(st.one_of(st.booleans(), st.integers(), st.floats(), st.text(), st.none()))
def test_numbers_are_never_bools(value: object) -> None:
    """The evals checks treat True/False as not numbers, and NaN/infinities as not finite."""
    assert is_int(value) == (type(value) is int)
    assert is_number(value) == (type(value) in (int, float))
    finite = is_number(value) and math.isfinite(value)
    assert is_finite_number(value) == finite
