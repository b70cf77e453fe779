"""The statement scorers' confidence options: score_from="probabilities" weighs each verdict
by its token probability, samples=k scores the mean of k replies; both pass through to the
scorer's score step, with fake judges that give log-probabilities."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from scorecore import JudgeConfig, ModelSettings, Scorer, ScorerDefinitionError
from scorecore.judge import JudgeResponse, TokenLogprob
from scorecore.scorers import (
    CascadeResult,
    answer_relevancy,
    bias,
    cascade,
    context_precision,
    context_recall,
    faithfulness,
    hallucination,
    toxicity,
)
from scorecore_adapters.testing import ScriptedJudge
from tests.scorers.helpers import asked, said

pytestmark = pytest.mark.anyio

ANSWER = (said("assistant", "Paris is the capital of France."),)
QUESTION = asked("What is the capital of France?")
CONTEXT = ["Paris is the capital and largest city of France."]

# scorer, its statement key, the value of each verdict (scale 1), and how it is run
Case = tuple[Callable[..., Scorer[Any, Any]], str, dict[str, float], dict[str, Any]]
CASES: dict[str, Case] = {
    "faithfulness": (lambda j, **o: faithfulness(j, context=CONTEXT, **o), "statement",
                     {"yes": 1.0, "unsure": 0.0, "no": 0.0}, {}),
    "hallucination": (lambda j, **o: hallucination(j, context=CONTEXT, **o), "statement",
                      {"yes": 1.0, "no": 0.0}, {}),
    "answer_relevancy": (lambda j, **o: answer_relevancy(j, uncertainty_weight=0.4, **o),
                         "statement", {"yes": 1.0, "unsure": 0.4, "no": 0.0}, {}),
    "bias": (bias, "statement", {"yes": 1.0, "no": 0.0}, {}),
    "toxicity": (toxicity, "statement", {"yes": 1.0, "no": 0.0}, {}),
    "context_recall": (lambda j, **o: context_recall(j, context=CONTEXT, **o), "claim",
                       {"yes": 1.0, "no": 0.0}, {"ground_truth": "Paris is the capital."}),
}


def keyed_reply(key: str, chosen: Sequence[tuple[str, dict[str, float]]]) -> JudgeResponse:
    """The reply ``{"verdicts": [{key: "sN", "verdict": v, "reason": "no doubt"}, ...]}``
    as a judge with log-probabilities gives it: each verdict token carries ``mass`` (its
    alternatives' probabilities), the JSON around it one certain token."""
    text = json.dumps({"verdicts": [{key: f"s{i}", "verdict": v, "reason": "no doubt"}
                                    for i, (v, _) in enumerate(chosen)]})
    tokens: list[TokenLogprob] = []
    last = 0
    for (verdict, mass), found in zip(chosen, re.finditer(r'"verdict": "', text), strict=True):
        tokens.append(TokenLogprob(token=text[last:found.end()], logprob=0.0))
        tokens.append(TokenLogprob(token=verdict, logprob=math.log(mass[verdict]),
                                   top=[(t, math.log(p)) for t, p in mass.items()]))
        last = found.end() + len(verdict)
    tokens.append(TokenLogprob(token=text[last:], logprob=0.0))
    return JudgeResponse(text=text, logprobs=tuple(tokens))


async def _run(scorer: Scorer[Any, Any], extra: dict[str, Any]) -> Any:
    return (await scorer.run(input=QUESTION, output=ANSWER, **extra)).unwrap()


@pytest.mark.parametrize("name", sorted(CASES))
async def test_probabilities_weigh_every_verdict_of_the_reply(
    anyio_backend: str, name: str
) -> None:
    """score_from="probabilities": the score is the mean of each verdict's weighted value
    times the scale; the confidence the mean probability of the chosen verdicts; the judge
    was asked for log-probabilities."""
    make, key, values, extra = CASES[name]
    first = dict(zip(values, (0.7, 0.2, 0.1), strict=False))
    first = {v: p / sum(first.values()) * 0.9 for v, p in first.items()}  # 0.1 elsewhere
    second = {"no": 0.8, "yes": 0.2}
    judge = ScriptedJudge([keyed_reply(key, [("yes", first), ("no", second)])])
    result = await _run(make(judge, score_from="probabilities", scale=10), extra)
    weighed_first = sum(p * values[v] for v, p in first.items()) / sum(first.values())
    expected = (weighed_first + 0.2 * values["yes"]) / 2 * 10
    assert result.score == pytest.approx(expected)
    assert result.confidence == pytest.approx((first["yes"] / 0.9 + 0.8) / 2)
    assert judge.requests[0].top_logprobs is not None
    assert "weighed by its probability" in (result.reason or "")


@pytest.mark.parametrize("name", sorted(CASES))
async def test_a_judge_without_logprobs_leaves_the_built_in_not_scorable(
    anyio_backend: str, name: str
) -> None:
    """No log-probabilities: not scorable, kind no_logprobs; never the reply's score."""
    make, key, _values, extra = CASES[name]
    reply = {"verdicts": [{key: "s0", "verdict": "yes", "reason": "r"}]}
    result = await _run(make(ScriptedJudge([reply]), score_from="probabilities"), extra)
    assert result.score is None
    assert result.not_scorable is not None
    assert result.not_scorable.kind == "no_logprobs"


@pytest.mark.parametrize("name", sorted(CASES))
async def test_samples_score_the_mean_of_the_replies_with_their_agreement(
    anyio_backend: str, name: str
) -> None:
    """samples=3: three seeded replies, each scored as the scorer scores one; the score is
    their mean and the confidence their agreement (one dissenter among three: 1/3)."""
    make, key, _values, extra = CASES[name]

    def reply(*kinds: str) -> dict[str, Any]:
        return {"verdicts": [{key: f"s{i}", "verdict": k, "reason": "r"}
                             for i, k in enumerate(kinds)]}

    judge = ScriptedJudge([reply("yes", "yes"), reply("yes", "no"), reply("yes", "yes")])
    config = JudgeConfig(model=judge, instructions="x",
                         model_settings=ModelSettings(temperature=0.8))
    result = await _run(make(config, samples=3), extra)
    assert result.score == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert result.confidence == pytest.approx(1 / 3)
    assert [r.settings.seed for r in judge.requests] == [0, 1, 2]
    assert {r.settings.temperature for r in judge.requests} == {0.8}
    assert "the mean of 3 replies" in (result.reason or "")


async def test_context_precision_takes_samples(anyio_backend: str) -> None:
    """context_precision averages its mean average precision over the samples."""
    def reply(*kinds: str) -> dict[str, Any]:
        return {"verdicts": [{"context_index": i, "verdict": k, "reason": "r"}
                             for i, k in enumerate(kinds)]}

    judge = ScriptedJudge([reply("yes", "no"), reply("no", "yes")])
    scorer = context_precision(judge, context=["Paris is the capital.", "Cats purr."],
                               samples=2)
    result = await _run(scorer, {})
    assert result.score == pytest.approx((1.0 + 0.5) / 2)
    assert result.confidence == 0.0


async def test_without_the_options_the_scorer_reads_one_reply_and_lists_its_verdicts(
    anyio_backend: str
) -> None:
    """The defaults keep one judge call, no log-probabilities, no confidence, the listed
    reason, and the same fingerprint as before the options."""
    judge = ScriptedJudge([{"verdicts": [{"statement": "s", "verdict": "yes", "reason": "r"}]}])
    scorer = faithfulness(judge, context=CONTEXT)
    result = await _run(scorer, {})
    assert (result.score, result.confidence) == (1.0, None)
    assert judge.requests[0].top_logprobs is None
    assert "- yes: s (r)" in (result.reason or "")
    assert scorer.fingerprint == faithfulness(judge, context=CONTEXT, score_from="reply",
                                              samples=1).fingerprint
    assert scorer.fingerprint != faithfulness(judge, context=CONTEXT, samples=2).fingerprint


@pytest.mark.parametrize(("options", "field"), [
    ({"score_from": "logits"}, "score_from"),
    ({"samples": 0}, "samples"),
    ({"samples": True}, "samples"),
    ({"score_from": "probabilities", "samples": 3}, "samples"),
])
def test_wrong_confidence_options_are_refused_naming_the_scorer_and_field(
    options: dict[str, Any], field: str
) -> None:
    """Misuse raises when the scorer is built, naming the scorer and the field."""
    with pytest.raises(ScorerDefinitionError) as raised:
        faithfulness(ScriptedJudge([]), context=CONTEXT, **options)
    assert raised.value.field == field
    assert "faithfulness-scorer" in str(raised.value)


async def test_a_built_in_is_a_cascade_tier_that_sends_its_unsure_runs_on(
    anyio_backend: str
) -> None:
    """faithfulness read from probabilities as a cascade's cheap tier: a run it is unsure of
    goes to the strong tier, which decides it."""
    unsure = keyed_reply("statement", [("yes", {"yes": 0.55, "no": 0.45})])
    cheap = faithfulness(ScriptedJudge([unsure]), context=CONTEXT, score_from="probabilities",
                         id="cheap")
    strong = faithfulness(ScriptedJudge([{"verdicts": [
        {"statement": "s", "verdict": "no", "reason": "r"}]}]), context=CONTEXT, id="strong")
    result = await _run(cascade(cheap, strong, min_confidence=0.8), {})
    details = result.details_as(CascadeResult)
    assert details is not None
    assert (details.tier, details.confidences[0]) == (1, pytest.approx(0.55))
    assert result.score == 0.0
