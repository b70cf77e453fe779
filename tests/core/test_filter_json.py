"""filter_run on Mastra-shaped JSON, as untyped scorers receive it."""

from __future__ import annotations

from typing import Any

from scorecore import ScorerRun, filter_run


def msg(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"format": 2, "parts": list(parts)}}


TEXT = {"type": "text", "text": "hi"}
DATA = {"type": "data-om-status", "data": {}}
TOOL = {"type": "tool-invocation", "toolInvocation": {"toolName": "execute_command"}}
OTHER_TOOL = {"type": "tool-invocation", "toolInvocation": {"toolName": "search"}}
PLAIN = {"role": "user", "content": "plain string"}


def test_mapping_input_remembered_messages_are_filtered_and_other_keys_kept() -> None:
    """A mapping input's rememberedMessages are filtered by part type; inputMessages untouched."""
    run = ScorerRun(
        input={"inputMessages": [msg(DATA)], "rememberedMessages": [msg(DATA), msg(TEXT), PLAIN]},
        output="x",
    )
    out = filter_run(part_types=["text"])(run)
    assert out.input["rememberedMessages"] == [msg(TEXT), PLAIN]
    assert out.input["inputMessages"] == [msg(DATA)]


def test_list_output_filters_by_tool_name_prefix_and_keeps_last_n() -> None:
    """Tool messages must match a tool-name prefix; then the last N are kept."""
    run = ScorerRun(input="q", output=[msg(TOOL), msg(OTHER_TOOL), msg(TEXT), msg(TOOL, TEXT)])
    out = filter_run(tool_names=["execute"], max_output_messages=2)(run)
    assert out.output == [msg(TEXT), msg(TOOL, TEXT)]


def test_empty_pattern_list_counts_as_set() -> None:
    """part_types=[] is 'set' (as JS's truthy []): only messages without parts survive."""
    run = ScorerRun(input="q", output=[msg(TEXT), PLAIN])
    assert filter_run(part_types=[])(run).output == [PLAIN]


def test_zero_limits_are_ignored_and_non_message_outputs_untouched() -> None:
    """max_*=0 keeps everything; a string output is left alone."""
    run = ScorerRun(input={"rememberedMessages": [msg(TEXT)] * 3}, output="answer")
    out = filter_run(max_remembered_messages=0, max_output_messages=0)(run)
    assert out.input["rememberedMessages"] == [msg(TEXT)] * 3
    assert out.output == "answer"
