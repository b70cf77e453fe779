"""Stored batches for the workbench's tests: a store file with known rows."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import anyio

from scorecore.evals import ScoreRow
from scorecore_adapters.storage import PostgresScoreStore, SqliteScoreStore


def rows(batch_id: str, items: int, *, shift: float = 0.0, text: str = "") -> list[ScoreRow]:
    """Two scorers over ``items`` items: ``judge`` (scores spread over [0, 1], judge calls
    with usage; every 10th not scorable) and ``exact`` (pass/fail)."""
    made = []
    for i in range(items):
        item = f"item-{i:03d}"
        base: dict[str, Any] = {"run_id": f"{batch_id}:{item}", "batch_id": batch_id,
                                "dataset_item_id": item, "input": f"question {i} {text}",
                                "output": f"answer {i} {text}"}
        score = max(0.0, min(1.0, ((i * 37) % 100) / 100 - shift))
        if i % 10 == 9:
            made.append(ScoreRow(
                id=f"{batch_id}/{item}/j", scorer_id="judge", status="not_scorable",
                reason=f"no claims {text}", metadata={
                    "itemIndex": i, "notScorable": {"kind": "empty_output",
                                                     "message": f"nothing to judge {text}"}},
                **base))
        else:
            made.append(ScoreRow(
                id=f"{batch_id}/{item}/j", scorer_id="judge", status="scored", score=score,
                reason=f"{round(score * 10)} of 10 claims hold {text}",
                analyze_prompt=f"List the claims {text}",
                metadata={"itemIndex": i, "judge": {"analyze": {"executions": [{
                    "status": "success", "prompt": f"List the claims {text}",
                    "rawOutput": f'{{"claims": ["{text}"]}}', "judgeModelId": "gpt-4o-mini",
                    "modelCallCount": 1, "costUsd": 0.0001,
                    "usage": {"inputTokens": 120, "outputTokens": 14}}]}}},
                **base))
        made.append(ScoreRow(id=f"{batch_id}/{item}/e", scorer_id="exact", status="scored",
                             score=float(i % 3 != 0), reason=f"exact {text}",
                             metadata={"itemIndex": i}, **base))
    return made


def scaled_rows(batch_id: str, items: int = 12) -> list[ScoreRow]:
    """Three scorers on three scales: ``binary`` (0/1), ``likert`` (1, 2 or 3, each often)
    and ``spread`` (continuous over [0, 1])."""
    made = []
    for i in range(items):
        for scorer, score in (("binary", float(i % 2)), ("spread", i / (items - 1)),
                              ("likert", (1.0, 2.0, 3.0)[i % 3])):
            made.append(ScoreRow(id=f"{batch_id}/{i}/{scorer}", scorer_id=scorer,
                                 run_id=f"{batch_id}:{i:02d}", batch_id=batch_id,
                                 status="scored", score=score, dataset_item_id=f"i{i:02d}",
                                 metadata={"itemIndex": i}))
    return made


T = TypeVar("T")


def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a thread of its own: Playwright's sync API keeps an event loop
    running in the test's thread, and ``anyio.run`` (the CLI's too) needs none running."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def store_with(where: Path | str, *batches: list[ScoreRow]) -> str:
    """A store holding ``batches`` (SQLite at a path, or the PostgreSQL database a DSN
    names); its URL."""

    async def save() -> None:
        store = (SqliteScoreStore(where) if isinstance(where, Path)
                 else PostgresScoreStore(where))
        async with store:
            for batch in batches:
                await store.save(batch)

    off_loop(anyio.run, save)
    return f"sqlite:{where}" if isinstance(where, Path) else where
