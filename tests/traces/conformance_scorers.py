"""The scorers ``scorecore eval-traces`` runs on every recorded instrumentation row.

``agent_run`` scores nothing: its reason is the agent run ``eval-traces`` read, as JSON
(:func:`summary`), so the conformance test sees exactly what a user's scorer receives. The
others are code scorers whose scores must be the same on every row of a variant.
"""

from __future__ import annotations

import json
from typing import Any

from scorecore import ScorerRun, create_scorer
from scorecore.agent import AgentInput, AgentMessage, AgentOutput, merged_tool_invocations
from scorecore.scorers import checks, completeness, keyword_coverage, tool_call_accuracy

TOOL = "get_weather"


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _answer(messages: tuple[AgentMessage, ...]) -> str | None:
    texts = [m.text() for m in messages if m.role == "assistant" and m.text()]
    return texts[-1] if texts else None


def summary(agent_input: AgentInput, output: AgentOutput) -> dict[str, Any]:
    """The parts of an agent run every instrumentation must give: the user's messages, the
    system prompt, the answer, and each tool call (name, arguments, result — the error text
    for a failed call — and whether it failed)."""
    calls = [call for message in output for call in merged_tool_invocations(message)]
    return {
        "input": [m.text() for m in agent_input.input_messages],
        "system": [s.content for s in agent_input.system_messages],
        "output": _answer(output),
        "tools": [{
            "name": call.tool_name,
            "arguments": call.args,
            "result": _text(call.error_text if call.is_error and call.error_text
                            else call.result),
            "is_error": call.is_error is True or call.state == "output-error",
        } for call in calls],
    }


def _reason(run: ScorerRun[AgentInput, AgentOutput]) -> str:
    return json.dumps(summary(run.input, run.output), sort_keys=True)


agent_run = create_scorer(id="agent-run", description="the agent run as read",
                          type="agent").generate_score(lambda _ctx: 1.0).generate_reason(
    lambda ctx: _reason(ctx.run))
keywords = keyword_coverage()
complete = completeness()
called = checks.called_tool(TOOL)
clean = checks.no_tool_errors()
accurate = tool_call_accuracy(expected_tool=TOOL, strict_mode=True)

CODE_SCORERS = (keywords, complete, called, clean, accurate)
"""The scorers whose scores every row of a variant must share."""
