"""The rows of one item share its values: each row still holds them cleaned, redacted and noted.

Rows built for several scorers of an item convert, clean and redact the item's input, output
and context once; every row must still read as if it had been built alone, and a value changed
between items must never be taken for the earlier item's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorecore import Scorer, create_scorer
from scorecore.evals import ScoreRow, run_evals
from scorecore.evals._persistence._record import json_text
from scorecore_adapters.storage import SqliteScoreStore

pytestmark = pytest.mark.anyio


def _scorers() -> list[Scorer[Any, Any]]:
    return [create_scorer(id=name, description=name).generate_score(lambda _: 1.0)
            for name in ("a", "b", "c")]


async def _rows(data: list[dict[str, Any]], tmp_path: Path) -> dict[tuple[str, str], ScoreRow]:
    async with SqliteScoreStore(tmp_path / "s.db") as store:
        await run_evals(data, _scorers(), store=store, batch_id="b")
        return {(r.dataset_item_id or "", r.scorer_id): r for r in await store.list_run("b")}


async def test_every_scorers_row_holds_the_items_context_redacted_and_noted(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A secret and a NUL in the item's shared values are redacted and noted in every row."""
    context = {"apiKey": "sk-proj-abc123def456ghi789jkl0", "note": "ok"}
    data = [{"id": "x", "input": {"q": "a\x00b"}, "output": "o", "extra": context}]
    rows = await _rows(data, tmp_path)
    assert len(rows) == 3
    for row in rows.values():
        assert row.additional_context == {"apiKey": "[REDACTED]", "note": "ok"}
        assert row.input == {"q": "a\ufffdb"}
        assert row.metadata is not None
        assert [n["path"] for n in row.metadata["sanitized"]] == ["input.q"]
        assert row.status == "failed"


async def test_a_value_reused_between_items_is_read_again(
    anyio_backend: str, tmp_path: Path
) -> None:
    """The same dict object given to two items, changed in between, is stored as each held it."""
    shared: dict[str, Any] = {"q": "first"}
    items = [{"id": "x", "input": shared, "output": "o"}, {"id": "y", "input": shared,
                                                          "output": "o"}]

    def changing() -> Iterator[dict[str, Any]]:
        yield items[0]
        shared["q"] = "second\x00"
        yield items[1]

    async with SqliteScoreStore(tmp_path / "s.db") as store:
        await run_evals(changing(), _scorers(), store=store, batch_id="b", concurrency=1)
        rows = {(r.dataset_item_id, r.scorer_id): r for r in await store.list_run("b")}
    assert {rows[("x", s)].input["q"] for s in "abc"} == {"first"}
    assert {rows[("y", s)].input["q"] for s in "abc"} == {"second\ufffd"}


@pytest.mark.parametrize("value", [
    {"a": [1, 2.5, None, True], "b": {"c": "é\u2028"}}, "text \"quoted\"", 3, [], {},
])
def test_stored_json_is_what_json_dumps_writes(value: object) -> None:
    """The stores' one prebuilt encoder writes what json.dumps does (same text, same options)."""
    assert json_text(value) == json.dumps(value, ensure_ascii=False, allow_nan=False)


async def test_an_item_whose_target_raised_stores_a_failed_row_per_scorer(
    anyio_backend: str, tmp_path: Path
) -> None:
    """Rows built without a scorer result (the target raised) keep the item's input and its
    context, name the cause, and are failed: nothing in them is lost or said to be."""

    def target(item: Any) -> str:
        raise RuntimeError(f"no answer for {item.input}")

    data = [{"id": "x", "input": {"q": "why"}, "ground_truth": "because"}]
    async with SqliteScoreStore(tmp_path / "s.db") as store:
        await run_evals(data, _scorers(), store=store, batch_id="b", target=target)
        rows = await store.list_run("b")
    assert [(r.scorer_id, r.status, r.score) for r in rows] == [
        ("a", "failed", None), ("b", "failed", None), ("c", "failed", None)]
    for row in rows:
        assert row.input == {"q": "why"}
        assert row.output is None
        assert row.additional_context == {"groundTruth": "because"}
        assert row.metadata is not None
        assert row.metadata["cause"]["kind"] == "target raised"
        assert "sanitized" not in row.metadata
