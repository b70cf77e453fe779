"""hallucination: the share of the answer's claims the context does not back up."""

from __future__ import annotations

from collections.abc import Sequence

from scorecore import Scorer
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, ScoreFrom, Spec, build, sure
from scorecore.scorers.llm._passages import GetContext, answer_and_context, context_and_answer
from scorecore.scorers.llm._reading import check_scale
from scorecore.scorers.llm._verdicts import YesNoVerdicts, listed, share_of_yes

__all__ = ["hallucination"]

PERSONA = ("You are a fact checker who looks for invented facts: claims that the given "
           "context does not support or that contradict it.")
TASK = "Find the claims of an answer that the context does not back up."
PRINCIPLES = (
    "List every factual claim the answer makes.",
    "yes: the claim contradicts the context or adds a fact the context does not contain (a "
    "hallucination). no: the context supports it.",
    "Use only the context; a claim that is true in the world but absent from the context is "
    "still a yes.",
    "Give a one-sentence reason for every verdict.",
)
EXAMPLE = ('Context: "1. The meeting is on Monday." Answer: "The meeting is on Tuesday at '
           'noon."\nReply: {"verdicts": [{"statement": "The meeting is on Tuesday.", "verdict": '
           '"yes", "reason": "piece 1 says Monday"}, {"statement": "It is at noon.", "verdict": '
           '"yes", "reason": "no time is given"}]}')
# What a reply would only say by restating EXAMPLE, not by judging the run.
ECHOES = ("The meeting is on Tuesday", "The meeting is on Monday")


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

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"statement": "Paris is in Spain.", "verdict": "yes", "reason": "contradicted"},
    ...     {"statement": "Paris is a city.", "verdict": "no", "reason": "supported"}]}])
    >>> scorer = hallucination(judge, context=["Paris is a city in France."])
    >>> answer = {"role": "assistant", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": "Paris is a city in Spain."}]}}
    >>> anyio.run(lambda: scorer.run(input={}, output=[answer])).unwrap().score
    0.5
    """
    scaled = check_scale(id, scale)
    read = answer_and_context(id, context, get_context,
                              missing="pass context= or get_context=")
    runs = shape_of(id, shape)

    return build(Spec(
        id=id, name="Hallucination Scorer",
        description="The share of the answer's claims the context does not back",
        read=read,
        judgement=Judgement(
            description="Find unsupported or contradicted claims", persona=PERSONA, task=TASK,
            principles=PRINCIPLES, example=EXAMPLE, echoes=ECHOES, reply=YesNoVerdicts,
            data=context_and_answer),
        score=lambda _t, reply: share_of_yes(reply, scale=scaled,
                                             none="the judge found no claims in the answer"),
        reason=listed("Hallucination"),
    ), judge, runs, sure(id, score_from, samples, {"yes": scaled, "no": 0.0}))
