"""Small builders for agent runs used by the built-in scorer tests."""

from __future__ import annotations

from typing import Any

from returns.result import Result

from scorecore import AgentInput, ScoreResult, ScorerRunError
from scorecore.agent import (
    AgentMessage,
    MessageContent,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)


def said(role: Any, *texts: str) -> AgentMessage:
    """A message with one text part per text."""
    return AgentMessage(role=role, content=MessageContent(
        parts=tuple(TextPart(text=t) for t in texts)))


def asked(*texts: str) -> AgentInput:
    """An agent input of user messages."""
    return AgentInput(input_messages=tuple(said("user", t) for t in texts))


def called(*calls: ToolInvocation | str, text: str = "Done.") -> tuple[AgentMessage, ...]:
    """One assistant message holding the calls (a name means a finished call) and a text."""
    invocations = [
        ToolInvocation(tool_call_id=f"c{i}", tool_name=c, result="ok") if isinstance(c, str) else c
        for i, c in enumerate(calls)
    ]
    parts: tuple[Any, ...] = (*(ToolInvocationPart(tool_invocation=c) for c in invocations),
                              TextPart(text=text))
    return (AgentMessage(role="assistant", content=MessageContent(parts=parts)),)


def score_of(outcome: Result[ScoreResult[Any, Any], ScorerRunError]) -> float | None:
    """The score of a successful run (``None`` when not scorable)."""
    return outcome.unwrap().score


def missing_of(outcome: Result[ScoreResult[Any, Any], ScorerRunError]) -> str:
    """The not-scorable reason of a successful run (fails if the run was scored)."""
    marker = outcome.unwrap().not_scorable
    assert marker is not None, f"expected not scorable, got score {outcome.unwrap().score}"
    assert marker.reason
    return marker.reason
