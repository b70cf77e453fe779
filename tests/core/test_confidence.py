"""Scores that know how sure they are: the probability-weighted verdict (score_from=
"probabilities") and the agreement of samples (samples=k)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import (
    JudgeConfig,
    ModelSettings,
    Runtime,
    ScorePromptStep,
    ScorerDefinitionError,
    create_scorer,
)
from scorecore._core._verdicts import agreement, weigh
from scorecore.judge import JudgeRequest, JudgeResponse, TokenLogprob
from scorecore.judge.economics import JudgeMeter
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import FunctionJudge, ScriptedJudge, verdict_reply, virtual_runtime

pytestmark = pytest.mark.anyio

FIVE = {str(i): (i - 1) / 4 for i in range(1, 6)}
_verdict_tokens = st.sampled_from(["1", "2", "3", "4", "5", "yes", "no", "unsure"])
_verdict_sets = st.dictionaries(
    _verdict_tokens, st.floats(-10, 10, allow_nan=False), min_size=1, max_size=8)


def _scorer(model: Any, **step: Any) -> Any:
    return create_scorer(
        id="s", description="d", judge=JudgeConfig(model=model, instructions="Judge."),
    ).generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate 1-5",
                                     **step))


def _position(chosen: str, mass: dict[str, float]) -> TokenLogprob:
    top = [(token, math.log(p)) for token, p in mass.items() if p > 0]
    return TokenLogprob(token=chosen, logprob=math.log(mass[chosen]), top=top)


@given(verdicts=_verdict_sets, data=st.data())
def test_all_the_mass_on_one_verdict_gives_its_value_with_confidence_one(
    verdicts: dict[str, float], data: st.DataObject
) -> None:
    """Law: a verdict with probability 1 scores its own value, confidence 1.0."""
    chosen = data.draw(st.sampled_from(sorted(verdicts)))
    weighed = weigh([TokenLogprob(token="{", logprob=0.0), _position(chosen, {chosen: 1.0})],
                    verdicts)
    assert not isinstance(weighed, str)
    assert weighed.score == pytest.approx(verdicts[chosen])
    assert weighed.confidence == 1.0


@given(verdicts=_verdict_sets, data=st.data())
def test_the_weighted_score_is_the_mean_over_the_verdicts_and_stays_on_the_scale(
    verdicts: dict[str, float], data: st.DataObject
) -> None:
    """Law: score = sum(p v) / sum(p) over the verdicts at the position (the oracle), within
    the verdicts' values; confidence = the chosen verdict's share."""
    probabilities = {
        token: data.draw(st.floats(0.001, 1.0), label=token) for token in sorted(verdicts)}
    total = math.fsum(probabilities.values())
    mass = {token: p / total for token, p in probabilities.items()}
    chosen = data.draw(st.sampled_from(sorted(verdicts)))
    weighed = weigh([_position(chosen, mass)], verdicts)
    assert not isinstance(weighed, str)
    oracle = math.fsum(mass[t] * verdicts[t] for t in verdicts) / math.fsum(mass.values())
    assert weighed.score == pytest.approx(oracle, abs=1e-9)
    assert min(verdicts.values()) <= weighed.score <= max(verdicts.values())
    assert weighed.confidence == pytest.approx(mass[chosen] / math.fsum(mass.values()))
    assert 0.0 < weighed.confidence <= 1.0


def test_surface_forms_of_one_verdict_add_up_and_others_are_ignored() -> None:
    """" Yes" and "yes" are one verdict; a token that is no verdict takes no share."""
    position = TokenLogprob(token="Yes", logprob=math.log(0.5), top=[
        ("Yes", math.log(0.5)), (" yes", math.log(0.2)), ("No", math.log(0.2)),
        ("Maybe", math.log(0.1))])
    weighed = weigh([position], {"yes": 1.0, "no": 0.0})
    assert not isinstance(weighed, str)
    assert weighed.score == pytest.approx(0.7 / 0.9)
    assert weighed.confidence == pytest.approx(0.7 / 0.9)


@given(scores=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=1, max_size=9))
def test_samples_agree_fully_only_when_equal(scores: list[float]) -> None:
    """Law: agreement is 1.0 exactly when every sample has the same score, else in [0, 1)."""
    value = agreement(scores)
    assert (value == 1.0) == (len(set(scores)) == 1)
    assert 0.0 <= value <= 1.0


async def test_a_probability_step_scores_the_weighted_verdict(anyio_backend: str) -> None:
    """The judge is asked for log-probabilities; the score is the weighted verdict value and
    the confidence the chosen verdict's probability."""
    judge = ScriptedJudge([verdict_reply({"score": 4}, {"4": 0.6, "5": 0.3, "3": 0.1})])
    result = (await _scorer(judge, score_from="probabilities", verdicts=FIVE).run(
        input="q", output="a")).unwrap()
    assert result.score == pytest.approx(0.6 * 0.75 + 0.3 * 1.0 + 0.1 * 0.5)
    assert result.confidence == pytest.approx(0.6)
    assert judge.requests[0].top_logprobs == 5
    assert result.judge["generate_score"][0].output == pytest.approx(result.score)


