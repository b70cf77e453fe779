"""Agent runs written by hand, for tests and examples: Mastra's ``createTestMessage`` and
``createAgentTestRun``.

A scorer of agent runs reads Mastra-shaped messages; spelling one out (a role, a content of
format 2, a text part) takes three nested values, which every test of such a scorer would
otherwise write again. These build them from plain text. They read no clock and draw no
random id (the kernel reads neither): a message has no ``created_at`` and a run no ``run_id``
unless given, and the scorer's runtime names the run, as for any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import final

import attrs

from scorecore._core._agent import (
    MESSAGE_ROLES,
    AgentInput,
    AgentMessage,
    AgentOutput,
    MessageContent,
    MessageRole,
    SystemMessage,
    TextPart,
    ToolInvocation,
)
from scorecore._core._reprs import short_repr
from scorecore.validators import misuse

__all__ = ["AgentTestRun", "create_agent_test_run", "create_test_message"]


@final
@attrs.frozen(kw_only=True)
class AgentTestRun:
    """An agent run to score in a test: what :func:`create_agent_test_run` gives.

    Hand its parts to the scorer: ``scorer.run_sync(input=run.input, output=run.output)``,
    with ``request_context=run.request_context`` and ``run_id=run.run_id`` when the scorer
    reads them.

    >>> run = create_agent_test_run(input_messages="Hi", output="Hello!", run_id="r1")
    >>> run.input.input_messages[0].text(), run.output[0].role, run.run_id
    ('Hi', 'assistant', 'r1')
    """

    input: AgentInput
    output: AgentOutput
    request_context: Mapping[str, object] | None = None
    run_id: str | None = None


def create_test_message(
    content: str,
    *,
    role: MessageRole,
    id: str = "test-message",
    tool_invocations: Iterable[ToolInvocation] = (),
) -> AgentMessage:
    """A message saying ``content`` (Mastra's ``createTestMessage``).

    The text is both the message's one text part and its ``content``, as Mastra writes it; the
    tool invocations, if any, are the content's ``tool_invocations`` (where the tool-call
    scorers read them).

    Raises:
        ScorerDefinitionError: ``content`` or ``id`` is not a ``str``, ``role`` is not one of
            ``"user"``, ``"assistant"``, ``"system"``, ``"signal"``, or a tool invocation is not
            a :class:`~scorecore.agent.ToolInvocation` (the message names which).

    >>> from scorecore.agent import ToolInvocation, create_test_message
    >>> message = create_test_message("Let me look.", role="assistant", tool_invocations=[
    ...     ToolInvocation(tool_call_id="c1", tool_name="weather", args={"city": "Paris"})])
    >>> message.text(), message.content.tool_invocations[0].tool_name
    ('Let me look.', 'weather')
    """
    field = "create_test_message"
    if not isinstance(content, str):
        raise misuse(f"{field}.content", content, "must be a str (the message's text)")
    given: object = role  # an untyped caller may pass anything, a list included
    if not isinstance(given, str) or given not in MESSAGE_ROLES:
        raise misuse(f"{field}.role", role, f"must be one of {', '.join(sorted(MESSAGE_ROLES))}")
    if not isinstance(id, str):
        raise misuse(f"{field}.id", id, "must be a str")
    invocations = _tool_invocations(field, tool_invocations)
    return AgentMessage(id=id, role=role, content=MessageContent(
        parts=(TextPart(text=content),), content=content,
        tool_invocations=invocations or None,
    ))


def create_agent_test_run(
    *,
    output: AgentMessage | str | Sequence[AgentMessage | str],
    input_messages: AgentMessage | str | Sequence[AgentMessage | str] = (),
    remembered_messages: Sequence[AgentMessage] = (),
    system_messages: Sequence[SystemMessage | str] = (),
    tagged_system_messages: Mapping[str, Sequence[SystemMessage | str]] | None = None,
    request_context: Mapping[str, object] | None = None,
    run_id: str | None = None,
) -> AgentTestRun:
    """An agent run from messages or their texts (Mastra's ``createAgentTestRun``).

    A text stands for a message saying it: a user message in ``input_messages``, an assistant
    message in ``output``, a system message in ``system_messages`` and
    ``tagged_system_messages``; ``input_messages`` and ``output`` may be one text or message
    alone. Messages are taken as they are (build one with tool calls with
    :func:`create_test_message`).

    Raises:
        ScorerDefinitionError: an entry of the wrong type; the message names the argument and
            the position (``create_agent_test_run.output[1]``).

    >>> from scorecore import create_scorer
    >>> from scorecore.agent import create_agent_test_run
    >>> run = create_agent_test_run(input_messages=["Where is Paris?"], output="In France.")
    >>> scorer = create_scorer(id="answered", description="d", type="agent").generate_score(
    ...     lambda ctx: float("France" in ctx.run.output[0].text()))
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
    1.0
    """
    field = "create_agent_test_run"
    tagged = {} if tagged_system_messages is None else tagged_system_messages
    if not isinstance(tagged, Mapping):
        raise misuse(f"{field}.tagged_system_messages", tagged,
                     "must be a mapping of tag to system messages")
    if request_context is not None and not isinstance(request_context, Mapping):
        raise misuse(f"{field}.request_context", request_context, "must be a mapping or None")
    if run_id is not None and not isinstance(run_id, str):
        raise misuse(f"{field}.run_id", run_id, "must be a str or None")
    return AgentTestRun(
        input=AgentInput(
            input_messages=_messages(f"{field}.input_messages", _alone(input_messages), "user"),
            remembered_messages=_messages(f"{field}.remembered_messages", remembered_messages,
                                          None),
            system_messages=_system(f"{field}.system_messages", system_messages),
            tagged_system_messages={
                _tag(field, tag): _system(f"{field}.tagged_system_messages[{short_repr(tag)}]",
                                          said)
                for tag, said in tagged.items()
            },
        ),
        output=_messages(f"{field}.output", _alone(output), "assistant"),
        request_context=request_context,
        run_id=run_id,
    )


def _tag(field: str, tag: object) -> str:
    if not isinstance(tag, str):
        raise misuse(f"{field}.tagged_system_messages", tag, "must be keyed by str tags")
    return tag


def _alone(value: object) -> object:
    return (value,) if isinstance(value, AgentMessage | str) else value


def _entries(field: str, value: object) -> Sequence[object]:
    # A str is a sequence of its characters: refused where a list of messages is meant.
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise misuse(field, value, "must be a list or tuple")
    return value


def _messages(field: str, value: object, role: MessageRole | None) -> tuple[AgentMessage, ...]:
    kept: list[AgentMessage] = []
    for i, said in enumerate(_entries(field, value)):
        if isinstance(said, AgentMessage):
            kept.append(said)
        elif isinstance(said, str) and role is not None:
            kept.append(create_test_message(said, role=role))
        else:
            wanted = "an AgentMessage" if role is None else "an AgentMessage or a str"
            raise misuse(f"{field}[{i}]", said, f"must be {wanted}")
    return tuple(kept)


def _system(field: str, value: object) -> tuple[SystemMessage, ...]:
    kept: list[SystemMessage] = []
    for i, said in enumerate(_entries(field, value)):
        if isinstance(said, SystemMessage):
            kept.append(said)
        elif isinstance(said, str):
            kept.append(SystemMessage(content=said))
        else:
            raise misuse(f"{field}[{i}]", said, "must be a SystemMessage or a str")
    return tuple(kept)


def _tool_invocations(field: str, value: object) -> tuple[ToolInvocation, ...]:
    if isinstance(value, str | Mapping) or not isinstance(value, Iterable):
        raise misuse(f"{field}.tool_invocations", value, "must be a list of ToolInvocation")
    kept = tuple(value)
    for i, invocation in enumerate(kept):
        if not isinstance(invocation, ToolInvocation):
            raise misuse(f"{field}.tool_invocations[{i}]", invocation,
                         "must be a ToolInvocation")
    return kept
