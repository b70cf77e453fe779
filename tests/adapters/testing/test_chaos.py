"""ChaosJudge: deterministic from its seed, faithful to its rate, and faults like a provider's."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from scorecore import JudgeConfig, ScorePromptStep, ScorerDefinitionError, create_scorer
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters.retry import StreamErrorRetryProcessor, retry_after_seconds
from scorecore_adapters.testing import (
    ALL_FAULTS,
    ChaosJudge,
    FaultPlan,
    FunctionJudge,
    ScriptedJudge,
    virtual_runtime,
)

SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"],
}
WITH_SCHEMA = JudgeRequest(messages=[JudgeMessage(role="user", content="rate")],
                           output_schema=SCHEMA)
PLAIN = JudgeRequest(messages=[JudgeMessage(role="user", content="why?")], step="generate_reason")
WALL = 1_700_000_000.0
TRANSIENT = tuple(k for k in ALL_FAULTS
                  if k not in ("malformed_json", "schema_invalid", "truncated"))

kind_sets = st.lists(st.sampled_from(ALL_FAULTS), min_size=1, max_size=len(ALL_FAULTS),
                     unique=True).map(tuple)


def chaos(rate: float, kinds: Any = ALL_FAULTS, seed: int = 0, **plan: Any) -> ChaosJudge:
    inner = FunctionJudge(lambda req: {"score": 0.75, "note": "x" * 20})
    return ChaosJudge(inner, plan=FaultPlan(rate=rate, kinds=kinds, seed=seed, **plan),
                      now=lambda: WALL)


def drive(judge: ChaosJudge, calls: int, request: JudgeRequest = WITH_SCHEMA) -> list[Any]:
    async def main() -> list[Any]:
        return [await judge.generate(request) for _ in range(calls)]

    return anyio.run(main)


def outcome(answer: Any) -> Any:
    return (answer.unwrap().text, answer.unwrap().finish_reason) if answer.__class__.__name__ \
        == "Success" else answer.failure()


@settings(max_examples=40)
@given(seed=st.integers(-(2**63), 2**63), rate=st.floats(0, 1), kinds=kind_sets)
def test_same_seed_same_faults(seed: int, rate: float, kinds: tuple[Any, ...]) -> None:
    """Two chaos judges with one plan inject the same faults at the same calls, with the
    same errors and replies."""
    first, second = chaos(rate, kinds, seed), chaos(rate, kinds, seed)
    a, b = drive(first, 60), drive(second, 60)
    assert first.injected == second.injected
    assert [outcome(x) for x in a] == [outcome(x) for x in b]
    assert {f.kind for f in first.injected} <= set(kinds)


def test_other_seeds_give_other_faults() -> None:
    """The seed matters: of 20 seeds at rate 0.5, no two pick the same 64 calls."""
    picks = {tuple(f.call for f in drive_and_get(seed)) for seed in range(20)}
    assert len(picks) == 20


def drive_and_get(seed: int) -> tuple[Any, ...]:
    judge = chaos(0.5, ("unavailable",), seed)
    drive(judge, 64)
    return judge.injected


@settings(max_examples=15)
@given(seed=st.integers(0, 2**32), rate=st.floats(0, 1), kinds=kind_sets)
def test_fault_rate_is_the_plans(seed: int, rate: float, kinds: tuple[Any, ...]) -> None:
    """Over 4,000 calls the share of faults is the plan's rate within 5 standard errors, and
    each kind's share is an even split of it (rate / len(kinds), same bound)."""
    n = 4_000
    judge = chaos(rate, kinds, seed)
    drive(judge, n)
    bound = 5 * math.sqrt(rate * (1 - rate) / n) + 1 / n
    assert abs(len(judge.injected) / n - rate) <= bound
    share = rate / len(kinds)
    kind_bound = 5 * math.sqrt(share * (1 - share) / n) + 1 / n
    for kind in kinds:
        assert abs(judge.counts().get(kind, 0) / n - share) <= kind_bound, kind


def test_rate_zero_never_and_rate_one_always() -> None:
    """rate=0 passes every call to the inner judge; rate=1 answers every call with a fault."""
    quiet, loud = chaos(0.0), chaos(1.0)
    assert all(a.unwrap().text.startswith('{"score"') for a in drive(quiet, 200))
    assert quiet.injected == ()
    drive(loud, 200)
    assert [f.call for f in loud.injected] == list(range(1, 201))


