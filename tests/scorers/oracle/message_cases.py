"""Write the message-extraction parity cases as JSON on stdout (run_mastra_messages.mjs).

Seeded: assistant and other messages holding tool invocations as parts, as a legacy
``toolInvocations`` list, or both with shared and unshared call ids, in every state, with
object and non-object arguments and results, error flags and missing tool names.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

EPOCH = "1970-01-01T00:00:00.000Z"
STATES = ["result", "result", "call", "output-error", "partial-call"]
VALUES: list[Any] = [{"q": 1}, {}, "text", 7, [1, 2], None]


def invocation(rng: random.Random, call_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {"toolCallId": call_id, "toolName": rng.choice(["a", "b", "c", ""]),
                           "state": rng.choice(STATES)}
    args = rng.choice(VALUES)
    if args is not None:
        out["args"] = args
    result = rng.choice(VALUES)
    if result is not None and rng.random() < 0.8:
        out["result"] = result
    if rng.random() < 0.2:
        out["isError"] = rng.choice([True, False])
    return out


def message(rng: random.Random, index: int) -> dict[str, Any]:
    ids = [f"id{index}-{k}" for k in range(4)]
    parts: list[dict[str, Any]] = []
    legacy: list[dict[str, Any]] = []
    for call_id in ids:
        where = rng.choice(["part", "legacy", "both", "none"])
        if where in ("part", "both"):
            parts.append({"type": "tool-invocation",
                          "toolInvocation": invocation(rng, call_id)})
        if where in ("legacy", "both"):
            legacy.append(invocation(rng, call_id))
    if rng.random() < 0.5:
        parts.append({"type": "text", "text": "Done."})
    body: dict[str, Any] = {"format": 2, "parts": parts}
    if legacy:
        body["toolInvocations"] = legacy
    role = rng.choice(["assistant", "assistant", "user"])
    return {"id": f"m{index}", "role": role, "createdAt": EPOCH, "content": body}


def cases() -> list[dict[str, Any]]:
    rng = random.Random(19)  # noqa: S311 - a reproducible corpus, not a secret
    return [{"output": [message(rng, i) for i in range(rng.randint(1, 3))]} for _ in range(150)]


if __name__ == "__main__":
    json.dump(cases(), sys.stdout)
