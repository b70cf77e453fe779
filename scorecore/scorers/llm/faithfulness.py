"""faithfulness: the share of the answer's claims that the context supports."""

from __future__ import annotations

import json
from collections.abc import Sequence

from scorecore import AgentOutput, Scorer
from scorecore.agent import extract_trajectory
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut
from scorecore.scorers.llm._engine import Judge, ScoreFrom, Wording
from scorecore.scorers.llm._passages import GetContext, claims_scorer
from scorecore.scorers.llm._verdicts import Verdicts

__all__ = ["faithfulness"]

WORDING = Wording(
    description="Check each claim against the context",
    persona=("You are a meticulous fact checker. You accept a claim only when the given context "
             "supports it, and you never use outside knowledge."),
    task="Check each factual claim of an answer against the context.",
    principles=(
        "List every factual claim the answer makes; ignore greetings and opinions.",
        "yes: the context states or directly implies the claim. no: the context contradicts it. "
        "unsure: the context says nothing either way.",
        "Use only the context, never what you know yourself.",
        "Give a one-sentence reason naming the part of the context you relied on.",
    ),
    example=('Context: "1. The Eiffel Tower is 330 m tall." Answer: "The Eiffel Tower is 330 m '
             'tall and was built in 1889."\nReply: {"verdicts": [{"statement": "The Eiffel Tower '
             'is 330 m tall.", "verdict": "yes", "reason": "piece 1"}, {"statement": "It was '
             'built in 1889.", "verdict": "unsure", "reason": "the context gives no date"}]}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("The Eiffel Tower is 330 m tall.", "It was built in 1889."),
)


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

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"statement": "Paris has 2.1 million people.", "verdict": "yes", "reason": "ok"}]}])
    >>> scorer = faithfulness(judge, context=["Paris has 2.1 million inhabitants."])
    >>> run = create_agent_test_run(output="Paris has 2.1 million people.")
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
    1.0
    """
    return claims_scorer(
        WORDING, judge, name="Faithfulness Scorer", label="Faithfulness",
        description="The share of the answer's claims the context supports",
        reply=Verdicts, verdicts=("yes", "unsure", "no"), scale=scale,
        context=context, get_context=get_context, shape=shape, id=id, score_from=score_from,
        samples=samples, fallback=_tool_results,
        missing="pass context= or get_context=, or let the agent call tools whose results are "
                "the context")