@pytest.mark.parametrize(
    ("kind", "status", "error_kind"),
    [("rate_limit", 429, "rate_limit"), ("server_error", 500, "server"),
     ("unavailable", 503, "server"), ("overloaded", 529, "server"),
     ("connection_reset", None, "network"), ("timeout", None, "timeout")],
)
def test_error_faults_look_like_the_provider_errors(
    kind: Any, status: Any, error_kind: Any
) -> None:
    """Each error kind is the retryable provider error it names; the inner judge is not
    called."""
    inner = ScriptedJudge([])
    judge = ChaosJudge(inner, plan=FaultPlan(rate=1, kinds=(kind,)))
    error = drive(judge, 1)[0].failure()
    assert (error.status, error.kind, error.is_retryable) == (status, error_kind, True)
    assert "injected by ChaosJudge at call 1" in error.message
    assert inner.calls == 0
    assert judge.injected[0].error == error


@pytest.mark.parametrize("wait", [0, 0.25, 1, 2.5, 30])
@pytest.mark.parametrize(
    "kind", ["rate_limit_retry_after", "rate_limit_retry_after_ms", "rate_limit_retry_after_date"]
)
def test_retry_after_in_every_form_is_read_back(kind: Any, wait: float) -> None:
    """The Retry-After of each form reads back (as the retry processor reads it) as the plan's
    wait: milliseconds rounded up to the next one, seconds and HTTP dates to the next whole
    second (HTTP allows no fraction)."""
    judge = chaos(1, (kind,), retry_after=wait)
    error = drive(judge, 1)[0].failure()
    read = retry_after_seconds(error, now=lambda: WALL)
    assert error.status == 429
    if kind == "rate_limit_retry_after_date":
        assert "GMT" in error.headers["retry-after"]
        assert read == math.ceil(wait) or (wait == 0 and read in (None, 0.0))
    else:
        assert read == pytest.approx(math.ceil(wait * 1000) / 1000 if kind.endswith("ms")
                                     else math.ceil(wait))


def test_malformed_replies_are_not_json() -> None:
    """malformed_json replies are text no JSON reader takes, and vary by call."""
    judge = chaos(1, ("malformed_json",))
    texts = [a.unwrap().text for a in drive(judge, 10)]
    for text in texts:
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)
    assert len(set(texts)) > 1


@pytest.mark.parametrize("schema", [
    SCHEMA,
    {"type": "array"},
    {"type": "string", "minLength": 1},
    {"enum": [1, 2, 3]},
    {"type": "object", "properties": {"score": {"type": "string"}}, "required": ["score"],
     "additionalProperties": False},
    {},
])
def test_schema_invalid_replies_break_the_requests_schema(schema: dict[str, Any]) -> None:
    """schema_invalid is JSON that the request's schema rejects; for a schema accepting any
    JSON (``{}``) it is text that is not JSON, since nothing else can break it."""
    request = JudgeRequest(messages=[JudgeMessage(role="user", content="x")],
                           output_schema=schema)
    judge = chaos(1, ("schema_invalid",))
    text = drive(judge, 1, request)[0].unwrap().text
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        assert schema == {}
    else:
        assert not Draft202012Validator(schema).is_valid(value)