async def test_a_step_reading_the_reply_asks_for_no_logprobs(anyio_backend: str) -> None:
    """Without score_from or samples nothing changes: no log-probabilities, no confidence."""
    judge = ScriptedJudge([{"score": 0.5}])
    result = (await _scorer(judge).run(input="q", output="a")).unwrap()
    assert (result.score, result.confidence) == (0.5, None)
    assert judge.requests[0].top_logprobs is None


@pytest.mark.parametrize("reply", [
    JudgeResponse(text='{"score": 4}'),  # a judge that has none
    verdict_reply({"score": 4}, {"4": 0.9}, chosen="4").__class__(
        text='{"score": 4}', logprobs=(TokenLogprob(token='{"score": 4}', logprob=0.0),)),
])
async def test_a_reply_without_verdict_probabilities_is_not_scorable(
    anyio_backend: str, reply: JudgeResponse
) -> None:
    """No log-probabilities (or no verdict token among them): not scorable, kind
    no_logprobs, counted as the judge's failure to decide; never a default score."""
    result = (await _scorer(ScriptedJudge([reply]), score_from="probabilities",
                            verdicts=FIVE).run(input="q", output="a")).unwrap()
    assert result.score is None
    assert result.not_scorable is not None
    assert result.not_scorable.kind == "no_logprobs"
    assert result.not_scorable.judge_undecided
    assert result.not_scorable.step == "generate_score"
    assert len(result.judge["generate_score"]) == 1


async def test_a_warm_rerun_reads_the_same_probabilities_from_the_cache(
    anyio_backend: str
) -> None:
    """The cache keeps the log-probabilities: the second run calls no judge, same result."""
    calls: list[JudgeRequest] = []

    def answer(request: JudgeRequest) -> JudgeResponse:
        calls.append(request)
        return verdict_reply({"score": 2}, {"2": 0.7, "1": 0.3})

    cache = MemoryJudgeCache()
    scorer = _scorer(FunctionJudge(answer), score_from="probabilities", verdicts=FIVE)
    results = []
    for _ in range(2):
        runtime, _clock = virtual_runtime()
        runtime = Runtime(clock=runtime.clock, sleep=runtime.sleep, new_id=runtime.new_id,
                          meter=JudgeMeter(cache=cache))
        results.append((await scorer.run(input="q", output="a", runtime=runtime)).unwrap())
    assert len(calls) == 1
    assert (results[0].score, results[0].confidence) == (results[1].score, results[1].confidence)
    assert results[1].judge["generate_score"][0].cache_hits == 1


