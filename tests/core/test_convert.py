"""Tests of the converter: round-trips of every value and Mastra's camelCase JSON shape."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import deque
from collections.abc import Iterator, MutableSequence, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any, Literal

import anyio
import attrs
import cattrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from returns.result import Failure

from scorecore import (
    AgentInput,
    AgentOutput,
    InputMismatch,
    JudgeConfig,
    JudgeExecution,
    PromptStep,
    RunFailureCause,
    ScorePromptStep,
    ScoreResult,
    ScorerRun,
    create_scorer,
    from_mastra_json,
    not_scorable,
    to_mastra_json,
)
from scorecore._core._convert import converter
from scorecore._core._hooks import MAX_ERRORS
from scorecore.judge import JudgeError
from scorecore_adapters.testing import ScriptedJudge, virtual_runtime
from tests import strategies as sts


def roundtrip(value: Any, cls: Any) -> Any:
    return converter.structure(converter.unstructure(value, cls), cls)


@given(sts.scorer_runs())
def test_scorer_run_roundtrips(run: ScorerRun[Any, Any]) -> None:
    """A run survives unstructure → structure unchanged."""
    assert roundtrip(run, ScorerRun[Any, Any]) == run


@given(sts.agent_inputs)
def test_agent_input_roundtrips(value: AgentInput) -> None:
    """Agent input with every kind of message part (generic ones included) round-trips."""
    assert roundtrip(value, AgentInput) == value


@given(sts.agent_outputs)
def test_agent_output_roundtrips(value: AgentOutput) -> None:
    """Agent output messages round-trip."""
    assert roundtrip(value, AgentOutput) == value


@given(sts.generic_parts)
def test_generic_part_is_flat_in_json(part: Any) -> None:
    """A generic part unstructures to Mastra's flat ``{"type": ..., **data}`` shape."""
    assert converter.unstructure(part) == {"type": part.type, **part.data}


@given(sts.judge_errors)
def test_judge_error_chains_roundtrip(error: JudgeError) -> None:
    """A judge error and its whole cause chain round-trip."""
    back = roundtrip(error, JudgeError)
    assert back == error
    assert len(back.chain()) == len(error.chain())


@given(sts.run_failure_causes)
def test_every_cause_roundtrips_tagged(cause: RunFailureCause) -> None:
    """Every failure cause round-trips through the tagged union, its tag its stable kind."""
    data = converter.unstructure(cause, RunFailureCause)
    assert data["cause"] == cause.kind
    assert converter.structure(data, RunFailureCause) == cause


@given(sts.judge_executions())
def test_judge_execution_roundtrips(execution: JudgeExecution) -> None:
    """A judge execution, with each error cause, round-trips through the converter."""
    assert roundtrip(execution, JudgeExecution) == execution


@given(sts.score_results())
def test_score_result_roundtrips_through_converter(result: ScoreResult[Any, Any]) -> None:
    """A whole result round-trips through ``converter.unstructure``/``structure``."""
    assert roundtrip(result, ScoreResult[Any, Any]) == result


@given(sts.score_results())
def test_score_result_roundtrips_through_mastra_json(result: ScoreResult[Any, Any]) -> None:
    """A whole result round-trips through ``to_mastra_json``/``from_mastra_json``, via JSON text."""
    data = json.loads(json.dumps(to_mastra_json(result)))
    assert from_mastra_json(data) == result


@given(sts.score_results(inputs=sts.agent_inputs, outputs=sts.agent_outputs))
def test_agent_result_roundtrips_through_mastra_json(result: ScoreResult[Any, Any]) -> None:
    """Agent-typed results come back typed when the types are given."""
    data = json.loads(json.dumps(to_mastra_json(result)))
    back = from_mastra_json(data, input_type=AgentInput, output_type=AgentOutput)
    assert back == result


@given(sts.score_results())
def test_mastra_json_key_order(result: ScoreResult[Any, Any]) -> None:
    """Run keys come first, then score or notScorable, prompts, step results, judge, and a
    panel's or pairwise judgement's result last."""
    keys = list(to_mastra_json(result))
    assert keys[:3] == ["input", "output", "runId"]
    tail = ["generateScorePrompt", "reason", "generateReasonPrompt", "preprocessStepResult",
            "preprocessPrompt", "analyzeStepResult", "analyzePrompt"]
    if result.judge:
        tail.append("judge")
    if result.details is not None:
        tail.append(result.details.kind)
    assert keys[-len(tail):] == tail
    marker = "score" if result.not_scorable is None else "notScorable"
    assert keys[-len(tail) - 1] == marker
    assert ("score" in keys) != ("notScorable" in keys)
    for key in result.run.extra:
        assert key in keys[3 : -len(tail) - 1]