def test_truncated_cuts_the_inner_reply() -> None:
    """truncated asks the inner judge and returns the first half of its reply, finish reason
    "length"; an inner failure is passed on and nothing is recorded."""
    judge = chaos(1, ("truncated",))
    response = drive(judge, 1)[0].unwrap()
    full = json.dumps({"score": 0.75, "note": "x" * 20})
    assert response.text == full[: len(full) // 2]
    assert response.finish_reason == "length"
    empty = ChaosJudge(ScriptedJudge([]), plan=FaultPlan(rate=1, kinds=("truncated",)))
    assert drive(empty, 1)[0].failure().code == "script_exhausted"
    assert empty.injected == ()


def test_plain_text_requests_get_no_shape_faults() -> None:
    """Without a schema there is no malformed reply: only error kinds are drawn, and with
    shape kinds alone nothing is injected."""
    judge = chaos(1, ("malformed_json", "schema_invalid", "timeout"))
    drive(judge, 50, PLAIN)
    assert set(judge.counts()) == {"timeout"}
    shapes = chaos(1, ("malformed_json", "schema_invalid"))
    assert all(a.unwrap().text.startswith('{"score"') for a in drive(shapes, 20, PLAIN))
    assert shapes.injected == ()


def test_identity_is_the_inner_judges() -> None:
    """model id, provider and structured-output support are the inner judge's."""
    inner = ScriptedJudge([], model_id="m", provider="p", supports_structured_output=True)
    judge = ChaosJudge(inner, plan=FaultPlan(rate=0.1))
    assert (judge.model_id, judge.provider, judge.supports_structured_output) == ("m", "p", True)
    assert judge.inner is inner
    assert "ChaosJudge(ScriptedJudge(" in repr(judge)


def test_bad_plans_and_arguments_name_the_field() -> None:
    """A bad rate, kind, seed or wait, or a wrong inner judge, is a ScorerDefinitionError (the
    adapters' misuse error, also a ValueError and a TypeError) naming the field and value."""
    with pytest.raises(ScorerDefinitionError,
                       match=r"FaultPlan\.rate must be a number in \[0, 1\], got nan"):
        FaultPlan(rate=float("nan"))
    with pytest.raises(ScorerDefinitionError, match=r"FaultPlan\.rate .*, got True"):
        FaultPlan(rate=True)
    with pytest.raises(ScorerDefinitionError,
                       match=r"FaultPlan\.kinds may only name known fault kinds \(rate_limit, "
                             r".*\), got 'teapot'"):
        FaultPlan(rate=0.1, kinds=("teapot",))  # type: ignore[arg-type]
    with pytest.raises(ScorerDefinitionError,
                       match=r"FaultPlan\.kinds must name at least one fault kind, got \(\)"):
        FaultPlan(rate=0.1, kinds=())
    with pytest.raises(ScorerDefinitionError, match=r"FaultPlan\.seed must be an int, got '7'"):
        FaultPlan(rate=0.1, seed="7")  # type: ignore[arg-type]
    with pytest.raises(ScorerDefinitionError, match=r"FaultPlan\.retry_after .*, got -1"):
        FaultPlan(rate=0.1, retry_after=-1)
    # The value is cut short as every misuse error cuts it (scorecore.validators.misuse).
    with pytest.raises(ScorerDefinitionError) as long_value:
        FaultPlan(rate="x" * 10_000)  # type: ignore[arg-type]
    assert re.fullmatch(r"FaultPlan\.rate .*, got 'x{100,250}… \(10,000 chars\)",
                        str(long_value.value))
    with pytest.raises(ScorerDefinitionError, match=r"ChaosJudge\.inner must be a judge model"):
        ChaosJudge(object(), plan=FaultPlan(rate=0.1))  # type: ignore[arg-type]
    assert FaultPlan(rate=0.1, kinds="timeout").kinds == ("timeout",)  # type: ignore[arg-type]


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32))
def test_a_retry_configuration_survives_a_transient_storm(seed: int) -> None:
    """Under a 20 % storm of every transient provider error, max_retries=8 scores every run,
    the judge is called exactly once per run plus once per fault, and every wait the
    processor asked for was slept in virtual time."""
    wall = lambda: WALL  # noqa: E731 - the same fixed wall clock for the judge and processor
    judge = ChaosJudge(FunctionJudge(lambda req: {"score": 0.5}),
                       plan=FaultPlan(rate=0.2, kinds=TRANSIENT, seed=seed), now=wall)
    scorer = create_scorer(id="q", description="d", judge=JudgeConfig(
        model=judge, instructions="Be strict.", max_processor_retries=8,
        error_processors=[StreamErrorRetryProcessor(max_retries=8, delay=0.5, now=wall)],
    )).generate_score(ScorePromptStep(description="r", create_prompt=lambda ctx: "rate"))
    runtime, clock = virtual_runtime()

    async def storm() -> list[Any]:
        return [await scorer.run(input=i, output=i, runtime=runtime) for i in range(300)]

    results = anyio.run(storm)
    assert [r.unwrap().score for r in results] == [0.5] * 300
    assert judge.calls == 300 + len(judge.injected)
    assert len(clock.sleeps) == len(judge.injected)
    assert all(s >= 0.5 for s in clock.sleeps)


def test_a_repeated_kind_is_drawn_more_often() -> None:
    """kinds=("rate_limit", "rate_limit", "timeout") injects about twice as many rate limits
    as timeouts (within 5 standard errors over 6,000 faults)."""
    judge = chaos(1, ("rate_limit", "rate_limit", "timeout"), seed=11)
    drive(judge, 6_000)
    limits = judge.counts()["rate_limit"]
    assert abs(limits / 6_000 - 2 / 3) <= 5 * math.sqrt((2 / 3) * (1 / 3) / 6_000)
