"""The judge port: what a JudgeModel adapter receives and returns.

The request and response values, judge errors and their classification (``kind_for``,
``AUTH_CODES``), and the processor protocols.
"""

from scorecore._judge import (
    AUTH_CODES,
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
    RetryClassifier,
    StepName,
    kind_for,
)

__all__ = [
    "AUTH_CODES",
    "Abort",
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
    "OutputProcessor",
    "Retry",
    "RetryClassifier",
    "StepName",
    "kind_for",
]