def test_function_only_result_has_mastras_keys() -> None:
    """A four-function-step run gives exactly the keys of the reference's golden observation."""
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: "P")
        .analyze(lambda ctx: {"a": 1})
        .generate_score(lambda ctx: 0.5)
        .generate_reason(lambda ctx: "why")
    )
    result = anyio.run(lambda: scorer.run(input="in", output="out", run_id="rid")).unwrap()
    assert list(to_mastra_json(result)) == [
        "input", "output", "runId", "score", "generateScorePrompt", "reason",
        "generateReasonPrompt", "preprocessStepResult", "preprocessPrompt", "analyzeStepResult",
        "analyzePrompt",
    ]


def test_prompt_steps_result_matches_mastras_golden_shape() -> None:
    """Prompt steps give ``judge.<camelStep>.executions`` with Mastra's execution keys."""
    judge = ScriptedJudge([{"summary": "S"}, {"score": 0.7}, "Because reasons."],
                          model_id="mock-model-id", provider="mock-provider")
    scorer = (
        create_scorer(id="s", description="d",
                      judge=JudgeConfig(model=judge, instructions="You are a strict judge."))
        .analyze(PromptStep(
            description="a", create_prompt=lambda ctx: f"Analyze: {ctx.run.output}",
            output_schema={"type": "object", "properties": {"summary": {"type": "string"}},
                           "required": ["summary"]},
        ))
        .generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "Score it"))
        .generate_reason(PromptStep(description="r",
                                    create_prompt=lambda ctx: f"Explain score {ctx.score}"))
    )
    runtime, _ = virtual_runtime()
    result = anyio.run(lambda: scorer.run(input="q", output="answer", runtime=runtime)).unwrap()
    data = to_mastra_json(result)
    assert data["runId"] == "run-1"
    assert data["score"] == 0.7
    assert data["reason"] == "Because reasons."
    assert data["analyzeStepResult"] == {"summary": "S"}
    assert data["analyzePrompt"] == "Analyze: answer"
    assert data["generateReasonPrompt"] == "Explain score 0.7"
    assert list(data["judge"]) == ["analyze", "generateScore", "generateReason"]
    analyze = data["judge"]["analyze"]["executions"]
    assert len(analyze) == 1
    assert {k: analyze[0][k] for k in ("status", "prompt", "output", "judgeModelId",
                                       "judgeProvider", "attemptCount", "modelCallCount")} == {
        "status": "success", "prompt": "Analyze: answer", "output": {"summary": "S"},
        "judgeModelId": "mock-model-id", "judgeProvider": "mock-provider",
        "attemptCount": 1, "modelCallCount": 1,
    }
    assert isinstance(analyze[0]["durationMs"], int)
    assert data["judge"]["generateScore"]["executions"][0]["output"] == 0.7
    assert data["judge"]["generateReason"]["executions"][0]["output"] == "Because reasons."


@given(st.sampled_from(sts.STEPS), st.none() | sts.text)
def test_not_scorable_json_uses_camel_step(step: str, reason: str | None) -> None:
    """``notScorable`` names the step in camelCase and keeps the reason; there is no score key."""
    steps: dict[str, Any] = {
        s: (lambda ctx: 0.5) if s == "generate_score" else (lambda ctx: "x")
        for s in sts.STEPS
    }
    steps[step] = lambda ctx: not_scorable(reason)
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(steps["preprocess"]).analyze(steps["analyze"])
        .generate_score(steps["generate_score"]).generate_reason(steps["generate_reason"])
    )
    result = anyio.run(lambda: scorer.run(input=1, output=2, run_id="r")).unwrap()
    data = to_mastra_json(result)
    camel = {"preprocess": "preprocess", "analyze": "analyze",
             "generate_score": "generateScore", "generate_reason": "generateReason"}[step]
    expected = {"step": camel} if reason is None else {"step": camel, "reason": reason}
    assert data["notScorable"] == expected
    assert "score" not in data
    assert from_mastra_json(data) == result


# --- strict collections and bounded messages ------------------------------------

COLLECTION_TYPES: tuple[Any, ...] = (
    list[str], set[str], frozenset[str], tuple[str, ...], Sequence[str], MutableSequence[str],
    AbstractSet[str], deque[str], list[str] | None, list[int],
)


