"""scorecore.scorers.checks and tool_call_accuracy: what counts as text and as a call, each
rule, and not scorable without output messages."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scorecore import AgentInput, ScorerDefinitionError
from scorecore.agent import (
    AgentMessage,
    MessageContent,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)
from scorecore.agent import merged_tool_invocations as merged_invocations
from scorecore.scorers import TEXT, checks, tool_call_accuracy
from scorecore.scorers._messages import message_text, tool_names
from scorecore.scorers._tool_calls import in_order
from tests.scorers.helpers import called, missing_of, said, score_of

pytestmark = pytest.mark.anyio

NO_INPUT = AgentInput()


def inv(
    name: str, state: Any = "result", call_id: str | None = None, **extra: Any
) -> ToolInvocation:
    return ToolInvocation(tool_call_id=call_id or name, tool_name=name, state=state, **extra)


def test_message_text_is_mastras() -> None:
    """A message's text is a non-empty content string, else its last text part."""
    assert message_text(said("assistant", "first", "last")) == "last"
    both = AgentMessage(role="assistant", content=MessageContent(
        content="whole", parts=(TextPart(text="part"),)))
    assert message_text(both) == "whole"
    empty = AgentMessage(role="assistant", content=MessageContent(
        content="", parts=(TextPart(text="part"),)))
    assert message_text(empty) == "part"
    assert message_text(AgentMessage(role="assistant", content=MessageContent())) == ""


def test_merged_invocations() -> None:
    """Parts win over the legacy list for a shared id; a legacy-only call goes before the next
    shared call; the remaining legacy-only calls come last."""
    message = AgentMessage(role="assistant", content=MessageContent(
        parts=(ToolInvocationPart(tool_invocation=inv("search", call_id="s")),),
        tool_invocations=(inv("lookup", call_id="l"), inv("search", "call", call_id="s"),
                          inv("fetch", call_id="f")),
    ))
    merged = merged_invocations(message)
    assert [(c.tool_name, c.state) for c in merged] == [
        ("lookup", "result"), ("search", "result"), ("fetch", "result")]
    partial = called(inv("a", "partial-call"), inv("b", "output-error"), inv("c", "call"))
    assert tool_names(partial) == ["b", "c"]


async def test_text_checks_read_assistant_text() -> None:
    """includes joins assistant texts with a space, equals with nothing; other roles are not
    read; case is ignored unless asked."""
    output = (said("assistant", "It is"), said("user", "rainy"), said("assistant", "Sunny"))
    assert score_of(await checks.includes("is sunny").run(input=NO_INPUT, output=output)) == 1.0
    assert score_of(await checks.includes("rainy").run(input=NO_INPUT, output=output)) == 0.0
    assert score_of(await checks.includes("is sunny", ignore_case=False).run(
        input=NO_INPUT, output=output)) == 0.0
    assert score_of(await checks.excludes("rainy").run(input=NO_INPUT, output=output)) == 1.0
    assert score_of(await checks.equals("it issunny").run(input=NO_INPUT, output=output)) == 1.0
    assert score_of(await checks.equals(" it issunny").run(input=NO_INPUT, output=output)) == 0.0
    assert score_of(await checks.equals("").run(input=NO_INPUT, output=(
        said("user", "x"),))) == 1.0


@pytest.mark.parametrize(
    ("pattern", "exact", "text", "expected"),
    [
        (r"\d{1,3}°[FC]", False, "It is 72°F", 1.0),
        ("cat|dog", False, "hotdog", 1.0),
        ("cat|dog", True, "hotdog", 0.0),  # the whole text must match (Mastra: 1)
        ("cat|dog", True, "dog", 1.0),
        (re.compile("sunny", re.IGNORECASE), True, "SUNNY", 1.0),
        ("", False, "anything", 1.0),
    ],
)
async def test_matches(pattern: Any, exact: bool, text: str, expected: float) -> None:
    """matches searches a Python regular expression, or matches it whole when exact."""
    check = checks.matches(pattern, exact=exact, shape=TEXT)
    assert score_of(await check.run(input=None, output=text)) == expected


