"""What the built-in LLM scorers read from a run, and the checks of their options."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, cast

from scorecore import AgentInput, NotScorable, not_scorable
from scorecore.agent import AgentMessage
from scorecore.scorers._messages import message_text
from scorecore.scorers._shapes import refuse
from scorecore.scorers._strings import is_blank

__all__: list[str] = []  # internal: the building blocks of the built-in LLM scorers


def check_scale(scorer_id: str, scale: object) -> float:
    """``scale`` as a float if it is a finite number > 0."""
    ok = not isinstance(scale, bool) and isinstance(scale, int | float)
    if not ok or not math.isfinite(float(scale)) or float(scale) <= 0:  # type: ignore[arg-type]
        raise refuse(scorer_id, "scale", "a finite number > 0", scale)
    return float(scale)  # type: ignore[arg-type]


def check_texts(scorer_id: str, field: str, value: object) -> tuple[str, ...] | None:
    """``None``, or a list of strings (a lone ``str`` is refused: it is not a list)."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not all(
            isinstance(v, str) for v in value):
        raise refuse(scorer_id, field, "a list of str", value)
    return tuple(value)


UNIT_INTERVAL: Final[Mapping[str, Any]] = {
    "json_schema": {"minimum": 0, "maximum": 1}, "description": "From 0 to 1."}
"""Field metadata saying "from 0 to 1" in the schema the judge receives, in words and as
bounds, so a judge decoding under the schema (strict structured output, a grammar) is held to
it, not only told: ``score: float = attrs.field(validator=unit_interval,
metadata=UNIT_INTERVAL)`` (``unit_interval`` refuses any other score: a format failure, asked
again)."""


def user_text(agent_input: AgentInput) -> str:
    """The first user message's text (Mastra's ``getUserMessageFromRunInput``), or ``""``."""
    for message in agent_input.input_messages:
        if message.role == "user":
            return message_text(message)
    return ""


def assistant_text(output: Sequence[AgentMessage]) -> str:
    """The last assistant message with text (a trailing tool-call-only message is skipped),
    or ``""`` (Mastra's ``getAssistantMessageFromRunOutput``)."""
    for message in reversed(output):
        if message.role == "assistant":
            text = message_text(message)
            if text:
                return text
    return ""


def system_text(agent_input: AgentInput) -> str:
    """Every system prompt the agent had, joined by blank lines: ``system_messages``, system
    messages among the input messages, and every tagged system message."""
    texts = [m.content for m in agent_input.system_messages]
    texts += [message_text(m) for m in agent_input.input_messages if m.role == "system"]
    texts += [m.content for group in agent_input.tagged_system_messages.values() for m in group]
    return "\n\n".join(t for t in texts if t)


def has_text(text: str) -> bool:
    """Whether ``text`` holds more than whitespace."""
    return not is_blank(text)


def need_answer(output: Sequence[AgentMessage], what: str = "answer") -> str | NotScorable:
    """The answer (the last assistant message with text), or not scorable without one (the
    reason calls it ``what``: the scorer's word for it)."""
    answer = assistant_text(output)
    if not has_text(answer):
        return not_scorable(f"no {what}: run.output has no assistant message with text")
    return answer


def need_question(agent_input: AgentInput, what: str = "question") -> str | NotScorable:
    """The question (the first user message's text), or not scorable without one (the reason
    calls it ``what``: the scorer's word for it, "task", "request"...)."""
    question = user_text(agent_input)
    if not has_text(question):
        return not_scorable(f"no {what}: run.input has no user message with text")
    return question


def question_and_answer(
    agent_input: AgentInput, output: Sequence[AgentMessage], *, question: str = "question",
    answer: str = "answer",
) -> tuple[str, str] | NotScorable:
    """The question and the answer (:func:`need_question`, :func:`need_answer`, each called
    by the scorer's word for it), or not scorable without either (the question is checked
    first)."""
    asked = need_question(agent_input, question)
    if isinstance(asked, NotScorable):
        return asked
    answered = need_answer(output, answer)
    return answered if isinstance(answered, NotScorable) else (asked, answered)


def need_reference(ground_truth: object) -> str | NotScorable:
    """The ground truth as text (:func:`reference_text`), or not scorable without one."""
    reference = reference_text(ground_truth)
    if not has_text(reference):
        return not_scorable("no ground truth: run.ground_truth is missing or blank")
    return reference


def reference_text(value: object) -> str:
    """A ground truth as text: a ``str`` as is, anything else as JSON, ``None`` as ``""``."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)


def context_pieces(value: object) -> tuple[str, ...]:
    """The context pieces a user function returned: a lone ``str`` is one piece (not one per
    character); from a list, the strings holding text (anything else is dropped rather than
    sent to the judge).

    >>> context_pieces("Paris is in France.")
    ('Paris is in France.',)
    >>> context_pieces(["a", 3, " ", None, "b"])
    ('a', 'b')
    """
    if isinstance(value, str):
        return (value,) if has_text(value) else ()
    if isinstance(value, bytes | bytearray) or not isinstance(value, Iterable):
        return ()
    return tuple(p for p in cast(Iterable[object], value)
                 if isinstance(p, str) and has_text(p))
