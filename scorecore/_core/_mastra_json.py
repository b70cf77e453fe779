"""Mastra's camelCase result JSON: the table of result fields, ``to_mastra_json`` and back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, cast, final

import attrs

from scorecore._core._causes import (
    JudgeExecutionError,
    JudgeFailed,
    JudgeOutputInvalid,
    RunFailureCause,
)
from scorecore._core._convert import converter
from scorecore._core._judge import JudgeUsage
from scorecore._core._keys import camel
from scorecore._core._values import (
    STEP_NAMES,
    CompositeDetails,
    JudgeExecution,
    NotScorable,
    ScoreResult,
    ScorerRun,
    StepName,
    details_kinds,
)

__all__ = [
    "cause_from_json",
    "cause_to_json",
    "from_mastra_json",
    "judge_from_json",
    "judge_to_json",
    "to_mastra_json",
]

T = TypeVar("T")

_STEP_CAMEL = {name: camel(name) for name in STEP_NAMES}
_CAMEL_STEP = {v: k for k, v in _STEP_CAMEL.items()}


def _not_scorable_json(marker: NotScorable) -> dict[str, object]:
    out = {k: v for k, v in converter.unstructure(marker).items() if v is not None}
    if "step" in out:
        out["step"] = camel(out["step"])
    return out


def _not_scorable_from_json(marker: Any) -> NotScorable:  # noqa: ANN401 - stored JSON
    kind = marker.get("kind")
    return NotScorable(reason=marker.get("reason"), step=_CAMEL_STEP.get(marker.get("step", "")),
                       kind=kind if isinstance(kind, str) else None)


def judge_to_json(judge: Mapping[StepName, tuple[JudgeExecution, ...]]) -> dict[str, object]:
    """A result's judge executions per step as Mastra's JSON (``{"analyze": {"executions":
    [...]}}``)."""
    return {
        _STEP_CAMEL[step]: {"executions": [_execution_json(e) for e in executions]}
        for step, executions in judge.items()
    }


def judge_from_json(
    data: Any,  # noqa: ANN401 - stored JSON, read as it is written
) -> dict[StepName, tuple[JudgeExecution, ...]]:
    """The judge executions back from :func:`judge_to_json`'s JSON (``None`` reads as none)."""
    return {
        _CAMEL_STEP[step]: tuple(_execution_from_json(e) for e in body.get("executions", ()))
        for step, body in (data or {}).items()
    }


def cause_to_json(cause: RunFailureCause) -> dict[str, object]:
    """A run's failure cause as a row keeps it: ``name``, ``message`` and the tagged ``cause``."""
    return {"name": type(cause).__name__, "message": cause.describe(),
            "cause": converter.unstructure(cause, RunFailureCause)}


def cause_from_json(data: Mapping[str, Any]) -> RunFailureCause:
    """The cause back from :func:`cause_to_json`'s JSON (its ``cause`` key)."""
    return converter.structure(data["cause"], RunFailureCause)  # type: ignore[arg-type]


def _same(value: T) -> T:
    return value


def _details_json(details: CompositeDetails) -> dict[str, Any]:
    return {details.kind: details.to_json()}


def _details_from_json(data: Mapping[str, Any]) -> CompositeDetails | None:
    for kind, family in details_kinds().items():
        raw = data.get(kind)
        if raw is not None:
            return family.from_json(raw)
    return None


@final
@attrs.frozen(kw_only=True)
class ResultField:
    """One field of a :class:`ScoreResult` (or of its run): its Mastra JSON key, where rows keep it.

    The one table of result fields (:data:`RESULT_FIELDS`) drives :func:`to_mastra_json`,
    :func:`from_mastra_json`, the score rows built from results and the stores' column names.
    """

    name: str
    """The attribute: on the result, or on ``result.run`` when ``on_run``."""
    key: str
    """Mastra's camelCase key; also the stored column of a row that keeps it as a column."""
    on_run: bool = False
    stored: Literal["column", "context", "metadata"] = "column"
    """Where a score row keeps it: its own column (named ``key``), in ``additionalContext``, or in
    ``metadata`` (both under ``key``)."""
    optional: bool = False
    """Left out of Mastra's JSON when ``None`` or empty."""
    # Any in: each field's encoder takes that field's type, each decoder the JSON it reads.
    encode: Callable[[Any], object] = converter.unstructure
    """The field's value (not ``None``) as JSON; may raise on user values."""
    decode: Callable[[Any], Any] = _same  # out: the field's type, which callers know by key
    """The inverse of ``encode`` (not given ``None``)."""
    spread: bool = False
    """``encode`` gives a mapping whose keys stand in the JSON (or the row's ``metadata``)
    themselves, in place of ``key``: a composite's details, under their kind."""

    def value(self, result: ScoreResult) -> Any:  # noqa: ANN401 - the type varies by field
        """The field's value in ``result``."""
        return getattr(result.run if self.on_run else result, self.name)

    def to_json(self, result: ScoreResult) -> object:
        """The field's value in ``result`` as JSON (``None`` stays ``None``)."""
        value = self.value(result)
        return None if value is None else self.encode(value)


