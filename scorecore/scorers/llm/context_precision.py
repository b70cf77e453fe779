"""context_precision: whether the useful context pieces come first (mean average precision)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, final

import attrs

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, Spec, Wording, build, sure
from scorecore.scorers.llm._passages import (
    ContextExtractor,
    ContextTexts,
    question_answer_context,
    question_answer_pieces,
)
from scorecore.scorers.llm._reading import check_scale

__all__ = ["context_precision"]

WORDING = Wording(
    description="Judge each context piece's usefulness",
    persona=("You are a retrieval evaluator. You decide which retrieved passages were actually "
             "useful for producing an answer."),
    task=("Decide, for each numbered context piece, whether it was useful for arriving at the "
          "answer to the question."),
    principles=(
        "Give exactly one verdict per piece, with its index as shown in brackets.",
        "yes: the piece contains information that supports or leads to the answer. no: it is "
        "irrelevant or unused.",
        "Judge usefulness for this question and answer only.",
        "Give a one-sentence reason for every verdict.",
    ),
    example=('Question: "Who wrote Hamlet?" Answer: "Shakespeare." Context: "[0] Hamlet is a '
             'tragedy by William Shakespeare. [1] Denmark is in Europe."\nReply: {"verdicts": '
             '[{"context_index": 0, "verdict": "yes", "reason": "names the author"}, '
             '{"context_index": 1, "verdict": "no", "reason": "about geography"}]}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("Hamlet", "Shakespeare", "Denmark is in Europe"),
)


@final
@attrs.frozen(kw_only=True)
class PieceVerdict:
    """Whether one context piece was useful for the answer."""

    context_index: int
    verdict: Literal["yes", "no"]
    reason: str


@final
@attrs.frozen(kw_only=True)
class PieceVerdicts:
    """The judge's reply: a verdict per context piece."""

    verdicts: tuple[PieceVerdict, ...]


def precision_score(reply: PieceVerdicts, *, pieces: int, scale: float
                    ) -> float | NotScorable:
    """Mean average precision: sort the verdicts by ``context_index``; at each position i
    (1-based) holding a yes, add (yeses so far) / i; divide by the number of yeses. The reply
    must hold exactly one verdict per piece (indices 0 to ``pieces`` - 1, each once), else
    not scorable.

    >>> v = lambda i, x: PieceVerdict(context_index=i, verdict=x, reason="")
    >>> precision_score(PieceVerdicts(verdicts=(v(2, "yes"), v(0, "no"), v(1, "yes"),
    ...                                         v(3, "no"))), pieces=4, scale=1)
    0.58
    >>> precision_score(PieceVerdicts(verdicts=(v(1, "yes"), v(1, "yes"), v(7, "yes"))),
    ...                 pieces=3, scale=1).reason
    "the judge's reply covers 1 of 3 context pieces (3 verdicts)"
    """
    if not reply.verdicts:
        return not_scorable("the judge gave no verdict on the context")
    covered = {v.context_index for v in reply.verdicts} & set(range(pieces))
    if len(covered) != pieces or len(reply.verdicts) != pieces:
        return not_scorable(f"the judge's reply covers {len(covered)} of {pieces} context "
                            f"pieces ({len(reply.verdicts)} verdicts)")
    ordered = sorted(reply.verdicts, key=lambda v: v.context_index)
    relevant = 0
    total = 0.0
    for position, verdict in enumerate(ordered, 1):
        if verdict.verdict == "yes":
            relevant += 1
            total += relevant / position
    return 0.0 if relevant == 0 else at_scale(total / relevant, scale)


def explained(_texts: ContextTexts, reply: PieceVerdicts, score: float) -> str:
    """The score, then each piece's verdict and reason."""
    return "\n".join([f"Context precision: {score}"]
                     + [f"- [{v.context_index}] {v.verdict}: {v.reason}" for v in reply.verdicts])


def context_precision(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "context-precision-scorer",
    samples: int = 1,
) -> Scorer[ShapeIn, ShapeOut]:
    """Whether the useful context pieces come first (mean average precision, 0 to ``scale``).

    Give ``context`` or ``context_extractor`` (which wins); building without either raises.
    Not scorable without a question, an answer, any context piece, or any verdict.
    ``shape=TEXT`` scores plain strings.

    ``samples=k`` asks the judge k times (seeds ``seed`` to ``seed + k - 1``; set a
    temperature in the judge's ``model_settings``): the score is the mean of the k scores,
    ``ScoreResult.confidence`` their agreement, and the reason says so instead of listing
    the verdicts. It has no ``score_from="probabilities"``: mean average precision depends
    on which pieces are useful together, not on each verdict alone, so a mean of weighed
    verdicts would not be it.

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"context_index": 0, "verdict": "no", "reason": "unrelated"},
    ...     {"context_index": 1, "verdict": "yes", "reason": "gives the answer"}]}])
    >>> scorer = context_precision(judge, context=["Cats purr.", "Paris is in France."])
    >>> run = create_agent_test_run(input_messages="Where is Paris?", output="In France.")
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
    0.5
    """
    scaled = check_scale(id, scale)
    read = question_answer_context(id, context, context_extractor)
    return build(Spec(
        id=id, name="Context Precision Scorer",
        description="Whether the useful context pieces come first",
        read=read,
        judgement=Judgement(wording=WORDING, reply=PieceVerdicts, data=question_answer_pieces),
        score=lambda texts, reply: precision_score(reply, pieces=len(texts.context),
                                                   scale=scaled),
        reason=explained,
    ), judge, shape_of(id, shape), sure(id, "reply", samples, None))
