"""With a store, finished items go through the writer: it builds their rows (a batch at a time
when nothing the rows take from the user can change, at once otherwise), then finishes each
item (the report fold, ``on_item_complete``) in completion order, then saves the rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.lowlevel
import pytest

from scorecore import Scorer, create_scorer
from scorecore.evals import EvalItem, ItemResult, run_evals
from scorecore.evals._rows._per_item import ItemRows
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.testing import InMemoryScoreStore

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
