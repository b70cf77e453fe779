"""Agent-shaped run values, mirroring Mastra's ``type: 'agent'`` scorer input and output.

A scorer created with ``type="agent"`` receives an :class:`AgentInput` as ``ctx.run.input`` and
an :data:`AgentOutput` (a tuple of :class:`AgentMessage`) as ``ctx.run.output``. Mastra-shaped
JSON (camelCase keys) passed to ``run`` is structured into these values.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final, Literal, TypeAlias, final, get_args

import attrs

__all__ = [
    "AgentInput",
    "AgentMessage",
    "AgentOutput",
    "GenericPart",
    "MessageContent",
    "MessagePart",
    "ReasoningPart",
    "SystemMessage",
    "TextPart",
    "ToolInvocation",
    "ToolInvocationPart",
]

MessageRole: TypeAlias = Literal["user", "assistant", "system", "signal"]
MESSAGE_ROLES: Final[frozenset[str]] = frozenset(get_args(MessageRole))
"""The roles a Mastra message may have (:data:`MessageRole`'s values), for checking untyped
input."""
ToolInvocationState: TypeAlias = Literal[
    "partial-call", "call", "result", "approval-requested", "approval-responded",
    "output-error", "output-denied",
]


@final
@attrs.frozen(kw_only=True)
class TextPart:
    """A text part of a message."""

    text: str
    type: Literal["text"] = "text"


@final
@attrs.frozen(kw_only=True)
class ReasoningPart:
    """A reasoning part of a message (the model's visible reasoning)."""

    reasoning: str = ""
    details: tuple[Any, ...] = ()
    type: Literal["reasoning"] = "reasoning"


@final
@attrs.frozen(kw_only=True)
class ToolInvocation:
    """One tool call made by the agent, with its result once known."""

    tool_call_id: str
    tool_name: str
    args: Any = attrs.field(factory=dict)
    result: Any = None
    state: ToolInvocationState = "result"
    is_error: bool | None = None
    error_text: str | None = None
    tool_id: str | None = None


@final
@attrs.frozen(kw_only=True)
class ToolInvocationPart:
    """A message part holding a :class:`ToolInvocation`."""

    tool_invocation: ToolInvocation
    type: Literal["tool-invocation"] = "tool-invocation"


@final
@attrs.frozen(kw_only=True)
class GenericPart:
    """Any other part (``data-*``, ``file``, ``source-url`` …): its ``type`` and other keys."""

    type: str
    data: Mapping[str, Any] = attrs.field(factory=dict)


MessagePart: TypeAlias = TextPart | ToolInvocationPart | ReasoningPart | GenericPart


@final
@attrs.frozen(kw_only=True)
class MessageContent:
    """A stored message's content (Mastra format 2).

    ``parts`` is ``None`` when the message has no parts array (its content was a plain
    string; ``filter_run`` always keeps such messages, as Mastra does).
    """

    # None, not (): Mastra JSON without a "parts" key has no parts array, and filterRun keeps it.
    parts: tuple[MessagePart, ...] | None = None
    content: str | None = None
    format: Literal[2] = 2
    tool_invocations: tuple[ToolInvocation, ...] | None = None
    reasoning: str | None = None
    metadata: Mapping[str, Any] | None = None
    provider_metadata: Mapping[str, Any] | None = None

    def text(self) -> str:
        """The message's text: ``content`` if set, else its text parts joined by newlines."""
        if self.content is not None:
            return self.content
        return "\n".join(p.text for p in self.parts or () if isinstance(p, TextPart))


@final
@attrs.frozen(kw_only=True)
class AgentMessage:
    """A message as Mastra stores it (``MastraDBMessage``)."""

    role: MessageRole
    content: MessageContent
    id: str = ""
    created_at: datetime | None = None
    thread_id: str | None = None
    resource_id: str | None = None
    type: str | None = None

    def text(self) -> str:
        """The message's text (see :meth:`MessageContent.text`)."""
        return self.content.text()


@final
@attrs.frozen(kw_only=True)
class SystemMessage:
    """A system message given to the agent."""

    content: str
    role: Literal["system"] = "system"


@final
@attrs.frozen(kw_only=True)
class AgentInput:
    """What an agent was given: Mastra's ``ScorerRunInputForAgent``.

    >>> AgentInput(input_messages=()).remembered_messages
    ()
    """

    input_messages: tuple[AgentMessage, ...] = ()
    remembered_messages: tuple[AgentMessage, ...] = ()
    system_messages: tuple[SystemMessage, ...] = ()
    tagged_system_messages: Mapping[str, tuple[SystemMessage, ...]] = attrs.field(factory=dict)


AgentOutput: TypeAlias = tuple[AgentMessage, ...]
"""What an agent answered: its response messages (Mastra's ``ScorerRunOutputForAgent``)."""
