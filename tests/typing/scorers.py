"""Checked by ``mypy --strict``, never executed: the types of the built-in scorers."""

from __future__ import annotations

from typing import Any, assert_type

from scorecore import AgentInput, AgentOutput, Scorer
from scorecore.scorers import (
    checks,
    completeness,
    content_similarity,
    keyword_coverage,
    textual_difference,
    tone,
    tool_call_accuracy,
)

# --- agent runs by default, plain strings with type="text" ----------------------------------

assert_type(completeness(), Scorer[AgentInput, AgentOutput])
assert_type(completeness(type="text"), Scorer[str, str])
assert_type(content_similarity(ignore_case=False), Scorer[AgentInput, AgentOutput])
assert_type(content_similarity(type="text"), Scorer[str, str])
assert_type(textual_difference(), Scorer[AgentInput, AgentOutput])
assert_type(textual_difference(type="text"), Scorer[str, str])
assert_type(keyword_coverage(type="agent"), Scorer[AgentInput, AgentOutput])
assert_type(keyword_coverage(type="text"), Scorer[str, str])
assert_type(tone(reference_tone="calm"), Scorer[AgentInput, AgentOutput])
assert_type(tone(type="text"), Scorer[Any, str])
assert_type(tool_call_accuracy(expected_tool="search"), Scorer[AgentInput, AgentOutput])

assert_type(checks.includes("x"), Scorer[AgentInput, AgentOutput])
assert_type(checks.includes("x", type="text"), Scorer[Any, str])
assert_type(checks.excludes("x", type="text"), Scorer[Any, str])
assert_type(checks.equals("x", type="text"), Scorer[Any, str])
assert_type(checks.matches(r"\d+", exact=True, type="text"), Scorer[Any, str])
assert_type(checks.similarity("x", threshold=0.5, type="text"), Scorer[Any, str])
assert_type(checks.called_tool("search", times=2), Scorer[AgentInput, AgentOutput])
assert_type(checks.did_not_call("delete"), Scorer[AgentInput, AgentOutput])
assert_type(checks.tool_order(["a", "b"]), Scorer[AgentInput, AgentOutput])
assert_type(checks.max_tool_calls(3), Scorer[AgentInput, AgentOutput])
assert_type(checks.used_no_tools(), Scorer[AgentInput, AgentOutput])
assert_type(checks.no_tool_errors(), Scorer[AgentInput, AgentOutput])

# --- assignable where users keep scorers -------------------------------------------------------

text_scorers: list[Scorer[str, str]] = [completeness(type="text"), keyword_coverage(type="text")]
agent_scorers: list[Scorer[AgentInput, AgentOutput]] = [
    completeness(), tone(), checks.no_tool_errors(), tool_call_accuracy(expected_tool="x"),
]
any_scorers: list[Scorer[Any, Any]] = [completeness(), checks.includes("x", type="text")]


async def run_text() -> float | None:
    result = await textual_difference(type="text").run(input="kitten", output="sitting")
    return result.unwrap().score


# --- rejected: the wrong shape, the wrong options ----------------------------------------------

wrong_shape: Scorer[str, str] = completeness()  # type: ignore[assignment]
tool_scorer_on_text: Scorer[str, str] = checks.called_tool("x")  # type: ignore[assignment]
tone(type="json")  # type: ignore[call-overload]
checks.includes(3)  # type: ignore[call-overload]
checks.matches(b"x")  # type: ignore[call-overload]
checks.tool_order("search", id=1)  # type: ignore[arg-type]
tool_call_accuracy(expected_tool=["a"])  # type: ignore[arg-type]


async def run_wrong_output() -> None:
    await content_similarity(type="text").run(input="a", output=42)  # type: ignore[arg-type]