async def test_similarity_threshold() -> None:
    """similarity passes at the threshold itself and records the Dice value."""
    # "sunnytoday" vs "sunnyday": pairs 9 and 7, shared su un nn ny da ay = 6 → 12/16
    check = checks.similarity("sunny day", threshold=0.75, shape=TEXT)
    result = (await check.run(input=None, output="Sunny today")).unwrap()
    assert result.preprocess_step_result["similarity"] == 0.75
    assert result.score == 1.0
    stricter = checks.similarity("sunny day", threshold=0.76, shape=TEXT)
    assert score_of(await stricter.run(input=None, output="Sunny today")) == 0.0


async def test_tool_checks() -> None:
    """Each tool check's rule, with thrown calls counted and partial calls not."""
    output = called("search", inv("search", "output-error", call_id="s2"),
                    inv("delete", "partial-call"), "answer")
    run = {"input": NO_INPUT, "output": output}
    assert score_of(await checks.called_tool("search", times=2).run(**run)) == 1.0
    assert score_of(await checks.called_tool("search", times=3).run(**run)) == 0.0
    assert score_of(await checks.called_tool("delete").run(**run)) == 0.0
    assert score_of(await checks.did_not_call("delete").run(**run)) == 1.0
    assert score_of(await checks.did_not_call("answer").run(**run)) == 0.0
    assert score_of(await checks.tool_order(["search", "answer"]).run(**run)) == 1.0
    assert score_of(await checks.tool_order(["search", "search", "answer"]).run(**run)) == 1.0
    assert score_of(await checks.tool_order(["answer", "search"]).run(**run)) == 0.0
    assert score_of(await checks.max_tool_calls(3).run(**run)) == 1.0
    assert score_of(await checks.max_tool_calls(2).run(**run)) == 0.0
    assert score_of(await checks.used_no_tools().run(**run)) == 0.0
    only_partial = called(inv("delete", "partial-call"))
    assert score_of(await checks.used_no_tools().run(input=NO_INPUT, output=only_partial)) == 1.0


@pytest.mark.parametrize(
    ("invocation", "passes"),
    [
        (inv("t"), True),
        (inv("t", "partial-call"), True),
        (inv("t", "call"), False),  # never finished
        (inv("t", "output-error"), False),  # threw
        (inv("t", is_error=True), False),
        (inv("t", result={"error": "boom"}), False),
        (inv("t", result={"error": []}), False),  # truthy in JavaScript
        (inv("t", result={"error": ""}), True),
        (inv("t", result={"error": 0}), True),
        (inv("t", result="error"), True),  # only a mapping's error field counts
    ],
)
async def test_no_tool_errors(invocation: ToolInvocation, passes: bool) -> None:
    """no_tool_errors fails on every failure representation Mastra recognises."""
    outcome = await checks.no_tool_errors().run(input=NO_INPUT, output=called(invocation))
    assert score_of(outcome) == (1.0 if passes else 0.0)