@functools.cache
def holder(field_type: Any, kind: str) -> type:
    """A user input type (attrs or dataclass) with one collection field, ``tags``."""
    if kind == "attrs":
        return attrs.make_class("Holder", {"tags": attrs.field(type=field_type)}, frozen=True)
    return dataclasses.make_dataclass("Holder", [("tags", field_type)], frozen=True)


def typed_scorer(cls: Any) -> Any:
    return create_scorer(
        id="typed", description="d", input_type=cls, output_type=cls
    ).generate_score(lambda ctx: 1.0)


@given(
    field_type=st.sampled_from((*COLLECTION_TYPES, tuple[str, int], list[list[str]])),
    kind=st.sampled_from(["attrs", "dataclass"]),
    bad=sts.not_collections,
    which=st.sampled_from(["input", "output"]),
)
def test_collection_fields_refuse_text_bytes_and_mappings(
    field_type: Any, kind: str, bad: Any, which: str
) -> None:
    """A str, bytes or mapping for a list/set/tuple field is an InputMismatch naming the field."""
    cls = holder(field_type, kind)
    good: dict[str, Any] = {"tags": []} if field_type != tuple[str, int] else {"tags": ["a", 1]}
    values = {"input": good, "output": good, which: {"tags": bad}}
    outcome = anyio.run(lambda: typed_scorer(cls).run(input=values["input"],
                                                      output=values["output"]))
    assert isinstance(outcome, Failure), outcome
    cause = outcome.failure().cause
    assert isinstance(cause, InputMismatch)
    assert cause.which == which
    (error,) = cause.errors
    assert error.endswith(f"@ {which}.tags")
    assert error.startswith("expected a list")
    assert f"of type {type(bad).__name__}" in error


def test_a_string_is_not_six_tags() -> None:
    """The issue's example: {"tags": "urgent"} is refused, not scored as six one-letter tags."""
    cls = holder(list[str], "attrs")
    outcome = anyio.run(lambda: typed_scorer(cls).run(input={"tags": "urgent"},
                                                      output={"tags": ["urgent"]}))
    assert outcome.failure().cause.errors == (
        "expected a list, got 'urgent' of type str @ input.tags",
    )


def test_nested_collections_are_checked_at_every_level() -> None:
    """An inner str where a list is declared is named by its full path."""
    cls = holder(dict[str, list[list[str]]], "attrs")
    outcome = anyio.run(lambda: typed_scorer(cls).run(
        input={"tags": {"k": [["ok"], "no", {"a": 1}]}}, output={"tags": {}}))
    assert set(outcome.failure().cause.errors) == {
        "expected a list, got 'no' of type str @ input.tags['k'][1]",
        "expected a list, got {'a': 1} of type dict @ input.tags['k'][2]",
    }


@given(
    field_type=st.sampled_from(COLLECTION_TYPES),
    kind=st.sampled_from(["attrs", "dataclass"]),
    items=st.lists(st.text(max_size=8), max_size=5),
)
def test_collection_fields_accept_lists_and_roundtrip(
    field_type: Any, kind: str, items: list[str]
) -> None:
    """A proper list is accepted (as the declared collection) and round-trips."""
    values: list[Any] = [len(i) for i in items] if field_type == list[int] else list(items)
    cls = holder(field_type, kind)
    result = anyio.run(lambda: typed_scorer(cls).run(input={"tags": values},
                                                     output={"tags": list(values)})).unwrap()
    value = result.run.input
    assert isinstance(value, cls)
    tags = value.tags  # type: ignore[attr-defined]
    if isinstance(tags, set | frozenset):
        assert tags == set(values)
    else:
        assert list(tags) == values
    assert converter.structure(converter.unstructure(value), cls) == value


@attrs.frozen
class Ticket:
    subject: str
    priority: int
    level: Literal["low", "high"] = "low"
    when: datetime | None = None
    tags: list[str] = attrs.field(factory=list)
    scores: dict[str, int] = attrs.field(factory=dict)


TICKET = typed_scorer(Ticket)
FEW_KB = 4_000


def mismatch(data: dict[str, Any]) -> InputMismatch:
    outcome = anyio.run(lambda: TICKET.run(input=data, output={"subject": "s", "priority": 1}))
    cause = outcome.failure().cause
    assert isinstance(cause, InputMismatch)
    return cause


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("priority", "x" * 2_000_000),
        ("subject", ["x" * 2_000_000]),
        ("tags", "x" * 2_000_000),
        ("level", "x" * 2_000_000),
        ("when", "x" * 2_000_000),
    ],
)
def test_a_2mb_value_gives_a_short_message_naming_the_field(field: str, value: Any) -> None:
    """A 2 MB value is cut in the message; the field path, the type and the length remain."""
    cause = mismatch({"subject": "s", "priority": 1, field: value})
    text = str(anyio.run(lambda: TICKET.run(input={"subject": "s", "priority": 1, field: value},
                                            output={"subject": "s", "priority": 1})).failure())
    assert len(text) < FEW_KB
    (error,) = cause.errors
    assert error.endswith(f"@ input.{field}")
    assert "2,000,000 chars" in error or "(list of 1 item)" in error
    assert "xxxxxxxxxx" in error


