"""Tests of agent-typed and custom-typed runs, and of ``filter_run``."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import AgentInput, InputMismatch, ScorerRun, create_scorer, filter_run
from scorecore.agent import (
    AgentMessage,
    GenericPart,
    MessageContent,
    ReasoningPart,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)
from tests import strategies as sts

pytestmark = pytest.mark.anyio

MASTRA_INPUT = {
    "inputMessages": [{
        "id": "m1", "role": "user", "createdAt": "2025-01-02T03:04:05Z",
        "content": {"format": 2, "parts": [{"type": "text", "text": "Weather?"}],
                    "content": "Weather?"},
    }],
    "rememberedMessages": [
        {"id": "m0", "role": "assistant", "content": {"format": 2, "content": "plain"}},
    ],
    "systemMessages": [{"role": "system", "content": "Be brief."}],
    "taggedSystemMessages": {"memory": [{"role": "system", "content": "Tagged."}]},
}
MASTRA_OUTPUT = [{
    "id": "m2", "role": "assistant", "threadId": "t1",
    "content": {"format": 2, "parts": [
        {"type": "tool-invocation", "toolInvocation": {
            "toolCallId": "c1", "toolName": "weather", "args": {"city": "Oslo"},
            "result": {"temp": 3}, "state": "result"}},
        {"type": "reasoning", "reasoning": "think", "details": []},
        {"type": "data-om-status", "status": "ok"},
        {"type": "text", "text": "It is 3°C."},
    ]},
}]


async def test_agent_scorer_structures_mastra_json(anyio_backend: str) -> None:
    """type='agent' turns Mastra camelCase mappings into AgentInput and AgentOutput values."""
    seen: list[ScorerRun[Any, Any]] = []

    def score(ctx: Any) -> float:
        seen.append(ctx.run)
        return 1.0

    scorer = create_scorer(id="a", description="d", type="agent").generate_score(score)
    result = (await scorer.run(input=MASTRA_INPUT, output=MASTRA_OUTPUT)).unwrap()
    run = seen[0]
    assert result.run == run
    assert isinstance(run.input, AgentInput)
    first = run.input.input_messages[0]
    assert first.id == "m1"
    assert first.created_at is not None
    assert first.created_at.year == 2025
    assert first.created_at.utcoffset() is not None
    assert first.content.parts == (TextPart(text="Weather?"),)
    assert run.input.remembered_messages[0].content.parts is None
    assert run.input.remembered_messages[0].text() == "plain"
    assert run.input.system_messages[0].content == "Be brief."
    assert run.input.tagged_system_messages["memory"][0].content == "Tagged."
    (message,) = run.output
    assert isinstance(message, AgentMessage)
    assert message.thread_id == "t1"
    parts = message.content.parts
    assert parts == (
        ToolInvocationPart(tool_invocation=ToolInvocation(
            tool_call_id="c1", tool_name="weather", args={"city": "Oslo"}, result={"temp": 3},
            state="result")),
        ReasoningPart(reasoning="think"),
        GenericPart(type="data-om-status", data={"status": "ok"}),
        TextPart(text="It is 3°C."),
    )
    assert message.text() == "It is 3°C."


async def test_agent_values_pass_through_unchanged(anyio_backend: str) -> None:
    """Already-typed agent values are used as they are."""
    value = AgentInput(input_messages=(AgentMessage(role="user", content=MessageContent(
        parts=(TextPart(text="hi"),))),))
    scorer = create_scorer(id="a", description="d", type="agent").generate_score(lambda ctx: 1)
    result = (await scorer.run(input=value, output=())).unwrap()
    assert result.run.input is value
    assert result.run.output == ()


@attrs.frozen
class Question:
    text: str
    difficulty: int


@dataclasses.dataclass(frozen=True)
class Answer:
    text: str
    confidence: float


async def test_custom_attrs_and_dataclass_types(anyio_backend: str) -> None:
    """input_type (attrs) and output_type (dataclass) structure mappings into those classes."""
    seen: list[Any] = []
    scorer = create_scorer(id="c", description="d", input_type=Question, output_type=Answer) \
        .generate_score(lambda ctx: seen.append(ctx.run) or ctx.run.output.confidence)
    result = (await scorer.run(input={"text": "q", "difficulty": 2},
                               output={"text": "a", "confidence": 0.5})).unwrap()
    assert seen[0].input == Question(text="q", difficulty=2)
    assert seen[0].output == Answer(text="a", confidence=0.5)
    assert result.score == 0.5
    instance = Question(text="x", difficulty=1)
    again = (await scorer.run(input=instance, output=Answer(text="a", confidence=1.0))).unwrap()
    assert again.run.input is instance


async def test_mismatch_lists_every_bad_field_of_input_and_output(anyio_backend: str) -> None:
    """A mismatch is Failure(InputMismatch) naming every bad field of both input and output."""
    ran: list[str] = []
    scorer = create_scorer(id="c", description="d", input_type=Question, output_type=Answer) \
        .generate_score(lambda ctx: ran.append("x") or 1.0)
    outcome = await scorer.run(input={"text": "q", "difficulty": "hard"},
                               output={"confidence": "very"})
    error = outcome.failure()
    assert isinstance(error.cause, InputMismatch)
    assert error.completed_steps == ()
    joined = "\n".join(error.cause.errors)
    assert "input.difficulty" in joined
    assert "output.text" in joined
    assert "output.confidence" in joined
    assert len(error.cause.errors) == 3
    assert ran == []
    assert "difficulty" in str(error)


async def test_agent_mismatch_names_bad_fields(anyio_backend: str) -> None:
    """A malformed agent payload is a Failure listing each bad field, input and output."""
    scorer = create_scorer(id="a", description="d", type="agent").generate_score(lambda ctx: 1)
    error = (await scorer.run(
        input={"inputMessages": 3, "systemMessages": [{"role": "system"}]},
        output=[{"role": "robot", "content": {"parts": []}}],
    )).failure()
    assert isinstance(error.cause, InputMismatch)
    joined = "\n".join(error.cause.errors)
    assert "input.inputMessages" in joined
    assert "input.systemMessages[0].content" in joined
    assert "output[0].role" in joined


# --- filter_run ---------------------------------------------------------------------------


def msg(*parts: Any, ident: str = "") -> AgentMessage:
    return AgentMessage(role="assistant", id=ident, content=MessageContent(parts=tuple(parts)))


def plain(ident: str) -> AgentMessage:
    return AgentMessage(role="user", id=ident, content=MessageContent(parts=None, content=ident))


def tool(name: str) -> ToolInvocationPart:
    return ToolInvocationPart(tool_invocation=ToolInvocation(tool_call_id="c", tool_name=name))


def data(kind: str) -> GenericPart:
    return GenericPart(type=kind, data={})


def agent_run(remembered: tuple[AgentMessage, ...], output: tuple[AgentMessage, ...],
              inputs: tuple[AgentMessage, ...] = ()) -> ScorerRun[Any, Any]:
    return ScorerRun(
        input=AgentInput(input_messages=inputs, remembered_messages=remembered),
        output=output, run_id="r", ground_truth="g", request_context={"k": 1},
        expected_trajectory=["t"], extra={"x": 1},
    )


def ids(messages: tuple[AgentMessage, ...]) -> list[str]:
    return [m.id for m in messages]


def test_drop_options_clear_only_their_field() -> None:
    """Each drop option clears its own field and nothing else."""
    run = agent_run((), ())
    assert filter_run()(run) == run
    assert filter_run(drop_request_context=True)(run) == attrs.evolve(run, request_context=None)
    assert filter_run(drop_ground_truth=True)(run) == attrs.evolve(run, ground_truth=None)
    assert filter_run(drop_expected_trajectory=True)(run) == \
        attrs.evolve(run, expected_trajectory=None)


def test_part_types_match_by_prefix() -> None:
    """part_types keeps messages with a part whose type starts with a pattern."""
    messages = (msg(data("data-om-status"), ident="status"), msg(TextPart(text="t"), ident="text"),
                msg(data("file"), ident="file"), msg(data("data-x"), tool("t"), ident="both"))
    out = filter_run(part_types=["data-"])(agent_run((), messages)).output
    assert ids(out) == ["status", "both"]


def test_part_types_keep_tool_message_with_matching_text_part() -> None:
    """With part_types=['text'], a [tool-invocation, text] message is kept; data-only dropped."""
    messages = (msg(tool("search"), TextPart(text="t"), ident="mixed"),
                msg(data("data-om-status"), ident="status"), msg(tool("search"), ident="tool"))
    out = filter_run(part_types=["text"])(agent_run((), messages)).output
    assert ids(out) == ["mixed"]


def test_tool_names_match_by_prefix_and_spare_messages_without_tools() -> None:
    """tool_names keeps tool messages calling a matching tool; messages without tools stay."""
    messages = (msg(tool("execute_command"), ident="exec"), msg(tool("search"), ident="search"),
                msg(TextPart(text="t"), ident="text"), msg(data("data-x"), ident="data"))
    out = filter_run(tool_names=["execute"])(agent_run((), messages)).output
    assert ids(out) == ["exec", "text", "data"]


def test_tool_names_and_part_types_both_apply_to_tool_messages() -> None:
    """A tool message must match tool_names and part_types when both are set."""
    messages = (msg(tool("search"), TextPart(text="t"), ident="search+text"),
                msg(tool("search"), ident="search-only"),
                msg(tool("other"), TextPart(text="t"), ident="other+text"),
                msg(TextPart(text="t"), ident="text"), msg(data("file"), ident="file"))
    out = filter_run(tool_names=["search"], part_types=["text"])(agent_run((), messages)).output
    assert ids(out) == ["search+text", "text"]


def test_plain_string_messages_are_always_kept() -> None:
    """Messages whose content has no parts array are kept whatever the filters."""
    messages = (plain("p1"), msg(data("file"), ident="file"), plain("p2"))
    for options in ({"part_types": ["text"]}, {"tool_names": ["x"]}, {"part_types": []}):
        out = filter_run(**options)(agent_run((), messages)).output  # type: ignore[arg-type]
        assert [i for i in ids(out) if i.startswith("p")] == ["p1", "p2"]
    assert "file" not in ids(filter_run(part_types=["text"])(agent_run((), messages)).output)


def test_empty_lists_count_as_set() -> None:
    """``part_types=[]`` is set (JS truthiness of []): every message with parts is dropped."""
    messages = (msg(TextPart(text="t"), ident="text"), msg(ident="no-parts"), plain("p"))
    assert ids(filter_run(part_types=[])(agent_run((), messages)).output) == ["p"]
    with_tools = (msg(tool("a"), ident="tool"), msg(TextPart(text="t"), ident="text"))
    assert ids(filter_run(tool_names=[])(agent_run((), with_tools)).output) == ["text"]


def test_mastra_json_message_without_parts_key_is_kept() -> None:
    """A Mastra message with no ``parts`` key (plain content) survives part_types filtering."""
    scorer = create_scorer(
        id="a", description="d", type="agent", prepare_run=filter_run(part_types=["text"]),
    ).preprocess(lambda ctx: ids(ctx.run.input.remembered_messages)).generate_score(lambda c: 1)
    result = anyio.run(lambda: scorer.run(input=MASTRA_INPUT, output=MASTRA_OUTPUT)).unwrap()
    assert result.preprocess_step_result == ["m0"]


def test_only_remembered_and_output_messages_are_filtered() -> None:
    """Input and system messages are never filtered; other input fields are untouched."""
    file_msg = msg(data("file"), ident="in")
    run = agent_run((msg(data("file"), ident="rem"),), (msg(data("file"), ident="out"),),
                    inputs=(file_msg,))
    run = attrs.evolve(run, input=attrs.evolve(run.input, system_messages=()))
    out = filter_run(part_types=["text"])(run)
    assert out.input.input_messages == (file_msg,)
    assert out.input.remembered_messages == ()
    assert out.output == ()
    assert (out.ground_truth, out.request_context, out.extra) == ("g", {"k": 1}, {"x": 1})


@given(st.lists(sts.agent_messages, max_size=6).map(tuple), st.integers(-1, 8),
       st.integers(-1, 8))
def test_keep_last_n(messages: tuple[AgentMessage, ...], n_remembered: int, n_output: int) -> None:
    """max_* keep the last N messages; 0 is ignored (keeps all), as in Mastra."""
    out = filter_run(max_remembered_messages=n_remembered, max_output_messages=n_output)(
        agent_run(messages, messages)
    )

    def expected(n: int) -> tuple[AgentMessage, ...]:
        return messages[-n:] if n and len(messages) > n else messages

    assert out.input.remembered_messages == expected(n_remembered)
    assert tuple(out.output) == expected(n_output)


def test_filters_apply_before_keep_last_n() -> None:
    """Filtering happens first, then the last N of what is left are kept."""
    messages = (msg(TextPart(text="a"), ident="a"), msg(TextPart(text="b"), ident="b"),
                msg(data("file"), ident="f"))
    out = filter_run(part_types=["text"], max_output_messages=1)(agent_run((), messages))
    assert ids(out.output) == ["b"]


def test_non_agent_values_are_left_alone() -> None:
    """A run whose input/output are not agent values only gets the drop options applied."""
    run = ScorerRun(input="q", output="a", ground_truth="g")
    assert filter_run(part_types=["text"], max_output_messages=1)(run) == run
