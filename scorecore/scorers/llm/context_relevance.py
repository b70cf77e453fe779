"""context_relevance: how relevant the context is to the question, and whether it was used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, final

import attrs

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, Spec, Wording, build
from scorecore.scorers.llm._passages import (
    ContextExtractor,
    ContextTexts,
    question_answer_context,
    question_answer_pieces,
)
from scorecore.scorers.llm._reading import check_scale
from scorecore.validators import check_fraction

__all__ = ["context_relevance"]

WORDING = Wording(
    description="Rate each context piece's relevance and use",
    persona=("You are a retrieval evaluator. You rate how relevant each retrieved passage is to "
             "a question and whether the answer used it."),
    task=("Rate how relevant each numbered context piece is to the question, say whether the "
          "answer used it, and name context that was missing."),
    principles=(
        "Evaluate every piece once, with its index as shown in brackets.",
        "high: directly answers the question; medium: useful background; low: barely related; "
        "none: unrelated.",
        "was_used: the answer relies on information from this piece.",
        "missing_context: facts the question needed that no piece provides (an empty list when "
        "nothing was missing).",
    ),
    example=('Question: "When did the museum open and what does it cost?" Context: "[0] The '
             'museum opened in 1901." Answer: "It opened in 1901."\nReply: {"evaluations": '
             '[{"context_index": 0, "relevance_level": "high", "was_used": true, "reasoning": '
             '"gives the date"}], "missing_context": ["the ticket price"], "overall_assessment": '
             '"the price is missing"}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("The museum opened in 1901.", "museum"),
)

Relevance = Literal["high", "medium", "low", "none"]
_WEIGHTS = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}


@final
@attrs.frozen(kw_only=True)
class PieceRelevance:
    """How relevant one context piece is, and whether the answer used it."""

    context_index: int
    relevance_level: Relevance
    was_used: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class RelevanceReply:
    """The judge's reply: each piece's relevance, and what context was missing."""

    evaluations: tuple[PieceRelevance, ...]
    missing_context: tuple[str, ...] = ()
    overall_assessment: str = ""


def relevance_score(
    reply: RelevanceReply, *, scale: float, unused_high_relevance_context: float = 0.1,
    missing_context_per_item: float = 0.15, max_missing_context_penalty: float = 0.5,
) -> float | NotScorable:
    """Mean relevance weight (high 1, medium 0.7, low 0.3, none 0), minus a penalty per highly
    relevant piece left unused and per missing piece of context (capped); at least 0.

    >>> e = lambda level, used: PieceRelevance(context_index=0, relevance_level=level,
    ...                                        was_used=used, reasoning="")
    >>> relevance_score(RelevanceReply(evaluations=(e("high", False), e("medium", True)),
    ...                                missing_context=("dates",)), scale=1)
    0.6
    """
    if not reply.evaluations:
        return not_scorable("the judge gave no evaluation of the context")
    base = sum(_WEIGHTS[e.relevance_level] for e in reply.evaluations) / len(reply.evaluations)
    unused = sum(1 for e in reply.evaluations if e.relevance_level == "high" and not e.was_used)
    missing = min(len(reply.missing_context) * missing_context_per_item,
                  max_missing_context_penalty)
    return at_scale(max(0.0, base - unused * unused_high_relevance_context - missing), scale)


def explained(_texts: ContextTexts, reply: RelevanceReply, score: float) -> str:
    """The score, each piece's relevance (and whether it was unused), the missing context."""
    return "\n".join(
        [f"Context relevance: {score}"]
        + [f"- [{e.context_index}] {e.relevance_level}"
           f"{'' if e.was_used else ' (unused)'}: {e.reasoning}" for e in reply.evaluations]
        + [f"- missing: {m}" for m in reply.missing_context])


def context_relevance(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    unused_high_relevance_context: float = 0.1, missing_context_per_item: float = 0.15,
    max_missing_context_penalty: float = 0.5,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "context-relevance-scorer",
) -> Scorer[ShapeIn, ShapeOut]:
    """How relevant the context is to the question, and whether the answer used it.

    Give ``context`` or ``context_extractor``. Not scorable without a question, an answer,
    any context piece (Mastra scores 1) or any evaluation. ``shape=TEXT`` scores plain
    strings.

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"evaluations": [{"context_index": 0, "relevance_level":
    ...     "high", "was_used": True, "reasoning": "answers it"}], "missing_context": [],
    ...     "overall_assessment": "good"}])
    >>> scorer = context_relevance(judge, context=["Paris is in France."])
    >>> run = create_agent_test_run(input_messages="Where is Paris?", output="In France.")
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
    1.0
    """
    scaled = check_scale(id, scale)
    read = question_answer_context(id, context, context_extractor)
    penalties: dict[str, Any] = {
        "unused_high_relevance_context": check_fraction(
            "unused_high_relevance_context", unused_high_relevance_context, scorer_id=id),
        "missing_context_per_item": check_fraction(
            "missing_context_per_item", missing_context_per_item, scorer_id=id),
        "max_missing_context_penalty": check_fraction(
            "max_missing_context_penalty", max_missing_context_penalty, scorer_id=id),
    }
    return build(Spec(
        id=id, name="Context Relevance Scorer",
        description="How relevant the context is and whether it was used",
        read=read,
        judgement=Judgement(wording=WORDING, reply=RelevanceReply, data=question_answer_pieces),
        score=lambda _t, reply: relevance_score(reply, scale=scaled, **penalties),
        reason=explained,
    ), judge, shape_of(id, shape))
