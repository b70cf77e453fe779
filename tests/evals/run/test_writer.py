"""With a store, finished items go through the writer: it builds their rows (a batch at a time
when nothing the rows take from the user can change, at once otherwise), then finishes each
item (the report fold, ``on_item_complete``) in completion order, then saves the rows."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import anyio
import anyio.lowlevel
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import Scorer, create_scorer
from scorecore.evals import EvalItem, ItemResult, run_evals
from scorecore.evals._rows._per_item import ItemRows
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.testing import InMemoryScoreStore
from tests.strategies import jsonl_odd_text

pytestmark = pytest.mark.anyio


def _echo() -> Scorer[Any, Any]:
    return create_scorer(id="echo", description="d").generate_score(lambda _: 1.0)


async def _slower_first(item: EvalItem) -> Any:
    # Earlier items finish later: completion order differs from dataset order.
    for _ in range(20 - int(item.input)):
        await anyio.lowlevel.checkpoint()
    return item.output


async def test_the_hook_sees_items_in_completion_order_as_without_a_store(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A store changes neither which results on_item_complete gets nor their order."""
    data = [{"input": i, "output": f"a{i}"} for i in range(20)]

    async def run(store: Any) -> list[tuple[int, str]]:
        seen: list[tuple[int, str]] = []
        await run_evals(data, [_echo()], target=_slower_first, concurrency=20, store=store,
                        batch_id="b", on_item_complete=lambda r: seen.append(
                            (r.index, r.outcomes[0].status)))
        return seen

    without = await run(None)
    async with SqliteScoreStore(tmp_path / "s.db") as store:
        stored = await run(store)
    assert [index for index, _ in without] != list(range(20))
    assert stored == without


@pytest.mark.parametrize("output", ["a\x00b", {"text": "a\x00b"}], ids=["text", "dict"])
async def test_the_hook_sees_the_pair_failed_whose_row_lost_data(
    anyio_backend: str, output: object
) -> None:
    """Built later (text) or at once (a dict), a row that lost data fails its pair before the
    hook and the report see the item; its row is stored failed, before the hook returns."""
    store = InMemoryScoreStore()
    hooked: list[ItemResult] = []
    report = await run_evals([{"input": "q", "output": output}], [_echo()], store=store,
                             batch_id="b", on_item_complete=hooked.append)
    [result] = hooked
    assert result.outcomes[0].status == "failed"
    assert "cannot be stored as it is" in (result.outcomes[0].error or "")
    assert report.summary("echo").failed == 1
    assert store.rows[("b:#0", "echo")].status == "failed"


def _result_of(**fields: Any) -> Callable[[], Any]:
    async def run() -> ItemResult:
        hooked: list[ItemResult] = []
        item: dict[str, Any] = {"input": "q", "output": "a", **fields}
        await run_evals([item], [_echo()], on_item_complete=hooked.append)
        return hooked[0]

    return run


@pytest.mark.parametrize(("fields", "lasting"), [
    ({}, True),
    ({"input": 3, "output": 2.5, "ground_truth": None}, True),
    ({"ground_truth": "a", "id": "x"}, True),
    ({"input": {"q": "a"}}, False),
    ({"output": ["a"]}, False),
    ({"ground_truth": {"a": 1}}, False),
    ({"extra": {"k": "v"}}, False),
    ({"request_context": {"user": "u"}}, False),
])
async def test_rows_are_built_later_only_from_values_nothing_can_change(
    anyio_backend: str, fields: dict[str, Any], lasting: bool
) -> None:
    """A dict or a list the item holds may be changed by the caller once the item completed:
    such an item's rows are built at once (see also test_shared_values)."""
    result = await _result_of(**fields)()
    assert ItemRows.lasting(result) is lasting


async def test_a_step_result_the_caller_could_change_builds_rows_at_once(
    anyio_backend: str,
) -> None:
    """A step's result is the user's object too: a dict there is built from at once."""
    kept: Scorer[Any, Any] = (create_scorer(id="s", description="d")
                              .preprocess(lambda ctx: {"n": 1})
                              .generate_score(lambda ctx: 1.0))
    hooked: list[ItemResult] = []
    await run_evals([{"input": "q", "output": "a"}], [kept], on_item_complete=hooked.append)
    assert ItemRows.lasting(hooked[0]) is False


# Values nothing can change after an item completes, odd ones included: text with NUL, lone
# surrogates and separators (rows lose data: pairs fail), NaN and infinities, ints too long
# to print, booleans, None.
_scalars = st.one_of(
    jsonl_odd_text, st.floats(), st.integers(), st.just(10**5000), st.booleans(), st.none(),
)


def _echoing() -> list[Scorer[Any, Any]]:
    return [
        create_scorer(id="kept", description="d").generate_score(lambda _: 0.5),
        create_scorer(id="said", description="d")
        .generate_score(lambda ctx: 1.0 if ctx.run.output else 0.0)
        .generate_reason(lambda ctx: f"output {ctx.run.output!r}"),
    ]


async def _stored_run(
    items: list[dict[str, Any]], path: Path, *, at_once: bool
) -> tuple[list[Any], list[Any], Any]:
    """The rows ``run_evals`` stores in SQLite (their times left out), what the hook saw and
    the report's summaries; ``at_once``: every item's rows built as it completes."""
    seen: list[Any] = []
    with mock.patch.object(ItemRows, "lasting", staticmethod(lambda _r: not at_once)):
        async with SqliteScoreStore(path) as store:
            report = await run_evals(
                items, _echoing(), store=store, batch_id="b",
                on_item_complete=lambda r: seen.append(
                    (r.index, [(o.scorer_id, o.status, o.score, o.error) for o in r.outcomes])))
            rows = [attrs.evolve(r, created_at=None, updated_at=None)
                    for r in await store.list_run("b")]
    return rows, sorted(seen), [report.summary(s) for s in ("kept", "said")]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.fixed_dictionaries({"input": _scalars, "output": _scalars},
                                      optional={"ground_truth": _scalars}), max_size=12),
       st.sampled_from(["asyncio", "trio"]))
def test_rows_built_later_are_the_rows_built_at_once(
    items: list[dict[str, Any]], backend: str
) -> None:
    """For any items of scalars, odd ones included, building the rows in the writer a batch at
    a time stores what building each item's rows as it completes stores, and the hook and the
    report see the same outcomes (a pair whose row lost data failed either way)."""
    with tempfile.TemporaryDirectory() as tmp:
        later = anyio.run(lambda: _stored_run(items, Path(tmp) / "later.db", at_once=False),
                          backend=backend)
        at_once = anyio.run(lambda: _stored_run(items, Path(tmp) / "once.db", at_once=True),
                            backend=backend)
    assert later == at_once