RESULT_FIELDS: tuple[ResultField, ...] = (
    # The run's fields: Mastra's JSON has them first, then the run's extra keys.
    ResultField(name="input", key="input", on_run=True),
    ResultField(name="output", key="output", on_run=True),
    ResultField(name="run_id", key="runId", on_run=True),
    ResultField(name="ground_truth", key="groundTruth", on_run=True, stored="context",
                optional=True),
    ResultField(name="request_context", key="requestContext", on_run=True, optional=True),
    ResultField(name="expected_trajectory", key="expectedTrajectory", on_run=True,
                stored="context", optional=True),
    # The result's own fields; ``score`` is left out when the run is not scorable.
    ResultField(name="score", key="score"),
    ResultField(name="not_scorable", key="notScorable", stored="metadata", optional=True,
                encode=_not_scorable_json, decode=_not_scorable_from_json),
    ResultField(name="generate_score_prompt", key="generateScorePrompt"),
    ResultField(name="reason", key="reason"),
    ResultField(name="generate_reason_prompt", key="generateReasonPrompt"),
    ResultField(name="preprocess_step_result", key="preprocessStepResult"),
    ResultField(name="preprocess_prompt", key="preprocessPrompt"),
    ResultField(name="analyze_step_result", key="analyzeStepResult"),
    ResultField(name="analyze_prompt", key="analyzePrompt"),
    ResultField(name="judge", key="judge", stored="metadata", optional=True,
                encode=judge_to_json, decode=judge_from_json),
    # How sure the judge was (0 to 1): absent when nothing measured it, as Mastra has it.
    ResultField(name="confidence", key="confidence", stored="metadata", optional=True),
    # A composite's details stand under their own kind ("panel", "pairwise"), not "details".
    ResultField(name="details", key="details", stored="metadata", optional=True, spread=True,
                encode=_details_json),
)
"""Every field of a :class:`ScoreResult` and of its :class:`ScorerRun` (except ``extra``), in the
order of Mastra's JSON."""

RESULT_FIELD: Mapping[str, ResultField] = {f.name: f for f in RESULT_FIELDS}
""":data:`RESULT_FIELDS` by attribute name."""

_RUN_PART = tuple(f for f in RESULT_FIELDS if f.on_run)
_RESULT_PART = tuple(f for f in RESULT_FIELDS if not f.on_run)
_KEYS = frozenset(f.key for f in RESULT_FIELDS if not f.spread)


def _execution_json(execution: JudgeExecution) -> dict[str, object]:
    out: dict[str, object] = {
        "status": execution.status,
        "prompt": execution.prompt,
        "output": execution.output,
        "judgeModelId": execution.model_id,
        "judgeProvider": execution.provider,
        "attemptCount": execution.attempt_count,
        "modelCallCount": execution.model_call_count,
        "durationMs": round(execution.duration * 1000),
        "durationSeconds": execution.duration,
    }
    if execution.usage is not None:
        out["usage"] = {k: v for k, v in converter.unstructure(execution.usage).items()
                        if v is not None}
    if execution.finish_reason is not None:
        out["finishReason"] = execution.finish_reason
    if execution.structured_output is not None:
        out["structuredOutput"] = execution.structured_output
    if execution.raw_output is not None:
        out["rawOutput"] = execution.raw_output
    if execution.waits:
        out["waits"] = list(execution.waits)
    if execution.processor_errors:
        out["processorErrors"] = list(execution.processor_errors)
    if execution.cost_usd is not None:
        out["costUsd"] = execution.cost_usd
    if execution.saved_usd is not None:
        out["savedUsd"] = execution.saved_usd
    if execution.cache_hits:
        out["cacheHits"] = execution.cache_hits
    if execution.cache_misses:
        out["cacheMisses"] = execution.cache_misses
    if execution.error is not None:
        out["error"] = {
            "name": type(execution.error).__name__,
            "message": execution.error.describe(),
            "code": _error_code(execution.error),
            "cause": converter.unstructure(execution.error, RunFailureCause),
        }
    return out