async def test_samples_are_seeded_each_and_score_their_mean_with_their_agreement(
    anyio_backend: str
) -> None:
    """k samples: seeds seed, seed+1, ...; score = mean; confidence = pairwise agreement;
    each sample's execution kept; each cached on its own (a warm re-run asks nothing)."""
    calls: list[JudgeRequest] = []

    def answer(request: JudgeRequest) -> dict[str, float]:
        calls.append(request)
        return {"score": 1.0 if request.settings.seed != 12 else 0.0}

    cache = MemoryJudgeCache()
    scorer = create_scorer(
        id="s", description="d",
        judge=JudgeConfig(model=FunctionJudge(answer), instructions="Judge.",
                          model_settings=ModelSettings(seed=10, temperature=0.7)),
    ).generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate",
                                     samples=5))
    for _ in range(2):
        runtime, _clock = virtual_runtime()
        runtime = Runtime(clock=runtime.clock, sleep=runtime.sleep, new_id=runtime.new_id,
                          meter=JudgeMeter(cache=cache))
        result = (await scorer.run(input="q", output="a", runtime=runtime)).unwrap()
        assert result.score == pytest.approx(0.8)
        assert result.confidence == pytest.approx(0.6)  # 4 agree, 1 dissents: 12/20 pairs
        assert [e.output for e in result.judge["generate_score"]] == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert [r.settings.seed for r in calls] == [10, 11, 12, 13, 14]
    assert {r.settings.temperature for r in calls} == {0.7}


async def test_samples_that_all_agree_have_confidence_one(anyio_backend: str) -> None:
    """Three equal replies: their score, confidence 1.0; calculate_score runs per sample."""
    judge = ScriptedJudge([{"v": 3}, {"v": 3}, {"v": 3}])
    scorer = create_scorer(
        id="s", description="d", judge=JudgeConfig(model=judge, instructions="Judge."),
    ).generate_score(ScorePromptStep(
        description="rate", create_prompt=lambda ctx: "Rate", samples=3,
        output_schema={"type": "object", "properties": {"v": {"type": "integer"}},
                       "required": ["v"]},
        calculate_score=lambda ctx: ctx.judge_output["v"] / 5))
    result = (await scorer.run(input="q", output="a")).unwrap()
    assert (result.score, result.confidence) == (pytest.approx(0.6), 1.0)


async def test_a_failed_sample_fails_the_step_with_its_cause(anyio_backend: str) -> None:
    """A sample whose reply is not a score fails the run as a one-reply step would."""
    judge = ScriptedJudge([{"score": 1}, {"score": "high"}])
    failure = (await _scorer(judge, samples=2).run(input="q", output="a")).failure()
    assert failure.failed_step == "generate_score"
    assert len(failure.partial.judge["generate_score"]) == 2


async def test_a_judge_without_logprobs_falls_back_to_samples_when_asked(
    anyio_backend: str
) -> None:
    """fallback_samples=k: a judge that gives no log-probabilities is sampled k times (its
    first reply the first sample), each scored by the verdict it wrote; the confidence is
    their agreement."""
    judge = ScriptedJudge([JudgeResponse(text='{"score": 4}'), {"score": 4}, {"score": 3}])
    result = (await _scorer(judge, score_from="probabilities", verdicts=FIVE,
                            fallback_samples=3).run(input="q", output="a")).unwrap()
    assert result.score == pytest.approx((0.75 + 0.75 + 0.5) / 3)
    assert result.confidence == pytest.approx(1 / 3)
    assert [r.top_logprobs for r in judge.requests] == [5, None, None]
    assert [r.settings.seed for r in judge.requests[1:]] == [1, 2]
    assert [e.output for e in result.judge["generate_score"]] == [0.75, 0.75, 0.5]


async def test_a_judge_with_logprobs_is_never_sampled_and_without_fallback_none_is(
    anyio_backend: str
) -> None:
    """The fallback is for a judge without log-probabilities only; without it such a judge
    leaves the run not scorable (no_logprobs), asked once."""
    sure = ScriptedJudge([verdict_reply({"score": 5}, {"5": 0.9, "4": 0.1})])
    result = (await _scorer(sure, score_from="probabilities", verdicts=FIVE,
                            fallback_samples=3).run(input="q", output="a")).unwrap()
    assert (len(sure.requests), result.confidence) == (1, pytest.approx(0.9))
    bare = ScriptedJudge([JudgeResponse(text='{"score": 4}')])
    result = (await _scorer(bare, score_from="probabilities", verdicts=FIVE).run(
        input="q", output="a")).unwrap()
    assert result.not_scorable is not None
    assert result.not_scorable.kind == "no_logprobs"
    assert len(bare.requests) == 1


