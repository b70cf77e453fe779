"""answer_similarity: how closely the answer matches the ground truth, unit by unit."""

from __future__ import annotations

from typing import Literal, final

import attrs

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._rounding import at_scale, clamp
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, RunContext, Spec, Wording, build
from scorecore.scorers.llm._reading import check_scale, need_answer, need_reference
from scorecore.validators import check_fraction

__all__ = ["answer_similarity"]

WORDING = Wording(
    description="Match the reference's units in the answer",
    persona=("You are an exacting grader who compares an answer with a reference answer unit by "
             "unit."),
    task="Compare an answer with a reference answer, one unit of meaning at a time.",
    principles=(
        "Split the reference into its units of meaning (facts, steps, names, values).",
        "For each reference unit give the matching part of the answer and the match: exact (same "
        "content), semantic (same meaning, other words), partial (only part of it), missing "
        "(absent; output_unit is null).",
        "List answer units that the reference does not contain in extra_in_output.",
        "List answer units that contradict a reference unit in contradictions.",
    ),
    example=('Reference: "Take the 8:15 train to Lyon." Answer: "Catch the 8:15 train to Lyon, '
             'platform 4."\nReply: {"matches": [{"ground_truth_unit": "the 8:15 train", '
             '"output_unit": "the 8:15 train", "match_type": "exact", "explanation": "same '
             'time"}, {"ground_truth_unit": "to Lyon", "output_unit": "to Lyon", "match_type": '
             '"exact", "explanation": "same place"}], "extra_in_output": ["platform 4"], '
             '"contradictions": []}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("the 8:15 train", "to Lyon", "platform 4"),
)


@final
@attrs.frozen(kw_only=True)
class Pair:
    """The answer and the reference it is compared with."""

    answer: str
    reference: str


@final
@attrs.frozen(kw_only=True)
class UnitMatch:
    """How one unit of the ground truth appears in the answer."""

    ground_truth_unit: str
    output_unit: str | None
    match_type: Literal["exact", "semantic", "partial", "missing"]
    explanation: str


@final
@attrs.frozen(kw_only=True)
class Contradiction:
    """A unit of the answer that contradicts the ground truth."""

    output_unit: str
    ground_truth_unit: str
    explanation: str


@final
@attrs.frozen(kw_only=True)
class SimilarityReply:
    """The judge's reply: each ground-truth unit's match, extras and contradictions."""

    matches: tuple[UnitMatch, ...]
    extra_in_output: tuple[str, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()


def similarity_score(
    reply: SimilarityReply, *, semantic_threshold: float = 0.8, exact_match_bonus: float = 0.2,
    missing_penalty: float = 0.15, contradiction_penalty: float = 1.0,
    extra_info_penalty: float = 0.05, scale: float = 1,
) -> float | NotScorable:
    """Mastra's answer-similarity formula: exact ``1 + bonus``, semantic ``threshold``,
    partial ``threshold / 2``, missing ``-missing_penalty``, over ``n · (1 + bonus)``; minus
    contradictions and (at most 0.2 of) extras; clamped to [0, 1], times ``scale``.

    >>> m = lambda kind: UnitMatch(ground_truth_unit="u", output_unit="u", match_type=kind,
    ...                            explanation="")
    >>> similarity_score(SimilarityReply(matches=(m("exact"), m("semantic"))))
    0.83
    """
    if not reply.matches:
        return not_scorable("the judge found no units in the ground truth")
    points = {"exact": 1 + exact_match_bonus, "semantic": semantic_threshold,
              "partial": semantic_threshold / 2, "missing": -missing_penalty}
    value = sum(points[m.match_type] for m in reply.matches) / (
        len(reply.matches) * (1 + exact_match_bonus))
    value -= len(reply.contradictions) * contradiction_penalty
    value -= min(len(reply.extra_in_output) * extra_info_penalty, 0.2)
    return at_scale(clamp(value), scale)


def read(ctx: RunContext) -> Pair | NotScorable:
    """The ground truth (any non-string one as JSON) and the answer; not scorable without
    either."""
    reference = need_reference(ctx.run.ground_truth)
    answer = need_answer(ctx.run.output)
    for value in (reference, answer):
        if isinstance(value, NotScorable):
            return value
    return Pair(answer=str(answer), reference=str(reference))


def shown(pair: Pair) -> list[tuple[str, str]]:
    """The reference answer and the answer."""
    return [("REFERENCE_ANSWER", pair.reference), ("ANSWER", pair.answer)]


def explained(_pair: Pair, reply: SimilarityReply, score: float) -> str:
    """The score, each reference unit's match, the contradictions and the extras."""
    lines = [f"Answer similarity: {score}"]
    lines += [f"- {m.match_type}: {m.ground_truth_unit}" for m in reply.matches]
    lines += [f"- contradiction: {c.output_unit} ({c.explanation})"
              for c in reply.contradictions]
    lines += [f"- extra: {e}" for e in reply.extra_in_output]
    return "\n".join(lines)


def answer_similarity(
    judge: Judge, *, semantic_threshold: float = 0.8, exact_match_bonus: float = 0.2,
    missing_penalty: float = 0.15, contradiction_penalty: float = 1.0,
    extra_info_penalty: float = 0.05, scale: float = 1,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "answer-similarity-scorer",
) -> Scorer[ShapeIn, ShapeOut]:
    """How closely the answer matches the ground truth, unit by unit (0 to ``scale``).

    The judge splits the ground truth into units of meaning and matches each one in the
    answer (exact, semantic, partial or missing), and lists extra and contradicting units.
    ``shape=TEXT`` scores plain strings.

    Not scorable without a ground truth (any non-string one is compared as JSON), without an
    answer, or when the judge finds no unit.

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"matches": [{"ground_truth_unit": "Paris", "output_unit":
    ...     "Paris", "match_type": "exact", "explanation": "same"}], "extra_in_output": [],
    ...     "contradictions": []}])
    >>> run = create_agent_test_run(output="Paris")
    >>> scorer = answer_similarity(judge)
    >>> scorer.run_sync(input=run.input, output=run.output, ground_truth="Paris").unwrap().score
    1.0
    """
    options = {name: check_fraction(name, value, scorer_id=id) for name, value in (
        ("semantic_threshold", semantic_threshold), ("exact_match_bonus", exact_match_bonus),
        ("missing_penalty", missing_penalty), ("contradiction_penalty", contradiction_penalty),
        ("extra_info_penalty", extra_info_penalty))}
    scaled = check_scale(id, scale)
    return build(Spec(
        id=id, name="Answer Similarity Scorer",
        description="How closely the answer matches the ground truth",
        read=read,
        judgement=Judgement(wording=WORDING, reply=SimilarityReply, data=shown),
        score=lambda _p, reply: similarity_score(reply, scale=scaled, **options),
        reason=explained,
    ), judge, shape_of(id, shape))