def test_huge_and_odd_keys_are_cut_in_paths_and_extra_field_lists() -> None:
    """A 2 MB key, non-str keys and thousands of extra keys give a short message."""
    cause = mismatch({"subject": "s", "priority": 1, "scores": {"k" * 2_000_000: "bad"}})
    (error,) = cause.errors
    assert len(error) < 500
    assert error.startswith("expected int, got 'bad' @ input.scores['kkkk")
    extra: dict[Any, Any] = {1: "x", None: "y", **{f"e{i}": 0 for i in range(5_000)}}
    cause = mismatch({"subject": "s", "priority": 1, **extra})
    (error,) = cause.errors
    assert error.startswith("extra fields found (")
    assert "1, None, e0, e1" in error
    assert "more)" in error
    assert len(error) < 1_000


class Counted(list[Any]):
    """A list that counts how many of its items were looked at."""

    looked = 0

    def __iter__(self) -> Iterator[Any]:
        for item in super().__iter__():
            self.looked += 1
            yield item


class CountedDict(dict[Any, Any]):
    """A dict that counts how many of its items were looked at."""

    looked = 0

    def items(self) -> Any:
        for pair in super().items():
            self.looked += 1
            yield pair


def test_thousands_of_bad_items_stop_at_the_first_errors() -> None:
    """A list of 20,000 wrong items lists the first errors, then says checking stopped: the
    rest is never looked at (rejecting costs what the first errors cost, not the list)."""
    tags = Counted(range(20_000))
    cause = mismatch({"subject": "s", "priority": 1, "tags": tags})
    assert len(cause.errors) == MAX_ERRORS
    assert cause.errors[0] == "expected str, got 0 @ input.tags[0]"
    assert cause.errors[-2] == "expected str, got 48 @ input.tags[48]"
    assert cause.errors[-1] == (
        f"… and more errors @ input: checking stopped after {MAX_ERRORS} errors in one "
        f"collection (the rest was not checked)"
    )
    assert tags.looked == MAX_ERRORS


def test_a_huge_mapping_of_bad_values_stops_at_the_first_errors() -> None:
    """The same for a mapping: 200,000 wrong values, the first errors, nothing more read."""
    scores = CountedDict({f"k{i}": "high" for i in range(200_000)})
    cause = mismatch({"subject": "s", "priority": 1, "scores": scores})
    assert cause.errors[0] == "expected int, got 'high' @ input.scores['k0']"
    assert "checking stopped" in cause.errors[-1]
    assert scores.looked == MAX_ERRORS


@pytest.mark.parametrize("kind", [list[str], tuple[str, ...], set[str], frozenset[str],
                                  Sequence[str], deque[str], dict[str, str]])
def test_stopping_early_keeps_each_collections_type_when_valid(kind: Any) -> None:
    """Valid data still becomes the container cattrs itself would build."""
    data: Any = {"a": "b"} if kind == dict[str, str] else ["a", "b"]
    assert converter.structure(data, kind) == cattrs.Converter().structure(data, kind)
    assert type(converter.structure(data, kind)) is type(cattrs.Converter().structure(data, kind))


@given(name=sts.huge_values, field=st.sampled_from(
    ["subject", "priority", "level", "when", "tags", "scores", "extra"]
))
def test_huge_values_never_give_huge_messages(name: str, field: str) -> None:
    """Any huge, deep or odd value in any field: a mismatch of a few KB naming the field."""
    value = sts.HUGE[name]
    valid = (field == "subject" and isinstance(value, str)) or (
        field == "priority" and isinstance(value, int)
    ) or (field == "scores" and name == "dict with a 2 MB key")
    assume(not valid)
    data = {"subject": "s", "priority": 1, field: value}
    outcome = anyio.run(lambda: TICKET.run(input=data, output={"subject": "s", "priority": 1}))
    assert isinstance(outcome, Failure), name
    cause = outcome.failure().cause
    assert isinstance(cause, InputMismatch)
    assert len(str(outcome.failure())) < FEW_KB
    assert len(repr(cause)) < FEW_KB
    assert any(f"input.{field}" in e or "extra fields found (extra" in e for e in cause.errors)
