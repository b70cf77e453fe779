"""Realistic stored rows for report tests and benchmarks/report_size.py (no store needed)."""

from __future__ import annotations

import itertools
import random
from typing import Any

from scorecore.evals import ScoreRow

_SYLLABLES = [c + v for c in "bcdfghklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ou", "ai")]
_VOCABULARY = [
    "".join(random.Random(n).choices(_SYLLABLES, k=1 + n % 3))  # noqa: S311 - test data
    for n in range(3_000)
]
# Zipf-like weights: a few words are common, most are rare, as in prose.
_CUMULATIVE = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(_VOCABULARY))))


def prose(seed: int, size: int) -> str:
    """About ``size`` characters of word-like text, different for each seed (compresses about
    as well as English, unlike a repeated sentence)."""
    rng = random.Random(seed)  # noqa: S311 - test data
    text = " ".join(rng.choices(_VOCABULARY, cum_weights=_CUMULATIVE, k=size // 5 + 1))
    return text[:size]

FAILURE = ("scorer 'faithfulness' failed at step 'analyze' (completed: preprocess): judge call "
           "failed after 3 call(s) (budget spent): network: openai connection failed")


def _judge(prompt: str, reply: str) -> dict[str, object]:
    return {"analyze": {"executions": [{
        "status": "success", "prompt": prompt, "output": {"claims": ["c"]},
        "judgeModelId": "gpt-4o-mini", "judgeProvider": "openai", "attemptCount": 1,
        "modelCallCount": 1, "usage": {"inputTokens": 120, "outputTokens": 14,
                                       "totalTokens": 134}, "rawOutput": reply}]}}


def batch_rows(batch_id: str, items: int, *, shift: float = 0.0, text: int = 120
               ) -> list[ScoreRow]:
    """Three scorers over ``items`` items: a judge scorer (prompts, replies, usage; every 50th
    item fails), a function scorer (every 20th not scorable) and a pass/fail check."""
    rows = []
    for i in range(items):
        item = f"item-{i:05d}"
        question = f"Question {i}: " + prose(i, text)
        answer = f"Answer {i}: " + prose(-i - 1, text)
        base: dict[str, Any] = {"run_id": f"{batch_id}:{item}", "batch_id": batch_id,
                                "dataset_item_id": item, "input": question, "output": answer}
        score = max(0.0, min(1.0, ((i * 7919) % 100) / 100 - shift))
        prompt = f"List the claims in: {answer}"
        if i % 50 == 49:
            rows.append(ScoreRow(id=f"{item}/f", scorer_id="faithfulness", status="failed",
                                 metadata={"status": "failed", "itemIndex": i, "error": FAILURE,
                                           "failedStep": "analyze",
                                           "completedSteps": ["preprocess"]}, **base))
        else:
            rows.append(ScoreRow(
                id=f"{item}/f", scorer_id="faithfulness", status="scored", score=score,
                reason=f"{round(score * 10)} of 10 claims are supported",
                analyze_prompt=prompt, analyze_step_result={"claims": ["c"] * 3},
                metadata={"status": "scored", "itemIndex": i,
                          "judge": _judge(prompt, '{"claims": ["c", "c", "c"]}')}, **base))
        if i % 20 == 19:
            rows.append(ScoreRow(id=f"{item}/k", scorer_id="keyword-coverage",
                                 status="not_scorable", reason="the item lists no keywords",
                                 metadata={"status": "not_scorable", "itemIndex": i}, **base))
        else:
            rows.append(ScoreRow(id=f"{item}/k", scorer_id="keyword-coverage", status="scored",
                                 score=(i % 4) / 3, reason="missing: Retry-After",
                                 analyze_step_result={"found": ["429"], "missing": ["x"]},
                                 metadata={"status": "scored", "itemIndex": i}, **base))
        rows.append(ScoreRow(id=f"{item}/a", scorer_id="answer-match", status="scored",
                             score=float(i % 3 != 0), metadata={"status": "scored",
                                                                 "itemIndex": i}, **base))
    return rows