async def test_a_fallback_sample_without_a_verdict_is_not_scorable(anyio_backend: str) -> None:
    """A sample whose reply names no verdict: not scorable, kind no_logprobs, never a
    default score."""
    judge = ScriptedJudge([JudgeResponse(text='{"score": 4}'), {"score": 9}])
    result = (await _scorer(judge, score_from="probabilities", verdicts=FIVE,
                            fallback_samples=2).run(input="q", output="a")).unwrap()
    assert result.score is None
    assert result.not_scorable is not None
    assert result.not_scorable.kind == "no_logprobs"
    assert "sample 2 of 2" in result.not_scorable.reason


def _keyed(*positions: tuple[str, dict[str, float]]) -> JudgeResponse:
    """A reply ``{"verdicts": [{"verdict": v, "reason": "no"}, ...]}`` whose verdict tokens
    carry the given probabilities; the JSON around them is split into tokens as a tokenizer
    might."""
    tokens = [TokenLogprob(token='{"verdicts": [', logprob=0.0)]
    for index, (chosen, mass) in enumerate(positions):
        tokens.append(TokenLogprob(token=(", " if index else "") + '{"verdict": "', logprob=0.0))
        tokens.append(_position(chosen, mass))
        # A reason that says "no" is not a verdict: only the key's values are.
        tokens.append(TokenLogprob(token='", "reason": "', logprob=0.0))
        tokens.append(_position("no", {"no": 0.5, "yes": 0.5}))
        tokens.append(TokenLogprob(token='"}', logprob=0.0))
    tokens.append(TokenLogprob(token="]}", logprob=0.0))
    return JudgeResponse(text="".join(t.token for t in tokens), logprobs=tuple(tokens))


YES_NO_UNSURE = {"yes": 1.0, "unsure": 0.5, "no": 0.0}
VERDICTS_SCHEMA = {"type": "object", "properties": {"verdicts": {"type": "array", "items": {
    "type": "object", "properties": {"verdict": {"enum": ["yes", "no", "unsure"]}}}}}}


async def test_every_keyed_verdict_is_weighed_and_the_confidence_is_their_mean(
    anyio_backend: str
) -> None:
    """verdict_key: each verdict of a multi-verdict reply is weighed; score and confidence
    are their means. The word "no" elsewhere in the reply is not a verdict position."""
    reply = _keyed(("yes", {"yes": 0.9, "no": 0.1}), ("no", {"no": 0.6, "unsure": 0.4}))
    result = (await _scorer(ScriptedJudge([reply]), score_from="probabilities",
                            verdicts=YES_NO_UNSURE, verdict_key="verdict",
                            output_schema=VERDICTS_SCHEMA).run(input="q", output="a")).unwrap()
    assert result.score == pytest.approx((0.9 + 0.4 * 0.5) / 2)
    assert result.confidence == pytest.approx((0.9 + 0.6) / 2)


def test_a_verdict_the_tokenizer_split_counts_for_the_verdict_it_begins() -> None:
    """"uns" + "ure": the first piece stands for "unsure" (no other verdict begins so)."""
    tokens = [TokenLogprob(token='{"verdict": "', logprob=0.0),
              TokenLogprob(token="uns", logprob=math.log(0.7),
                           top=[("uns", math.log(0.7)), ("yes", math.log(0.3))]),
              TokenLogprob(token='ure"}', logprob=0.0)]
    weighed = weigh(tokens, YES_NO_UNSURE, key="verdict")
    assert not isinstance(weighed, str)
    assert (weighed.score, weighed.confidence) == (pytest.approx(0.65), pytest.approx(0.7))
    assert isinstance(weigh(tokens[:1], YES_NO_UNSURE, key="verdict"), str)


