"""tool_call_accuracy: did the agent call the expected tool, or its tools in the expected order."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TypedDict

from scorecore import (
    AgentInput,
    AgentOutput,
    NotScorable,
    Scorer,
    ScorerDefinitionError,
    StepContext,
    create_scorer,
)
from scorecore.scorers._messages import tool_names
from scorecore.scorers._shapes import check_text, no_output_messages, refuse

__all__ = ["tool_call_accuracy"]


def in_order(called: Sequence[str], expected: Sequence[str], *, strict: bool) -> bool:
    """Whether ``called`` follows ``expected``.

    Strict: the two lists are equal. Otherwise the calls matching the expected tools must come
    in the expected order, other calls anywhere: the k-th mention of a tool in ``expected`` is
    its k-th call, and those calls' positions must increase.

    >>> in_order(["search", "lookup", "answer"], ["search", "answer"], strict=False)
    True
    >>> in_order(["answer", "search", "answer"], ["search", "answer"], strict=False)
    False
    >>> in_order(["search", "search"], ["search", "search"], strict=False)
    True
    """
    if strict:
        return list(called) == list(expected)
    positions: list[int] = []
    mentions: dict[str, int] = {}
    for tool in expected:
        occurrence = mentions.get(tool, 0)
        mentions[tool] = occurrence + 1
        found = [i for i, name in enumerate(called) if name == tool]
        if occurrence >= len(found):
            return False
        positions.append(found[occurrence])
    return all(a < b for a, b in pairwise(positions))


class _Calls(TypedDict):
    actual_tools: list[str]
    expected_tool: str | None
    expected_tool_order: list[str] | None
    strict_mode: bool
    correct_tool_called: bool | None
    correct_order_called: bool | None
    score: float


def tool_call_accuracy(
    *,
    expected_tool: str | None = None,
    strict_mode: bool = False,
    expected_tool_order: Sequence[str] | None = None,
    id: str = "code-tool-call-accuracy-scorer",
) -> Scorer[AgentInput, AgentOutput]:
    """1 if the agent called the expected tool (or its tools in the expected order), else 0.

    With ``expected_tool_order`` (it decides alone when both are given): strict mode needs
    exactly that list of calls; otherwise ``in_order``. With ``expected_tool``: strict mode
    needs exactly one call, to that tool; otherwise any call to it. An agent that called no
    tool scores 0: the expectation was not met.

    Calls are the output messages' tool invocations (parts and the legacy list merged) in
    state ``result``, ``call`` or ``output-error``.

    Args:
        expected_tool: the tool that should have been called.
        strict_mode: require exactly the expected call(s) and nothing else.
        expected_tool_order: the tools that should have been called, in order.
        id: the scorer's id (Mastra's ``code-tool-call-accuracy-scorer`` by default).

    Raises:
        ScorerDefinitionError: neither expectation given, an empty tool name, or an empty
            order without ``expected_tool`` (with it, an empty order is ignored, as in Mastra).

    Not scorable when the output has no messages.

    >>> from scorecore.agent import AgentMessage, MessageContent, ToolInvocation, ToolInvocationPart
    >>> call = ToolInvocation(tool_call_id="c1", tool_name="weather", result="sunny")
    >>> answer = AgentMessage(role="assistant", content=MessageContent(
    ...     parts=(ToolInvocationPart(tool_invocation=call),)))
    >>> scorer = tool_call_accuracy(expected_tool="weather")
    >>> scorer.run_sync(input={}, output=[answer]).unwrap().score
    1.0
    """
    if expected_tool is None and expected_tool_order is None:
        raise ScorerDefinitionError(
            f"scorer {id!r}: give expected_tool or expected_tool_order",
            scorer_id=id, field="expected_tool",
        )
    if expected_tool is not None:
        check_text(id, "expected_tool", expected_tool)
    order: list[str] | None = None
    if expected_tool_order is not None:
        if isinstance(expected_tool_order, str) or (
                not expected_tool_order and expected_tool is None):
            raise refuse(id, "expected_tool_order", "a non-empty list of tool names",
                         expected_tool_order)
        # An empty order next to expected_tool is ignored, as Mastra ignores it.
        order = [check_text(id, "expected_tool_order[]", name)
                 for name in expected_tool_order] or None
    strict = bool(strict_mode)

    def preprocess(ctx: StepContext[AgentInput, AgentOutput, None, None]) -> _Calls | NotScorable:
        missing = no_output_messages(ctx.run, "agent")
        if missing is not None:
            return missing
        called = tool_names(ctx.run.output)
        tool_ok = None
        if expected_tool is not None:
            tool_ok = (called == [expected_tool]) if strict else expected_tool in called
        order_ok = None if order is None else in_order(called, order, strict=strict)
        passed = order_ok if order_ok is not None else bool(tool_ok)
        return {"actual_tools": called, "expected_tool": expected_tool,
                "expected_tool_order": order, "strict_mode": strict,
                "correct_tool_called": tool_ok, "correct_order_called": order_ok,
                "score": 1.0 if passed else 0.0}

    description = (
        f"Whether the agent called its tools in the order {order}" if order is not None
        else f"Whether the agent called the tool {expected_tool!r}"
    )
    return (
        create_scorer(id=id, name="Tool Call Accuracy Scorer", description=description,
                      type="agent")
        .preprocess(preprocess)
        .generate_score(lambda ctx: ctx.results.preprocess_step_result["score"])
    )

