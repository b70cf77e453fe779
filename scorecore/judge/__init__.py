"""The judge port: what a ``JudgeModel`` adapter receives and returns, and the processor protocols.

- the request and response values (``JudgeRequest``, ``JudgeMessage``, ``JudgeResponse``,
  ``JudgeUsage``, ``ModelSettings``) and the failed call (``JudgeError``, ``JudgeErrorKind``);
- the ports: ``JudgeModel`` and its optional ``SchemaChecker`` capability; the input, output and
  error processors with their answers ``Abort`` and ``Retry`` (and ``RetryClassifier``);
- how the schema reaches the judge: ``JsonPromptInjection``, ``StructuredOutputMode`` and
  ``schema_in_prompt``, for an adapter that falls back from native structured output;
- ``TokenLogprob``: one generated token's log-probability and its likeliest alternatives
  (``JudgeResponse.logprobs``, asked for with ``JudgeRequest.top_logprobs``);
- ``WorkedExample``: a prompt step's worked example, declared (``PromptStep(example=...)``) so
  that a reply restating it instead of judging the run is caught.

``JudgeModel`` and ``ModelSettings`` are re-exported from :mod:`scorecore` (the same objects).
Two submodules serve other audiences: :mod:`scorecore.judge.retry` classifies errors and computes
waits (for retry processors and adapters); :mod:`scorecore.judge.economics` holds the cache,
prices, budget and meter.

>>> from scorecore.judge import JudgeError, JudgeMessage, JudgeRequest
>>> JudgeRequest(messages=[JudgeMessage(role="user", content="Rate this")]).messages[0].role
'user'
>>> JudgeError(kind="rate_limit", status=429).is_retryable
True
"""

from scorecore._core._echo import WorkedExample
from scorecore._core._failed_call import JudgeError, JudgeErrorKind
from scorecore._core._judge import (
    Abort,
    ErrorProcessor,
    InputProcessor,
    JsonPromptInjection,
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
    StructuredOutputMode,
)
from scorecore._core._logprobs import TokenLogprob
from scorecore._core._output_schema import schema_in_prompt

__all__ = [
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
    "SchemaChecker",
    "StructuredOutputMode",
    "TokenLogprob",
    "WorkedExample",
    "schema_in_prompt",
]
