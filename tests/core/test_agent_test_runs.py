"""Tests of ``create_test_message`` and ``create_agent_test_run``: runs written from plain text
are the runs Mastra's ``createTestMessage`` / ``createAgentTestRun`` JSON gives a scorer."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from scorecore import AgentInput, ScorerDefinitionError, ScorerRun, create_scorer
from scorecore.agent import (
    AgentMessage,
    AgentTestRun,
    MessageContent,
    SystemMessage,
    TextPart,
    ToolInvocation,
    create_agent_test_run,
    create_test_message,
)
from scorecore.scorers import tool_call_accuracy

pytestmark = pytest.mark.anyio

ROLES = st.sampled_from(["user", "assistant", "system", "signal"])


def mastra_message(text: str, role: str, id: str = "test-message") -> dict[str, Any]:
    """What Mastra's createTestMessage writes, less its createdAt (the time of the call)."""
    return {"id": id, "role": role,
            "content": {"format": 2, "parts": [{"type": "text", "text": text}], "content": text}}


def seen_run(input: object, output: object, **options: Any) -> ScorerRun[Any, Any]:
    seen: list[ScorerRun[Any, Any]] = []

    def score(ctx: Any) -> float:
        seen.append(ctx.run)
        return 1.0

    scorer = create_scorer(id="agent", description="d", type="agent").generate_score(score)
    options.setdefault("run_id", "run-1")  # else the runtime draws one per run
    scorer.run_sync(input=input, output=output, **options).unwrap()
    return seen[0]


@given(text=st.text(max_size=40), role=ROLES, id=st.text(max_size=8))
def test_a_test_message_is_the_message_mastra_json_gives(text: str, role: Any, id: str) -> None:
    """Scored as Mastra's JSON or built here, the scorer sees the same message."""
    built = create_test_message(text, role=role, id=id)
    assert built.text() == text
    assert built.content.parts == (TextPart(text=text),)
    from_json = seen_run({"inputMessages": [mastra_message(text, role, id)]}, []).input
    assert seen_run(AgentInput(input_messages=(built,)), []).input == from_json


@given(question=st.text(max_size=30), answers=st.lists(st.text(max_size=30), max_size=3),
       system=st.lists(st.text(max_size=20), max_size=2))
def test_an_agent_test_run_is_the_run_mastra_json_gives(
    question: str, answers: list[str], system: list[str]
) -> None:
    """Texts become user, assistant and system messages, as in Mastra's createAgentTestRun."""
    run = create_agent_test_run(input_messages=[question], output=answers,
                                system_messages=system, tagged_system_messages={"memory": system})
    mastra_input = {
        "inputMessages": [mastra_message(question, "user")],
        "rememberedMessages": [],
        "systemMessages": [{"role": "system", "content": s} for s in system],
        "taggedSystemMessages": {"memory": [{"role": "system", "content": s} for s in system]},
    }
    mastra_output = [mastra_message(a, "assistant") for a in answers]
    assert seen_run(run.input, run.output) == seen_run(mastra_input, mastra_output)


def test_one_text_or_message_alone_is_a_list_of_one() -> None:
    hello = create_test_message("Hello!", role="assistant", id="m9")
    run = create_agent_test_run(input_messages="Hi", output=hello)
    assert run.input.input_messages == (create_test_message("Hi", role="user"),)
    assert run.output == (hello,)
    assert create_agent_test_run(output="Hello!").output[0].role == "assistant"


def test_messages_are_kept_as_given() -> None:
    remembered = AgentMessage(role="assistant", content=MessageContent(content="earlier"))
    asked = create_test_message("Q", role="user", id="u1")
    run = create_agent_test_run(input_messages=[asked], remembered_messages=[remembered],
                                system_messages=[SystemMessage(content="Be brief."), "Be kind."],
                                output=[])
    assert run.input.input_messages == (asked,)
    assert run.input.remembered_messages == (remembered,)
    assert [m.content for m in run.input.system_messages] == ["Be brief.", "Be kind."]
    assert run.input.tagged_system_messages == {}
    assert run.output == ()


def test_run_id_and_request_context_reach_the_scorer() -> None:
    run = create_agent_test_run(output="ok", run_id="r-1", request_context={"tenant": "a"})
    assert run == AgentTestRun(input=AgentInput(), output=run.output, run_id="r-1",
                               request_context={"tenant": "a"})
    seen = seen_run(run.input, run.output, run_id=run.run_id,
                    request_context=run.request_context)
    assert seen.run_id == "r-1"
    assert seen.request_context == {"tenant": "a"}


def test_a_test_message_without_tools_has_none() -> None:
    """As Mastra's: no toolInvocations key unless given, and no creation time (no clock)."""
    message = create_test_message("Hi", role="user")
    assert message.content.tool_invocations is None
    assert message.created_at is None
    assert message.id == "test-message"


