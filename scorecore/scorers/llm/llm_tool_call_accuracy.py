"""llm_tool_call_accuracy: the share of the agent's tool calls that were appropriate."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import cast, final

import attrs

from scorecore import AgentInput, AgentOutput, NotScorable, Scorer, not_scorable
from scorecore.scorers._messages import tool_names
from scorecore.scorers._rounding import r2
from scorecore.scorers._shapes import check_text, refuse
from scorecore.scorers.llm._engine import Judge, Judgement, RunContext, Spec, Wording, build
from scorecore.scorers.llm._reading import assistant_text, need_question

__all__ = ["llm_tool_call_accuracy"]

WORDING = Wording(
    description="Judge each tool call",
    persona=("You are an auditor of AI agents' tool use. You decide whether each tool call was "
             "the right one for the user's request, given the tools available."),
    task="Judge whether each tool the agent called was appropriate for the request.",
    principles=(
        "Evaluate every call listed, once each, in order.",
        "was_appropriate: the tool helps with the request and a better-suited available tool was "
        "not skipped for it.",
        "missing_tools: available tools the request clearly needed but the agent did not call (an "
        "empty list if none).",
        "Give a one-sentence reason for every call.",
    ),
    example=('Tools: weather: current weather; calendar: the user\'s events. Request: "Will it '
             'rain in Oslo?" Calls: calendar\nReply: {"evaluations": [{"tool_called": '
             '"calendar", "was_appropriate": false, "reasoning": "events do not tell the '
             'weather"}], "missing_tools": ["weather"]}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("calendar", "Will it rain in Oslo?"),
)


@final
@attrs.frozen(kw_only=True)
class ToolEvaluation:
    """Whether one tool call was appropriate for the request."""

    tool_called: str
    was_appropriate: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class ToolReply:
    """The judge's reply: a verdict per call, and tools that should have been called."""

    evaluations: tuple[ToolEvaluation, ...]
    missing_tools: tuple[str, ...] = ()


def tool_score(reply: ToolReply, calls: Sequence[str]) -> float | NotScorable:
    """The share of appropriate calls, two decimals. The reply must evaluate each of the
    ``calls`` once (by tool name, as many times as it was called), else not scorable.

    >>> e = lambda ok: ToolEvaluation(tool_called="t", was_appropriate=ok, reasoning="")
    >>> tool_score(ToolReply(evaluations=(e(True), e(True), e(False))), ["t", "t", "t"])
    0.67
    >>> tool_score(ToolReply(evaluations=(e(True),)), ["t", "u"]).reason
    "the judge's reply covers 1 of 2 tool calls (1 evaluations)"
    """
    if not reply.evaluations:
        return not_scorable("the judge evaluated no tool call")
    wanted = Counter(c.strip() for c in calls)
    covered = sum((wanted & Counter(e.tool_called.strip() for e in reply.evaluations)).values())
    if covered != len(calls) or len(reply.evaluations) != len(calls):
        return not_scorable(f"the judge's reply covers {covered} of {len(calls)} tool calls "
                            f"({len(reply.evaluations)} evaluations)")
    return r2(sum(1 for e in reply.evaluations if e.was_appropriate) / len(reply.evaluations))


@final
@attrs.frozen(kw_only=True)
class ToolTexts:
    """The request, the calls made and the answer."""

    request: str
    calls: tuple[str, ...]
    answer: str


def read(ctx: RunContext) -> ToolTexts | NotScorable:
    """The request, the names of the tools called and the answer; not scorable without a
    request or without any call."""
    request = need_question(ctx.run.input, "request")
    if isinstance(request, NotScorable):
        return request
    calls = tuple(tool_names(ctx.run.output))
    if not calls:
        return not_scorable("no tool calls to judge: run.output calls no tool")
    return ToolTexts(request=request, calls=calls, answer=assistant_text(ctx.run.output))


def explained(_texts: ToolTexts, reply: ToolReply, score: float) -> str:
    """The score, each call appropriate or not, the missing tools."""
    return "\n".join(
        [f"Tool call accuracy: {score}"]
        + [f"- {e.tool_called}: {'appropriate' if e.was_appropriate else 'inappropriate'}"
           f" ({e.reasoning})" for e in reply.evaluations]
        + [f"- missing: {t}" for t in reply.missing_tools])


def llm_tool_call_accuracy(
    judge: Judge, *, available_tools: Mapping[str, str],
    id: str = "llm-tool-call-accuracy-scorer",
) -> Scorer[AgentInput, AgentOutput]:
    """The share of the agent's tool calls that were appropriate for the request.

    ``available_tools`` maps each tool's id to its description. Not scorable without a user
    request, without any tool call (use ``checks.used_no_tools`` or ``tool_call_accuracy`` to
    require or forbid calls), or when the judge evaluates no call.

    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"evaluations": [{"tool_called": "weather",
    ...     "was_appropriate": True, "reasoning": "asked for weather"}], "missing_tools": []}])
    >>> scorer = llm_tool_call_accuracy(judge, available_tools={"weather": "Current weather"})
    >>> call = {"type": "tool-invocation", "toolInvocation": {"toolCallId": "c",
    ...         "toolName": "weather", "args": {}, "state": "result", "result": "sun"}}
    >>> out = [{"role": "assistant", "content": {"format": 2, "parts": [call]}}]
    >>> ask = {"inputMessages": [{"role": "user", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": "Weather?"}]}}]}
    >>> scorer.run_sync(input=ask, output=out).unwrap().score
    1.0
    """
    if not isinstance(cast(object, available_tools), Mapping) or not available_tools:
        raise refuse(id, "available_tools", "a non-empty mapping of tool id to description",
                     available_tools)
    tools = {check_text(id, "available_tools key", k): check_text(
        id, f"available_tools[{k!r}]", v, allow_empty=True) for k, v in available_tools.items()}
    listing = "\n".join(f"{name}: {text}" for name, text in tools.items())

    def shown(texts: ToolTexts) -> list[tuple[str, str]]:
        return [("AVAILABLE_TOOLS", listing), ("REQUEST", texts.request),
                ("TOOL_CALLS", "\n".join(texts.calls)), ("ANSWER", texts.answer or "(none)")]

    return build(Spec(
        id=id, name="LLM Tool Call Accuracy Scorer",
        description="The share of tool calls appropriate for the request",
        read=read,
        judgement=Judgement(wording=WORDING, reply=ToolReply, data=shown),
        score=lambda texts, reply: tool_score(reply, texts.calls),
        reason=explained,
    ), judge, "agent")