ALL_CHECKS = [
    checks.includes("x"), checks.excludes("x"), checks.equals("x"), checks.matches("x"),
    checks.similarity("x"), checks.called_tool("x"), checks.did_not_call("x"),
    checks.tool_order(["x"]), checks.max_tool_calls(1), checks.used_no_tools(),
    checks.no_tool_errors(), tool_call_accuracy(expected_tool="x"),
]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.id)
async def test_no_output_messages_is_not_scorable(check: Any) -> None:
    """An agent run whose output has no messages is not scorable, never a silent 0 or 1."""
    assert "run.output has no messages" in missing_of(await check.run(input=NO_INPUT, output=()))


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: checks.includes(""), "expected"),
        (lambda: checks.excludes(""), "unwanted"),
        (lambda: checks.equals(None), "expected"),
        (lambda: checks.matches("("), "pattern"),
        (lambda: checks.matches(re.compile(b"x")), "pattern"),
        (lambda: checks.similarity("x", threshold=1.5), "threshold"),
        (lambda: checks.similarity("x", threshold=float("nan")), "threshold"),
        (lambda: checks.similarity("x", threshold=True), "threshold"),
        (lambda: checks.similarity("x", threshold=10**400), "threshold"),
        (lambda: checks.called_tool(""), "tool_name"),
        (lambda: checks.called_tool("x", times=0), "times"),
        (lambda: checks.called_tool("x", times=True), "times"),
        (lambda: checks.did_not_call(""), "tool_name"),
        (lambda: checks.tool_order([]), "expected_order"),
        (lambda: checks.tool_order("search"), "expected_order"),
        (lambda: checks.tool_order(["a", ""]), "expected_order[]"),
        (lambda: checks.max_tool_calls(-1), "maximum"),
        (tool_call_accuracy, "expected_tool"),
        (lambda: tool_call_accuracy(expected_tool=""), "expected_tool"),
        (lambda: tool_call_accuracy(expected_tool_order=[]), "expected_tool_order"),
    ],
)
def test_misuse_is_refused_when_built(build: Any, field: str) -> None:
    """A vacuous or malformed expectation raises ScorerDefinitionError naming the field."""
    with pytest.raises(ScorerDefinitionError) as raised:
        build()
    assert raised.value.field == field
    assert field.rstrip("[]") in str(raised.value)


@pytest.mark.parametrize(
    ("options", "calls", "expected"),
    [
        ({"expected_tool": "weather"}, ["search", "weather"], 1.0),
        ({"expected_tool": "weather", "strict_mode": True}, ["search", "weather"], 0.0),
        ({"expected_tool": "weather", "strict_mode": True}, ["weather"], 1.0),
        ({"expected_tool": "weather", "strict_mode": True}, ["weather", "weather"], 0.0),
        ({"expected_tool_order": ["a", "b"]}, ["a", "x", "b"], 1.0),
        ({"expected_tool_order": ["a", "b"]}, ["b", "a", "b"], 0.0),  # b's first call is first
        ({"expected_tool_order": ["a", "b"], "strict_mode": True}, ["a", "x", "b"], 0.0),
        ({"expected_tool_order": ["a", "b"], "strict_mode": True}, ["a", "b"], 1.0),
        ({"expected_tool_order": ["a", "a"]}, ["a", "a"], 1.0),  # Mastra: 0
        ({"expected_tool_order": ["a", "a"]}, ["a"], 0.0),
        ({"expected_tool": "x", "expected_tool_order": ["a"]}, ["a"], 1.0),  # order decides
        ({"expected_tool": "weather", "expected_tool_order": []}, ["weather"], 1.0),  # ignored
        ({"expected_tool": "weather", "expected_tool_order": [], "strict_mode": True},
         ["weather", "search"], 0.0),  # the tool alone decides
        ({"expected_tool": "weather"}, [], 0.0),  # no call: the expectation failed
    ],
)
async def test_tool_call_accuracy(
    options: dict[str, Any], calls: list[str], expected: float
) -> None:
    """tool_call_accuracy's rules; an agent that called nothing scores 0, not not-scorable."""
    outcome = await tool_call_accuracy(**options).run(input=NO_INPUT, output=called(*calls))
    assert score_of(outcome) == expected
    assert outcome.unwrap().preprocess_step_result["actual_tools"] == calls


def test_in_order_laws() -> None:
    """Strict order implies relaxed order; any subsequence of distinct calls is in order."""
    calls = ["a", "b", "c", "d"]
    assert in_order(calls, calls, strict=True)
    assert in_order(calls, calls, strict=False)
    assert in_order(calls, ["a", "c"], strict=False)
    assert not in_order(calls, ["c", "a"], strict=False)
