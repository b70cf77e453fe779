"""scorecore: strictly typed LLM-evaluation scorers.

A scorer is a pipeline ``preprocess → analyze → generate_score → generate_reason`` whose
steps are plain functions or prompt objects answered by an LLM judge.
"""

from scorecore._errors import ScorecoreError, ScorerDefinitionError, ScorerRunError
from scorecore._judge import (
    Abort,
    ErrorProcessor,
    InputProcessor,
    JsonPromptInjection,
    JudgeError,
    JudgeErrorKind,
    JudgeMessage,
    JudgeModel,
    JudgeRequest,
    JudgeResponse,
    JudgeUsage,
    ModelSettings,
    OutputProcessor,
    Retry,
    StepName,
)
from scorecore._runtime import Clock, NewId, Runtime, Sleep

__all__ = [
    "Abort",
    "Clock",
    "ErrorProcessor",
    "InputProcessor",
    "JsonPromptInjection",
    "JudgeError",
    "JudgeErrorKind",
    "JudgeMessage",
    "JudgeModel",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeUsage",
    "ModelSettings",
    "NewId",
    "OutputProcessor",
    "Retry",
    "Runtime",
    "ScorecoreError",
    "ScorerDefinitionError",
    "ScorerRunError",
    "Sleep",
    "StepName",
]
