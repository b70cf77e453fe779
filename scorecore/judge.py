"""The judge port: what a JudgeModel adapter receives and returns.

The request and response values, judge errors and their classification (``kind_for``,
``AUTH_CODES``), and the processor protocols.
"""

from scorecore._cache import JudgeCache, cache_key
from scorecore._economics import (
    Budget,
    BudgetWarning,
    JudgeLedger,
    JudgeMeter,
    ModelPrice,
    Pricing,
)
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
    "Budget",
    "BudgetWarning",
    "ErrorProcessor",
    "InputProcessor",
    "JsonPromptInjection",
    "JudgeCache",
    "JudgeError",
    "JudgeErrorKind",
    "JudgeLedger",
    "JudgeMessage",
    "JudgeMeter",
    "JudgeModel",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeUsage",
    "ModelPrice",
    "ModelSettings",
    "OutputProcessor",
    "Pricing",
    "Retry",
    "RetryClassifier",
    "StepName",
    "cache_key",
    "kind_for",
]
