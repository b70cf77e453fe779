"""faithfulness: the share of the answer's claims that the context supports."""

from __future__ import annotations

import json
from collections.abc import Sequence

from scorecore import AgentOutput, Scorer
from scorecore.agent import extract_trajectory
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, ScoreFrom, Spec, build, sure
from scorecore.scorers.llm._passages import GetContext, answer_and_context, context_and_answer
from scorecore.scorers.llm._reading import check_scale
from scorecore.scorers.llm._verdicts import Verdicts, listed, share_of_yes

__all__ = ["faithfulness"]

PERSONA = ("You are a meticulous fact checker. You accept a claim only when the given context "
           "supports it, and you never use outside knowledge.")
TASK = "Check each factual claim of an answer against the context."
PRINCIPLES = (
    "List every factual claim the answer makes; ignore greetings and opinions.",
    "yes: the context states or directly implies the claim. no: the context contradicts it. "
    "unsure: the context says nothing either way.",
    "Use only the context, never what you know yourself.",
    "Give a one-sentence reason naming the part of the context you relied on.",
)
EXAMPLE = ('Context: "1. The Eiffel Tower is 330 m tall." Answer: "The Eiffel Tower is 330 m '
           'tall and was built in 1889."\nReply: {"verdicts": [{"statement": "The Eiffel Tower '
           'is 330 m tall.", "verdict": "yes", "reason": "piece 1"}, {"statement": "It was '
           'built in 1889.", "verdict": "unsure", "reason": "the context gives no date"}]}')
# What a reply would only say by restating EXAMPLE, not by judging the run.
ECHOES = ("The Eiffel Tower is 330 m tall.", "It was built in 1889.")


def _tool_results(output: AgentOutput) -> tuple[str, ...]:
    # Mastra reads only the legacy tool-invocation list; here every finished call counts.
    return tuple(json.dumps(step.tool_result, ensure_ascii=False, default=str)
                 for step in extract_trajectory(output).steps
                 if step.success and step.tool_result is not None)


def faithfulness(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    get_context: GetContext | None = None,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "faithfulness-scorer",
    score_from: ScoreFrom = "reply", samples: int = 1,
) -> Scorer[ShapeIn, ShapeOut]:
    """The share of the answer's claims that the context supports (0 to ``scale``).

    The context is ``get_context(ctx)`` if given (a function of the step context, e.g. reading
    the run's ground truth), else ``context``, else the results of the tools the agent called
    (each as JSON). The judge lists the answer's factual claims and marks each supported (yes),
    contradicted (no) or not decidable from the context (unsure); only yes counts.
    ``shape=TEXT`` scores plain strings.

    Not scorable without an answer, without any context, or when the judge finds no claim.

    ``score_from="probabilities"`` weighs each verdict by its token probability (yes 1,
    unsure and no 0) and ``samples=k`` asks the judge k times: both set
    ``ScoreResult.confidence``, as the guide's "Confidence" section says.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"statement": "Paris has 2.1 million people.", "verdict": "yes", "reason": "ok"}]}])
    >>> scorer = faithfulness(judge, context=["Paris has 2.1 million inhabitants."])
    >>> answer = {"role": "assistant", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": "Paris has 2.1 million people."}]}}
    >>> anyio.run(lambda: scorer.run(input={}, output=[answer])).unwrap().score
    1.0
    """
    scaled = check_scale(id, scale)
    read = answer_and_context(
        id, context, get_context, fallback=_tool_results,
        missing="pass context= or get_context=, or let the agent call tools whose results are "
                "the context")
    runs = shape_of(id, shape)

    return build(Spec(
        id=id, name="Faithfulness Scorer",
        description="The share of the answer's claims the context supports",
        read=read,
        judgement=Judgement(
            description="Check each claim against the context", persona=PERSONA, task=TASK,
            principles=PRINCIPLES, example=EXAMPLE, echoes=ECHOES, reply=Verdicts,
            data=context_and_answer),
        score=lambda _t, reply: share_of_yes(reply, scale=scaled,
                                             none="the judge found no claims in the answer"),
        reason=listed("Faithfulness"),
    ), judge, runs, sure(id, score_from, samples, {"yes": scaled, "unsure": 0.0, "no": 0.0}))
