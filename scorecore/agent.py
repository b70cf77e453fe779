"""Mastra-shaped agent messages and trajectories: what ``type="agent"`` and
``type="trajectory"`` scorers' inputs and outputs are made of, and
:func:`create_test_message` / :func:`create_agent_test_run` to write such runs from plain text
in tests.

>>> from scorecore.agent import create_agent_test_run
>>> run = create_agent_test_run(input_messages=["Hi"], output=["Hello!"])
>>> run.input.input_messages[0].role, run.output[0].text()
('user', 'Hello!')
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
from scorecore._core._test_runs import AgentTestRun, create_agent_test_run, create_test_message
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
    "AgentTestRun",
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
    "create_agent_test_run",
    "create_test_message",
    "extract_trajectory",
    "merged_tool_invocations",
    "seconds_from_mastra",
]
