"""Pass/fail checks on the tools the agent called."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from scorecore import AgentInput, AgentOutput, NotScorable, Scorer, StepContext, create_scorer
from scorecore.agent import AgentMessage
from scorecore.scorers._messages import all_invocations, is_failed_invocation, tool_names
from scorecore.scorers._shapes import check_text, no_output_messages, refuse
from scorecore.validators import check_count

__all__ = [
    "called_tool",
    "did_not_call",
    "max_tool_calls",
    "no_tool_errors",
    "tool_order",
    "used_no_tools",
]


def _tool_check(
    *, id: str, name: str, description: str,
    verdict: Callable[[AgentOutput], dict[str, Any]],
) -> Scorer[AgentInput, AgentOutput]:
    def preprocess(
        ctx: StepContext[AgentInput, AgentOutput, None, None],
    ) -> dict[str, Any] | NotScorable:
        missing = no_output_messages(ctx.run, "agent")
        if missing is not None:
            return missing
        return verdict(ctx.run.output)

    return (
        create_scorer(id=id, name=name, description=description, type="agent")
        .preprocess(preprocess)
        .generate_score(lambda ctx: 1.0 if ctx.results.preprocess_step_result["passed"] else 0.0)
    )


def called_tool(
    tool_name: str, *, times: int = 1, id: str = "check-called-tool"
) -> Scorer[AgentInput, AgentOutput]:
    """1 if the agent called ``tool_name`` at least ``times`` times, else 0.

    A call counts in state ``result``, ``call`` or ``output-error`` (a tool that threw still
    ran); a ``partial-call`` does not.

    >>> from scorecore.agent import AgentMessage, MessageContent, ToolInvocation, ToolInvocationPart
    >>> call = ToolInvocation(tool_call_id="c1", tool_name="search", state="output-error")
    >>> answer = AgentMessage(role="assistant", content=MessageContent(
    ...     parts=(ToolInvocationPart(tool_invocation=call),)))
    >>> called_tool("search").run_sync(input={}, output=[answer]).unwrap().score
    1.0
    """
    check_text(id, "tool_name", tool_name)
    needed = check_count("times", times, minimum=1, scorer_id=id)

    def verdict(output: AgentOutput) -> dict[str, Any]:
        count = tool_names(output).count(tool_name)
        return {"tool_name": tool_name, "expected_times": needed, "actual_count": count,
                "passed": count >= needed}

    return _tool_check(
        id=id, name="Called Tool Check", verdict=verdict,
        description=f"Checks that {tool_name!r} was called"
        + (f" at least {needed} times" if needed > 1 else ""),
    )


def did_not_call(
    tool_name: str, *, id: str = "check-did-not-call"
) -> Scorer[AgentInput, AgentOutput]:
    """1 if the agent never called ``tool_name``, else 0 (calls counted as in
    :func:`called_tool`).

    >>> from scorecore.agent import AgentMessage, MessageContent, TextPart
    >>> answer = AgentMessage(role="assistant", content=MessageContent(
    ...     parts=(TextPart(text="Done."),)))
    >>> did_not_call("delete_user").run_sync(input={}, output=[answer]).unwrap().score
    1.0
    """
    check_text(id, "tool_name", tool_name)

    def verdict(output: AgentOutput) -> dict[str, Any]:
        count = tool_names(output).count(tool_name)
        return {"tool_name": tool_name, "count": count, "passed": count == 0}

    return _tool_check(id=id, name="Did Not Call Check", verdict=verdict,
                       description=f"Checks that {tool_name!r} was not called")


def tool_order(
    expected_order: Sequence[str], *, id: str = "check-tool-order"
) -> Scorer[AgentInput, AgentOutput]:
    """1 if the calls contain ``expected_order`` as a subsequence (other calls may come
    between), else 0.

    >>> tool_order(["search", "summarize"]).description
    'Checks tool call order: search → summarize'
    """
    if isinstance(expected_order, str) or not expected_order:
        raise refuse(id, "expected_order", "a non-empty list of tool names", expected_order)
    order = [check_text(id, "expected_order[]", name) for name in expected_order]

    def verdict(output: AgentOutput) -> dict[str, Any]:
        called = tool_names(output)
        matched = 0
        for tool in called:
            if matched < len(order) and tool == order[matched]:
                matched += 1
        return {"actual_tools": called, "expected_order": order,
                "passed": matched == len(order)}

    return _tool_check(id=id, name="Tool Order Check", verdict=verdict,
                       description=f"Checks tool call order: {' → '.join(order)}")


def max_tool_calls(
    maximum: int, *, id: str = "check-max-tool-calls"
) -> Scorer[AgentInput, AgentOutput]:
    """1 if the agent made at most ``maximum`` tool calls, else 0.

    >>> max_tool_calls(5).description
    'Checks that no more than 5 tool calls were made'
    """
    limit = check_count("maximum", maximum, minimum=0, scorer_id=id)

    def verdict(output: AgentOutput) -> dict[str, Any]:
        count = len(tool_names(output))
        return {"count": count, "max": limit, "passed": count <= limit}

    return _tool_check(id=id, name="Max Tool Calls Check", verdict=verdict,
                       description=f"Checks that no more than {limit} tool calls were made")


def used_no_tools(*, id: str = "check-used-no-tools") -> Scorer[AgentInput, AgentOutput]:
    """1 if the agent called no tool (a ``partial-call`` is not a call), else 0.

    >>> used_no_tools().id
    'check-used-no-tools'
    """

    def verdict(output: AgentOutput) -> dict[str, Any]:
        count = len(tool_names(output))
        return {"count": count, "passed": count == 0}

    return _tool_check(id=id, name="Used No Tools Check", verdict=verdict,
                       description="Checks that no tools were called")


def _failed(messages: Sequence[AgentMessage]) -> tuple[int, int]:
    calls = all_invocations(messages)
    return sum(1 for c in calls if is_failed_invocation(c)), len(calls)


def no_tool_errors(*, id: str = "check-no-tool-errors") -> Scorer[AgentInput, AgentOutput]:
    """1 if no tool invocation failed, else 0.

    A failure is an invocation left in state ``call`` (never finished) or ``output-error``
    (threw), one with ``is_error=True``, or one whose result is a mapping with a truthy (in
    JavaScript's sense) ``error``. A ``partial-call`` is not a failure.

    >>> no_tool_errors().id
    'check-no-tool-errors'
    """

    def verdict(output: AgentOutput) -> dict[str, Any]:
        errors, total = _failed(output)
        return {"error_count": errors, "total_calls": total, "passed": errors == 0}

    return _tool_check(id=id, name="No Tool Errors Check", verdict=verdict,
                       description="Checks that no tool calls resulted in errors")
