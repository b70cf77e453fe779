"""Mastra-shaped agent messages: what a ``type="agent"`` scorer's input and output are made of.
"""

from scorecore._agent import (
    AgentInput,
    AgentMessage,
    AgentOutput,
    GenericPart,
    MessageContent,
    MessagePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)

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