async def test_tool_call_scorers_see_a_test_messages_tool_calls(anyio_backend: str) -> None:
    call = ToolInvocation(tool_call_id="c1", tool_name="weather", args={"city": "Oslo"})
    run = create_agent_test_run(input_messages="Weather in Oslo?", output=create_test_message(
        "Let me look.", role="assistant", tool_invocations=[call]))
    assert run.output[0].content.tool_invocations == (call,)
    called = await tool_call_accuracy(expected_tool="weather").run(input=run.input,
                                                                   output=run.output)
    assert called.unwrap().score == 1.0
    other = await tool_call_accuracy(expected_tool="search").run(input=run.input,
                                                                 output=run.output)
    assert other.unwrap().score == 0.0


@pytest.mark.parametrize(("build", "field", "value"), [
    (lambda: create_test_message(3, role="user"), "create_test_message.content", 3),
    (lambda: create_test_message("x", role="bot"), "create_test_message.role", "bot"),
    (lambda: create_test_message("x", role=["user"]), "create_test_message.role", ["user"]),
    (lambda: create_test_message("x", role="user", id=None), "create_test_message.id", None),
    (lambda: create_test_message("x", role="user", tool_invocations=[{"toolName": "w"}]),
     "create_test_message.tool_invocations[0]", {"toolName": "w"}),
    (lambda: create_test_message("x", role="user", tool_invocations="weather"),
     "create_test_message.tool_invocations", "weather"),
    (lambda: create_agent_test_run(output=3), "create_agent_test_run.output", 3),
    (lambda: create_agent_test_run(output=["ok", 3]), "create_agent_test_run.output[1]", 3),
    (lambda: create_agent_test_run(output=[], input_messages=[None]),
     "create_agent_test_run.input_messages[0]", None),
    (lambda: create_agent_test_run(output=[], remembered_messages=["said"]),
     "create_agent_test_run.remembered_messages[0]", "said"),
    (lambda: create_agent_test_run(output=[], remembered_messages="said"),
     "create_agent_test_run.remembered_messages", "said"),
    (lambda: create_agent_test_run(output=[], system_messages=[1]),
     "create_agent_test_run.system_messages[0]", 1),
    (lambda: create_agent_test_run(output=[], tagged_system_messages={"memory": [2]}),
     "create_agent_test_run.tagged_system_messages['memory'][0]", 2),
    (lambda: create_agent_test_run(output=[], tagged_system_messages={1: ["x"]}),
     "create_agent_test_run.tagged_system_messages", 1),
    (lambda: create_agent_test_run(output=[], tagged_system_messages=["x"]),
     "create_agent_test_run.tagged_system_messages", ["x"]),
    (lambda: create_agent_test_run(output=[], request_context="tenant=a"),
     "create_agent_test_run.request_context", "tenant=a"),
    (lambda: create_agent_test_run(output=[], run_id=7), "create_agent_test_run.run_id", 7),
])
def test_a_wrong_argument_is_named_with_its_value(build: Any, field: str, value: object) -> None:
    with pytest.raises(ScorerDefinitionError) as caught:
        build()
    assert caught.value.field == field
    assert caught.value.value == value
    assert str(caught.value).startswith(f"{field} must be ")
    assert repr(value) in str(caught.value)


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
    | st.builds(lambda t: create_test_message(t, role="user"), st.text(max_size=5))
    | st.builds(SystemMessage, content=st.text(max_size=5)),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner)
    | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=2),
    max_leaves=6,
)


# Each argument is its default or fine half the time, so that runs are built too, not only
# refused (about one example in twelve builds one: hence the examples).
ARGUMENTS = st.fixed_dictionaries({
    "output": st.text(max_size=5) | JUNK,
    "input_messages": st.just(()) | JUNK,
    "remembered_messages": st.just(()) | JUNK,
    "system_messages": st.just(()) | JUNK,
    "tagged_system_messages": st.none() | JUNK,
    "request_context": st.none() | JUNK,
    "run_id": st.none() | JUNK,
})


def built_or_refused(arguments: dict[str, Any]) -> AgentTestRun | ScorerDefinitionError:
    try:
        return create_agent_test_run(**arguments)
    except ScorerDefinitionError as error:
        return error


@settings(max_examples=300)
@given(ARGUMENTS)
def test_any_arguments_give_a_run_or_a_named_error(arguments: dict[str, Any]) -> None:
    """Whatever an untyped caller passes, the answer is a run a scorer takes or a
    ScorerDefinitionError naming one of the arguments: never another exception."""
    answer = built_or_refused(arguments)
    if isinstance(answer, ScorerDefinitionError):
        event("refused")
        assert answer.field is not None
        assert answer.field.startswith("create_agent_test_run.")
        return
    event("built")
    assert seen_run(answer.input, answer.output).output == answer.output
