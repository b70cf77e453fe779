"""The GenAI attributes before ``gen_ai.input.messages``: what OpenLLMetry/Traceloop and OpenLIT
still write.

* indexed messages, ``gen_ai.prompt.N.role`` / ``gen_ai.prompt.N.content`` and
  ``gen_ai.completion.N.*`` (with ``gen_ai.completion.N.tool_calls.M.name`` / ``.arguments``);
* whole strings, ``gen_ai.prompt`` / ``gen_ai.completion`` (OpenLIT), where each message is a
  line starting ``role: `` (a prompt without such a line is one user message).

Both become the current ``gen_ai.input.messages`` / ``gen_ai.output.messages``, which the GenAI
reader reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

_INDEXED: Final = re.compile(r"gen_ai\.(prompt|completion)\.(\d{1,9})\.(.+)")
_CALL: Final = re.compile(r"tool_calls\.(\d{1,9})\.(name|arguments|id)")
_LINE: Final = re.compile(r"(system|user|assistant|tool|developer): ?(.*)", re.DOTALL)


def _indexed(attributes: Mapping[str, object]) -> dict[str, list[dict[str, object]]]:
    found: dict[str, dict[int, dict[str, Any]]] = {"prompt": {}, "completion": {}}
    for key, value in attributes.items():
        match = _INDEXED.fullmatch(key)
        if match is None:
            continue
        message = found[match.group(1)].setdefault(int(match.group(2)), {"calls": {}})
        rest = match.group(3)
        if rest in ("role", "content"):
            message[rest] = value
        elif call := _CALL.fullmatch(rest):
            message["calls"].setdefault(int(call.group(1)), {})[call.group(2)] = value
    out: dict[str, list[dict[str, Any]]] = {}
    for side, messages in found.items():
        converted = []
        for index in sorted(messages):
            message = messages[index]
            parts: list[dict[str, object]] = []
            if isinstance(message.get("content"), str):
                parts.append({"type": "text", "content": message["content"]})
            parts += [{"type": "tool_call", **c} for _, c in sorted(message["calls"].items())]
            role = message.get("role")
            converted.append({"role": role if isinstance(role, str) else
                              ("user" if side == "prompt" else "assistant"), "parts": parts})
        if converted:
            out[side] = converted
    return out


def _lines(text: str) -> list[dict[str, object]]:
    messages: list[dict[str, Any]] = []
    for line in text.split("\n"):
        match = _LINE.fullmatch(line)
        if match is not None:
            messages.append({"role": match.group(1), "text": match.group(2)})
        elif messages:
            messages[-1]["text"] += "\n" + line
    if not messages:
        messages = [{"role": "user", "text": text}]
    return [{"role": m["role"], "parts": [{"type": "text", "content": m["text"]}]}
            for m in messages]


def legacy_messages(attributes: Mapping[str, object]) -> dict[str, object]:
    """The current message attributes the older ones amount to; empty when the span has the
    current ones or none of the older."""
    if "gen_ai.input.messages" in attributes:
        return {}
    out: dict[str, object] = {}
    indexed = _indexed(attributes)
    prompt, completion = attributes.get("gen_ai.prompt"), attributes.get("gen_ai.completion")
    if "prompt" in indexed:
        out["gen_ai.input.messages"] = indexed["prompt"]
    elif isinstance(prompt, str) and prompt:
        out["gen_ai.input.messages"] = _lines(prompt)
    if "completion" in indexed:
        out["gen_ai.output.messages"] = indexed["completion"]
    elif isinstance(completion, str) and completion:
        out["gen_ai.output.messages"] = [
            {"role": "assistant", "parts": [{"type": "text", "content": completion}]}]
    return out
