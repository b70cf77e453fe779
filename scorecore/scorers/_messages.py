"""Reading agent runs the way Mastra's built-in scorers read them: texts and tool calls."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from scorecore.agent import AgentMessage, TextPart, ToolInvocation, merged_tool_invocations

CALL_STATES: Final = frozenset({"result", "call", "output-error"})
"""States of a tool invocation that count as a call: a thrown call ran; a partial one did not."""


def message_text(message: AgentMessage) -> str:
    """A message's text as Mastra's ``getTextContentFromMastraDBMessage`` reads it.

    A non-empty ``content.content``, else the **last** text part, else ``""``. Mastra never
    joins text parts (unlike :meth:`scorecore.AgentMessage.text`); neither does this, so the
    scores agree with Mastra's.
    """
    content = message.content
    if content.content:
        return content.content
    texts = [part.text for part in content.parts or () if isinstance(part, TextPart)]
    return texts[-1] if texts else ""


def joined_text(messages: Iterable[AgentMessage], separator: str) -> str:
    """The :func:`message_text` of each message, joined with ``separator``."""
    return separator.join(message_text(m) for m in messages)


def _calls(messages: Iterable[AgentMessage]) -> Iterator[ToolInvocation]:
    for message in messages:
        yield from merged_tool_invocations(message)


def tool_names(messages: Iterable[AgentMessage]) -> list[str]:
    """The names of the tools called in ``messages`` (any role), in order (``extractToolCalls``).

    A call counts in state ``result``, ``call`` or ``output-error`` (a tool that threw ran);
    ``partial-call`` does not, nor does a call without a tool name.
    """
    return [call.tool_name for call in _calls(messages)
            if call.tool_name and call.state in CALL_STATES]


def _js_truthy(value: Any) -> bool:
    # JavaScript's truthiness, not Python's: an empty list or object is truthy there.
    if value is None or value is False or value == "":
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    return True


def is_failed_invocation(call: ToolInvocation) -> bool:
    """Whether a tool invocation failed: never finished, threw, flagged ``is_error``, or its
    result carries a truthy ``error`` (Mastra's ``isErrorInvocation``)."""
    if call.state in ("call", "output-error") or call.is_error is True:
        return True
    result = call.result
    return isinstance(result, Mapping) and _js_truthy(result.get("error"))


def all_invocations(messages: Iterable[AgentMessage]) -> list[ToolInvocation]:
    """Every merged invocation of ``messages``, in any state."""
    return list(_calls(messages))
