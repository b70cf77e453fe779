"""Mastra-shaped agent messages and trajectories: what ``type="agent"`` and
``type="trajectory"`` scorers' inputs and outputs are made of.
"""

from scorecore._core._agent import (
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
from scorecore._core._trajectory import (
    STEP_FIELDS,
    ExpectedStep,
    Ordering,
    StepType,
    Trajectory,
    TrajectoryExpectation,
    TrajectoryStep,
    extract_trajectory,
    merged_tool_invocations,
    seconds_from_mastra,
)

__all__ = [
    "STEP_FIELDS",
    "AgentInput",
    "AgentMessage",
    "AgentOutput",
    "ExpectedStep",
    "GenericPart",
    "MessageContent",
    "MessagePart",
    "Ordering",
    "ReasoningPart",
    "StepType",
    "SystemMessage",
    "TextPart",
    "ToolInvocation",
    "ToolInvocationPart",
    "Trajectory",
    "TrajectoryExpectation",
    "TrajectoryStep",
    "extract_trajectory",
    "merged_tool_invocations",
    "seconds_from_mastra",
]
