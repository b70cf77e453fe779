"""The judge port: what a JudgeModel adapter receives and returns, and what judge calls cost.

- the request and response values (``JudgeRequest``, ``JudgeResponse``, ``ModelSettings`` …),
  the processor protocols and the judge model's optional ``SchemaChecker`` capability;
- judge errors and their classification: ``kind_for``, ``AUTH_CODES``, the one home of
  retryability (``is_retryable_error`` and friends) and of ``Retry-After``
  (``read_retry_after``);
- ``schema_in_prompt``, for an adapter that falls back from native structured output to
  the prompt, and the ``StructuredOutputMode`` it reports on its ``JudgeResponse``;
- economics: the cache port (``JudgeCache``, ``cache_key``), prices (``Pricing``,
  ``ModelPrice``), spending limits (``Budget``, ``BudgetWarning``) and the ``JudgeMeter`` a
  run's calls go through, with its shared ``JudgeLedger``.
"""

from scorecore._core._cache import JudgeCache, cache_key
from scorecore._core._economics import (
    Budget,
    BudgetWarning,
    JudgeLedger,
    JudgeMeter,
    ModelPrice,
    Pricing,
    current_cache_key,
)
from scorecore._core._judge import (
    DEFAULT_OUTPUT_CAP,
    OUTPUT_CAP_FIELDS,
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
    SchemaChecker,
    StepName,
    StructuredOutputMode,
)
from scorecore._core._retryability import (
    AUTH_CODES,
    BUILTIN_RETRYABLE_CODES,
    is_auth_error,
    is_model_retryable,
    is_retryable_error,
    is_retryable_node,
    is_retryable_provider_error,
    is_unknown_error,
    kind_for,
    read_retry_after,
)
from scorecore._core._structured import schema_in_prompt

__all__ = [
    "AUTH_CODES",
    "BUILTIN_RETRYABLE_CODES",
    "DEFAULT_OUTPUT_CAP",
    "OUTPUT_CAP_FIELDS",
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
    "SchemaChecker",
    "StepName",
    "StructuredOutputMode",
    "cache_key",
    "current_cache_key",
    "is_auth_error",
    "is_model_retryable",
    "is_retryable_error",
    "is_retryable_node",
    "is_retryable_provider_error",
    "is_unknown_error",
    "kind_for",
    "read_retry_after",
    "schema_in_prompt",
]
