"""context_recall: the share of the ground truth's claims that the context contains."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, final

import attrs

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import (
    Judge,
    Judgement,
    RunContext,
    ScoreFrom,
    Spec,
    Wording,
    build,
    sure,
)
from scorecore.scorers.llm._passages import (
    ContextExtractor,
    ContextTexts,
    context_source,
    indexed,
    resolve,
)
from scorecore.scorers.llm._reading import check_scale, need_reference

__all__ = ["context_recall"]

WORDING = Wording(
    description="Find each reference claim in the context",
    persona=("You are a retrieval evaluator. You decide whether each fact of a reference answer "
             "can be found in the retrieved passages."),
    task=("Split the reference answer into claims and decide whether the context contains each "
          "one."),
    principles=(
        "List every distinct factual claim of the reference answer.",
        "yes: a context piece states the claim or something that directly implies it. no: no "
        "piece does.",
        "Judge only by the context; never by what you know.",
        "Give a one-sentence reason, citing the piece index for a yes.",
    ),
    example=('Reference: "Water boils at 100 °C and freezes at 0 °C." Context: "[0] At sea level '
             'water boils at 100 °C."\nReply: {"verdicts": [{"claim": "Water boils at 100 °C.", '
             '"verdict": "yes", "reason": "[0]"}, {"claim": "Water freezes at 0 °C.", "verdict": '
             '"no", "reason": "not mentioned"}]}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("Water boils at 100 °C.", "Water freezes at 0 °C."),
)


@final
@attrs.frozen(kw_only=True)
class ClaimVerdict:
    """Whether one claim of the reference answer is found in the context."""

    claim: str
    verdict: Literal["yes", "no"]
    reason: str


@final
@attrs.frozen(kw_only=True)
class ClaimVerdicts:
    """The judge's reply: a verdict per claim of the reference answer."""

    verdicts: tuple[ClaimVerdict, ...]


def recall_score(reply: ClaimVerdicts, *, scale: float) -> float | NotScorable:
    """The share of the reference's claims found in the context, times ``scale``.

    >>> v = lambda x: ClaimVerdict(claim="c", verdict=x, reason="")
    >>> recall_score(ClaimVerdicts(verdicts=(v("yes"), v("no"), v("yes"))), scale=1)
    0.67
    """
    if not reply.verdicts:
        return not_scorable("the judge found no claims in the ground truth")
    found = sum(1 for v in reply.verdicts if v.verdict == "yes")
    return at_scale(min(1.0, found / len(reply.verdicts)), scale)


def shown(texts: ContextTexts) -> list[tuple[str, str]]:
    """The reference answer and the indexed context pieces."""
    return [("REFERENCE_ANSWER", texts.ground_truth), ("CONTEXT", indexed(texts.context))]


def explained(_texts: ContextTexts, reply: ClaimVerdicts, score: float) -> str:
    """The score, then each claim's verdict and reason."""
    return "\n".join([f"Context recall: {score}"]
                     + [f"- {v.verdict}: {v.claim} ({v.reason})" for v in reply.verdicts])


def context_recall(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "context-recall-scorer",
    score_from: ScoreFrom = "reply", samples: int = 1,
) -> Scorer[ShapeIn, ShapeOut]:
    """The share of the ground truth's claims that the context contains (0 to ``scale``).

    Give ``context`` or ``context_extractor``. Not scorable without a ground truth (Mastra
    scores 0 after three judge calls), without any context piece, or without any claim.
    ``shape=TEXT`` scores plain strings.

    ``score_from="probabilities"`` weighs each verdict by its token probability (yes 1, no
    0) and ``samples=k`` asks the judge k times: both set ``ScoreResult.confidence``, as the
    guide's "How sure the judge was" section says.

    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"claim": "Paris is the capital.", "verdict": "yes", "reason": "[0]"},
    ...     {"claim": "It has 2 million people.", "verdict": "no", "reason": "absent"}]}])
    >>> scorer = context_recall(judge, context=["Paris is the capital of France."])
    >>> scorer.run_sync(input={}, output=[], ground_truth=
    ...     "Paris is the capital; it has 2 million people.").unwrap().score
    0.5
    """
    scaled = check_scale(id, scale)
    given, extractor = context_source(id, context, context_extractor)
    def read(ctx: RunContext) -> ContextTexts | NotScorable:
        truth = need_reference(ctx.run.ground_truth)
        if isinstance(truth, NotScorable):
            return truth
        pieces = resolve(ctx, given, extractor)
        if isinstance(pieces, NotScorable):
            return pieces
        return ContextTexts(ground_truth=truth, context=pieces)

    return build(Spec(
        id=id, name="Context Recall Scorer",
        description="The share of the ground truth's claims the context holds",
        read=read,
        judgement=Judgement(wording=WORDING, reply=ClaimVerdicts, data=shown),
        score=lambda _t, reply: recall_score(reply, scale=scaled),
        reason=explained,
    ), judge, shape_of(id, shape), sure(id, score_from, samples, {"yes": scaled, "no": 0.0}))