@given(positions=st.lists(st.tuples(
    st.sampled_from(sorted(YES_NO_UNSURE)),
    st.dictionaries(st.sampled_from(sorted(YES_NO_UNSURE)), st.floats(0.01, 1.0),
                    min_size=1)), min_size=1, max_size=6))
def test_keyed_weighted_scores_stay_on_the_scale(
    positions: list[tuple[str, dict[str, float]]]
) -> None:
    """Law: with any number of keyed verdicts, the score lies within the verdicts' values and
    the confidence in (0, 1]."""
    fixed = [(chosen, {**mass, chosen: mass.get(chosen, 0.5)}) for chosen, mass in positions]
    reply = _keyed(*fixed)
    weighed = weigh(reply.logprobs, YES_NO_UNSURE, key="verdict")
    assert not isinstance(weighed, str)
    assert 0.0 <= weighed.score <= 1.0
    assert 0.0 < weighed.confidence <= 1.0


@pytest.mark.parametrize(("step", "field"), [
    ({"score_from": "probabilities"}, "ScorePromptStep.verdicts"),
    ({"score_from": "logits"}, "ScorePromptStep.score_from"),
    ({"samples": 0}, "ScorePromptStep.samples"),
    ({"samples": True}, "ScorePromptStep.samples"),
    ({"verdicts": {"yes": 1.0}}, "ScorePromptStep.verdicts"),
    ({"score_from": "probabilities", "verdicts": {"Yes": 1.0, " yes": 0.0}},
     "ScorePromptStep.verdicts"),
    ({"score_from": "probabilities", "verdicts": {"yes": math.inf}}, "ScorePromptStep.verdicts"),
    ({"score_from": "probabilities", "verdicts": FIVE, "samples": 3}, "ScorePromptStep.samples"),
    ({"score_from": "probabilities", "verdicts": FIVE, "calculate_score": lambda ctx: 1.0},
     "ScorePromptStep.calculate_score"),
    ({"fallback_samples": 3}, "ScorePromptStep.fallback_samples"),
    ({"score_from": "probabilities", "verdicts": FIVE, "fallback_samples": 1},
     "ScorePromptStep.fallback_samples"),
    ({"samples": 3, "verdict_key": "verdict"}, "ScorePromptStep.verdict_key"),
    ({"score_from": "probabilities", "verdicts": FIVE, "verdict_key": " "},
     "ScorePromptStep.verdict_key"),
])
def test_settings_that_cannot_work_are_refused_naming_the_field(
    step: dict[str, Any], field: str
) -> None:
    """Misuse raises when the step is built, naming the field."""
    with pytest.raises(ScorerDefinitionError) as raised:
        ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate", **step)
    assert raised.value.field == field


async def test_the_confidence_round_trips_through_mastra_json_and_a_stored_row(
    anyio_backend: str
) -> None:
    """Mastra's JSON and a batch's row keep the confidence (absent when nothing measured it)."""
    from scorecore import from_mastra_json, to_mastra_json  # noqa: PLC0415
    from scorecore.evals import run_evals  # noqa: PLC0415
    from scorecore_adapters.testing import InMemoryScoreStore  # noqa: PLC0415

    judge = ScriptedJudge([verdict_reply({"score": 4}, {"4": 0.6, "5": 0.4})] * 2)
    scorer = _scorer(judge, score_from="probabilities", verdicts=FIVE)
    result = (await scorer.run(input="q", output="a")).unwrap()
    data = to_mastra_json(result)
    assert data["confidence"] == pytest.approx(0.6)
    assert from_mastra_json(data).confidence == result.confidence
    assert "confidence" not in to_mastra_json(
        (await _scorer(ScriptedJudge([{"score": 1}])).run(input="q", output="a")).unwrap())
    store = InMemoryScoreStore()
    await run_evals([{"input": "q", "output": "a", "id": "i1"}], [scorer], store=store,
                    batch_id="b")
    (row,) = await store.list_run("b")
    assert (row.metadata or {})["confidence"] == pytest.approx(0.6)
