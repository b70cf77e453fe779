"""Realistic stored rows for report tests and benchmarks/report_size.py (no store needed)."""

from __future__ import annotations

from typing import Any

from scorecore.evals import ScoreRow

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
        question = f"Question {i}: " + "what does the retry-after header mean? " * (text // 40)
        answer = f"Answer {i}: " + "it says how long to wait before retrying. " * (text // 40)
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
