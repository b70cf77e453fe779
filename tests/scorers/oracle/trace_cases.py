"""Write the trace-extraction parity cases as JSON on stdout (run_mastra_trace.mjs extracts them).

Seeded: random span forests (every step type, skipped types, unknown and dangling parents,
tied start times, tools with entity ids or names, model usage, odd inputs and outputs),
extracted from all roots or from a chosen span.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

TYPES = ["agent_run", "workflow_run", "workflow_step", "tool_call", "mcp_tool_call",
         "provider_tool_call", "model_generation", "processor_run", "workflow_loop",
         "generic", "model_chunk", "scorer_run", "made_up_type"]
VALUES: list[Any] = [None, "text", 3, [1, 2], {"k": "v"}, True, {}]


def stamp(second: int) -> str:
    return f"2025-01-01T00:{second // 60:02d}:{second % 60:02d}.000Z"


def span(rng: random.Random, index: int, ids: list[str]) -> dict[str, Any]:
    kind = rng.choice(TYPES)
    start = rng.randint(0, 20)
    out: dict[str, Any] = {"spanId": f"s{index}", "traceId": "t", "spanType": kind,
                           "name": rng.choice([f"{kind} {index}", "same"]),
                           "startedAt": stamp(start)}
    if ids and rng.random() < 0.75:
        out["parentSpanId"] = rng.choice(ids)
    elif rng.random() < 0.1:
        out["parentSpanId"] = "missing"
    if rng.random() < 0.6:
        out["endedAt"] = stamp(start + rng.randint(0, 5))
    if rng.random() < 0.5:
        out["entityId"] = rng.choice(["search", "fetch", "agent-1"])
    if rng.random() < 0.3:
        out["entityName"] = rng.choice(["Search", "Fetch"])
    if rng.random() < 0.6:
        out["input"] = rng.choice(VALUES)
    if rng.random() < 0.6:
        out["output"] = rng.choice(VALUES)
    attributes: dict[str, Any] = {}
    if rng.random() < 0.4:
        attributes["success"] = rng.choice([True, False, "yes"])
    if kind == "model_generation" and rng.random() < 0.7:
        attributes["model"] = "gpt"
        attributes["usage"] = {"inputTokens": rng.randint(0, 9), "outputTokens": rng.randint(0, 9)}
        attributes["finishReason"] = "stop"
    if kind == "mcp_tool_call" and rng.random() < 0.7:
        attributes["mcpServer"] = "srv"
    if attributes:
        out["attributes"] = attributes
    if rng.random() < 0.2:
        out["metadata"] = {"m": index}
    return out


def cases() -> list[dict[str, Any]]:
    rng = random.Random(17)  # noqa: S311 - a reproducible corpus, not a secret
    found = []
    for _ in range(200):
        spans: list[dict[str, Any]] = []
        for index in range(rng.randint(1, 9)):
            spans.append(span(rng, index, [s["spanId"] for s in spans]))
        rng.shuffle(spans)
        root = rng.choice([None, None, rng.choice(spans)["spanId"], "absent"])
        found.append({"spans": spans, "rootSpanId": root})
    return found


if __name__ == "__main__":
    json.dump(cases(), sys.stdout)
