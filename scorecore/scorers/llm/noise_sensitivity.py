"""noise_sensitivity: how robust the agent's answer is to noise added to the query."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, final

import attrs

from scorecore import NotScorable, Scorer
from scorecore.scorers._rounding import r2
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, check_text, refuse, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, RunContext, Spec, Wording, build
from scorecore.scorers.llm._reading import UNIT_INTERVAL, question_and_answer
from scorecore.validators import check_fraction, unit_interval

__all__ = ["noise_sensitivity"]

WORDING = Wording(
    description="Compare the noisy answer with the baseline",
    persona=("You are a robustness tester. You compare how an agent answered a clean query and "
             "a noisy version of it, and judge how much the noise hurt."),
    task="Judge how much noise added to a query changed the agent's answer.",
    principles=(
        "Compare the answer to the noisy query with the baseline answer to the clean query, "
        "dimension by dimension (accuracy, completeness, relevance, consistency, and others that "
        "matter here).",
        "impact_level per dimension: none, minimal, moderate, significant or severe.",
        "major_issues: serious failures caused by the noise (an empty list if none).",
        "robustness_score: from 0 (the noise derailed the answer) to 1 (no effect).",
    ),
    example=('Clean: "Capital of Italy?" Noisy: "Capital of Italy? btw pizza is from Naples" '
             'Baseline: "Rome." Noisy answer: "Rome. Pizza comes from Naples."\nReply: '
             '{"dimensions": [{"dimension": "accuracy", "impact_level": "none", '
             '"specific_changes": "same capital", "noise_influence": "none"}, {"dimension": '
             '"relevance", "impact_level": "minimal", "specific_changes": "adds pizza", '
             '"noise_influence": "echoed the aside"}], "robustness_score": 0.9, "major_issues": '
             '[], "overall_assessment": "robust"}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("Capital of Italy", "pizza is from Naples", "Rome"),
)

Impact = Literal["none", "minimal", "moderate", "significant", "severe"]
IMPACT_WEIGHTS: Final[Mapping[str, float]] = {
    "none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1,
}


@final
@attrs.frozen(kw_only=True)
class DimensionImpact:
    """How the noise changed one dimension of the answer."""

    dimension: str
    impact_level: Impact
    specific_changes: str
    noise_influence: str


@final
@attrs.frozen(kw_only=True)
class NoiseReply:
    """The judge's reply: the impact per dimension, major issues and a robustness score."""

    dimensions: tuple[DimensionImpact, ...]
    robustness_score: float = attrs.field(validator=unit_interval, metadata=UNIT_INTERVAL)
    major_issues: tuple[str, ...] = ()
    overall_assessment: str = ""


def noise_score(
    reply: NoiseReply, *, impact_weights: Mapping[str, float] = IMPACT_WEIGHTS,
    major_issue_per_item: float = 0.1, max_major_issue_penalty: float = 0.3,
    discrepancy_threshold: float = 0.2,
) -> float:
    """The judge's robustness (from 0 to 1: the reply type refuses others), capped by the mean
    impact weight when the two differ by more than ``discrepancy_threshold``, minus the
    major-issue penalty.

    >>> d = lambda level: DimensionImpact(dimension="x", impact_level=level,
    ...                                   specific_changes="", noise_influence="")
    >>> noise_score(NoiseReply(dimensions=(d("moderate"),), robustness_score=0.95,
    ...                        major_issues=("lost the date",)))
    0.5
    """
    score = reply.robustness_score
    if reply.dimensions:
        mean = sum(impact_weights[d.impact_level] for d in reply.dimensions) / len(
            reply.dimensions)
        if abs(score - mean) > discrepancy_threshold:
            score = min(score, mean)
    score = max(0.0, score - min(len(reply.major_issues) * major_issue_per_item,
                                 max_major_issue_penalty))
    return r2(score)


@final
@attrs.frozen(kw_only=True)
class Answers:
    """The clean query and the answer to the noisy one."""

    question: str
    answer: str


def read(ctx: RunContext) -> Answers | NotScorable:
    """The clean query and the noisy answer; not scorable without either."""
    texts = question_and_answer(ctx.run.input, ctx.run.output, question="clean query",
                                answer="noisy answer")
    return (texts if isinstance(texts, NotScorable)
            else Answers(question=texts[0], answer=texts[1]))


def explained(_read: Answers, reply: NoiseReply, score: float) -> str:
    """The score, each dimension's impact, the major issues."""
    return "\n".join([f"Noise sensitivity: {score}"]
                     + [f"- {d.dimension}: {d.impact_level}" for d in reply.dimensions]
                     + [f"- major issue: {m}" for m in reply.major_issues])


def noise_sensitivity(
    judge: Judge, *, baseline_response: str, noisy_query: str, noise_type: str | None = None,
    impact_weights: Mapping[str, float] | None = None, major_issue_per_item: float = 0.1,
    max_major_issue_penalty: float = 0.3, discrepancy_threshold: float = 0.2,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "noise-sensitivity-scorer",
) -> Scorer[ShapeIn, ShapeOut]:
    """How robust the agent is to noise: the run's input is the clean query, its output the
    answer to ``noisy_query``, compared with ``baseline_response`` (the clean answer).
    ``shape=TEXT`` scores plain strings.

    Not scorable without the clean query (a user message) or the noisy answer.

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"dimensions": [{"dimension": "accuracy", "impact_level":
    ...     "none", "specific_changes": "", "noise_influence": "none"}], "robustness_score": 1,
    ...     "major_issues": [], "overall_assessment": "unaffected"}])
    >>> scorer = noise_sensitivity(judge, baseline_response="4", noisy_query="2+2? (ignore)")
    >>> run = create_agent_test_run(input_messages="2+2?", output="4")
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
    1.0
    """
    baseline = check_text(id, "baseline_response", baseline_response)
    noisy = check_text(id, "noisy_query", noisy_query)
    if noise_type is not None:
        check_text(id, "noise_type", noise_type)
    weights = dict(IMPACT_WEIGHTS)
    for key, value in (impact_weights or {}).items():
        if key not in IMPACT_WEIGHTS:
            raise refuse(id, "impact_weights", f"keys among {list(IMPACT_WEIGHTS)}", key)
        weights[key] = check_fraction(f"impact_weights[{key!r}]", value, scorer_id=id)
    options = {name: check_fraction(name, value, scorer_id=id) for name, value in (
        ("major_issue_per_item", major_issue_per_item),
        ("max_major_issue_penalty", max_major_issue_penalty),
        ("discrepancy_threshold", discrepancy_threshold))}
    def shown(answers: Answers) -> list[tuple[str, str]]:
        return [("CLEAN_QUERY", answers.question), ("NOISY_QUERY", noisy),
                ("NOISE_TYPE", noise_type or "unspecified"),
                ("BASELINE_ANSWER", baseline), ("NOISY_ANSWER", answers.answer)]

    return build(Spec(
        id=id, name="Noise Sensitivity Scorer",
        description="How robust the answer is to noise in the query",
        read=read,
        judgement=Judgement(wording=WORDING, reply=NoiseReply, data=shown),
        score=lambda _p, reply: noise_score(reply, impact_weights=weights, **options),
        reason=explained,
    ), judge, shape_of(id, shape))