def _error_code(error: JudgeExecutionError) -> str | None:
    if isinstance(error, JudgeOutputInvalid):
        return "STRUCTURED_OUTPUT_SCHEMA_VALIDATION_FAILED"
    if isinstance(error, JudgeFailed):
        return error.error.code or error.error.kind
    return None


def _execution_from_json(data: Mapping[str, Any]) -> JudgeExecution:
    error = data.get("error")
    usage = data.get("usage")
    return JudgeExecution(
        status=data["status"],
        prompt=data["prompt"],
        output=data.get("output"),
        model_id=data["judgeModelId"],
        provider=data.get("judgeProvider") or "",
        attempt_count=data["attemptCount"],
        model_call_count=data["modelCallCount"],
        duration=data.get("durationSeconds", data.get("durationMs", 0) / 1000),
        usage=None if usage is None else converter.structure(usage, JudgeUsage),
        finish_reason=data.get("finishReason"),
        structured_output=data.get("structuredOutput"),
        raw_output=data.get("rawOutput"),
        waits=tuple(data.get("waits", ())),
        processor_errors=tuple(data.get("processorErrors", ())),
        cost_usd=data.get("costUsd"),
        saved_usd=data.get("savedUsd"),
        cache_hits=data.get("cacheHits", 0),
        cache_misses=data.get("cacheMisses", 0),
        error=None if error is None or "cause" not in error
        else converter.structure(error["cause"], RunFailureCause),  # type: ignore[arg-type]
    )


def to_mastra_json(result: ScoreResult) -> dict[str, Any]:
    """Mastra's camelCase result shape, so results interoperate with Mastra tooling.

    Run keys come first (``input``, ``output``, ``runId`` …, extra keys), then ``score`` or
    ``notScorable``, the prompts and step results, and ``judge`` when a prompt step ran.

    >>> result = ScoreResult(run=ScorerRun(input="q", output="a", run_id="r1"), score=1.0)
    >>> to_mastra_json(result)["runId"], to_mastra_json(result)["score"]
    ('r1', 1.0)
    """
    out: dict[str, object] = {}
    for field in _RUN_PART:
        value = field.value(result)
        if value is not None or not field.optional:
            out[field.key] = field.to_json(result)
    for key, value in result.run.extra.items():
        out[key] = converter.unstructure(value)
    scorable = result.not_scorable is None
    for field in _RESULT_PART:
        value = field.value(result)
        if (field.optional and not value) or (field.name == "score" and not scorable):
            continue
        if field.spread:
            # A spread field's encoder gives a mapping (see ResultField.spread).
            out.update(cast("Mapping[str, object]", field.to_json(result)))
        else:
            out[field.key] = field.to_json(result)
    return out


def from_mastra_json(
    data: Mapping[str, Any],
    *,
    # Type forms (list[str], a Literal, a union), which mypy cannot hold as a type[...]:
    input_type: Any = Any,  # noqa: ANN401
    output_type: Any = Any,  # noqa: ANN401
) -> ScoreResult:
    """Structure Mastra's camelCase result shape back into a :class:`ScoreResult`.

    Keys that are neither run fields nor result fields are kept as the run's ``extra``. A
    composite's details (``panel``, ``pairwise``) are structured back into ``details`` when the
    module defining their family is imported (:mod:`scorecore.scorers` for the built-ins).
    """
    known = _KEYS | details_kinds().keys()
    extra = {k: v for k, v in data.items() if k not in known}
    values: dict[str, Any] = {}
    for field in RESULT_FIELDS:
        if field.spread:
            values[field.name] = _details_from_json(data)
            continue
        raw = data.get(field.key)
        values[field.name] = None if raw is None else field.decode(raw)
    values["input"] = converter.structure(data.get("input"), input_type)
    values["output"] = converter.structure(data.get("output"), output_type)
    run = ScorerRun(**{f.name: values.pop(f.name) for f in _RUN_PART}, extra=extra)
    if values["judge"] is None:
        values["judge"] = {}
    return ScoreResult(run=run, **values)
