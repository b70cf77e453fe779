"""hallucination: the share of the answer's claims the context does not back up."""

from __future__ import annotations

from collections.abc import Sequence

from scorecore import Scorer
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut
from scorecore.scorers.llm._engine import Judge, ScoreFrom, Wording
from scorecore.scorers.llm._passages import GetContext, claims_scorer
from scorecore.scorers.llm._verdicts import YesNoVerdicts

__all__ = ["hallucination"]

WORDING = Wording(
    description="Find unsupported or contradicted claims",
    persona=("You are a fact checker who looks for invented facts: claims that the given "
             "context does not support or that contradict it."),
    task="Find the claims of an answer that the context does not back up.",
    principles=(
        "List every factual claim the answer makes.",
        "yes: the claim contradicts the context or adds a fact the context does not contain (a "
        "hallucination). no: the context supports it.",
        "Use only the context; a claim that is true in the world but absent from the context is "
        "still a yes.",
        "Give a one-sentence reason for every verdict.",
    ),
    example=('Context: "1. The meeting is on Monday." Answer: "The meeting is on Tuesday at '
             'noon."\nReply: {"verdicts": [{"statement": "The meeting is on Tuesday.", "verdict": '
             '"yes", "reason": "piece 1 says Monday"}, {"statement": "It is at noon.", "verdict": '
             '"yes", "reason": "no time is given"}]}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("The meeting is on Tuesday", "The meeting is on Monday"),
)


def hallucination(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    get_context: GetContext | None = None,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "hallucination-scorer",
    score_from: ScoreFrom = "reply", samples: int = 1,
) -> Scorer[ShapeIn, ShapeOut]:
    """The share of the answer's claims that are unsupported by or contradict the context
    (0 to ``scale``; **higher is worse**).

    The context is ``get_context(ctx)`` if given, else ``context``. ``shape=TEXT`` scores
    plain strings.

    Not scorable without an answer, without context (Mastra lets the judge call every claim
    unsupported), or when the judge finds no claim.

    ``score_from="probabilities"`` weighs each verdict by its token probability (yes 1, no
    0) and ``samples=k`` asks the judge k times: both set ``ScoreResult.confidence``, as the
    guide's "How sure the judge was" section says.

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"statement": "Paris is in Spain.", "verdict": "yes", "reason": "contradicted"},
    ...     {"statement": "Paris is a city.", "verdict": "no", "reason": "supported"}]}])
    >>> scorer = hallucination(judge, context=["Paris is a city in France."])
    >>> run = create_agent_test_run(output="Paris is a city in Spain.")
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
    0.5
    """
    return claims_scorer(
        WORDING, judge, name="Hallucination Scorer", label="Hallucination",
        description="The share of the answer's claims the context does not back",
        reply=YesNoVerdicts, verdicts=("yes", "no"), scale=scale,
        context=context, get_context=get_context, shape=shape, id=id, score_from=score_from,
        samples=samples, missing="pass context= or get_context=")
