"""answer_relevancy: how much of the answer addresses the question."""

from __future__ import annotations

import json

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import Judge, RunContext, ScoreFrom, Wording
from scorecore.scorers.llm._reading import check_scale, question_and_answer
from scorecore.scorers.llm._verdicts import Texts, Verdicts, statement_scorer
from scorecore.validators import check_fraction

__all__ = ["answer_relevancy"]

WORDING = Wording(
    description="Judge each statement's relevance",
    persona=("You are a careful evaluator of question answering. You judge whether each part of "
             "an answer serves the question that was asked."),
    task="Judge how relevant each statement of an answer is to the question asked.",
    principles=(
        "Split the answer into short, self-contained statements; judge each one.",
        "yes: the statement helps answer the question. no: it does not address the question at "
        "all. unsure: it is related but only partly useful.",
        "Judge relevance only, not whether the statement is true.",
        "Give a one-sentence reason for every verdict.",
    ),
    example=('Question: "What is the boiling point of water?" Answer: "Water boils at 100 °C at '
             'sea level. Ice floats."\nReply: {"verdicts": [{"statement": "Water boils at 100 °C '
             'at sea level.", "verdict": "yes", "reason": "states the boiling point"}, '
             '{"statement": "Ice floats.", "verdict": "no", "reason": "about ice, not boiling"}]}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("Water boils at 100 °C at sea level.", "Ice floats."),
)


def read(ctx: RunContext) -> Texts | NotScorable:
    """The question and the answer; not scorable without either."""
    texts = question_and_answer(ctx.run.input, ctx.run.output)
    return texts if isinstance(texts, NotScorable) else Texts(question=texts[0], answer=texts[1])


def shown(texts: Texts) -> list[tuple[str, str]]:
    """The question (as a JSON string) and the answer."""
    return [("QUESTION", json.dumps(texts.question, ensure_ascii=False)),
            ("ANSWER", texts.answer)]


def relevancy_score(reply: Verdicts, *, uncertainty_weight: float, scale: float
                    ) -> float | NotScorable:
    """yes counts 1, unsure ``uncertainty_weight``, no 0; their mean times ``scale``, two
    decimals. No statements: not scorable.

    >>> from scorecore.scorers.llm._verdicts import Judged
    >>> v = lambda x: Judged(statement="s", verdict=x, reason="")
    >>> relevancy_score(Verdicts(verdicts=(v("yes"), v("unsure"), v("no"))),
    ...                 uncertainty_weight=0.3, scale=1)
    0.43
    """
    if not reply.verdicts:
        return not_scorable("the judge found no statements in the answer")
    points = sum(1.0 if v.verdict == "yes" else uncertainty_weight if v.verdict == "unsure"
                 else 0.0 for v in reply.verdicts)
    return at_scale(points / len(reply.verdicts), scale)


def answer_relevancy(
    judge: Judge, *, uncertainty_weight: float = 0.3, scale: float = 1,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "answer-relevancy-scorer",
    score_from: ScoreFrom = "reply", samples: int = 1,
) -> Scorer[ShapeIn, ShapeOut]:
    """How much of the answer addresses the question (0 to ``scale``).

    The judge splits the answer into statements and marks each relevant (yes), irrelevant
    (no) or partly relevant (unsure). Score = (yes + ``uncertainty_weight`` · unsure) / all.
    ``shape=TEXT`` scores plain strings (the input is the question).

    Not scorable without a user message, without an assistant answer, or when the judge
    finds no statement.

    ``score_from="probabilities"`` weighs each verdict by its token probability (yes 1,
    unsure ``uncertainty_weight``, no 0) and ``samples=k`` asks the judge k times: both set
    ``ScoreResult.confidence``, as the guide's "Confidence" section says.

    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> from scorecore.agent import AgentMessage, MessageContent, TextPart
    >>> def said(role, text):
    ...     return AgentMessage(role=role, content=MessageContent(parts=(TextPart(text=text),)))
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"statement": "Paris is the capital.", "verdict": "yes", "reason": "answers it"},
    ...     {"statement": "I like croissants.", "verdict": "no", "reason": "off topic"}]}])
    >>> scorer = answer_relevancy(judge)
    >>> result = scorer.run_sync(
    ...     input={"inputMessages": [said("user", "Capital of France?")]},
    ...     output=[said("assistant", "Paris is the capital. I like croissants.")])
    >>> result.unwrap().score
    0.5
    """
    weight = check_fraction("uncertainty_weight", uncertainty_weight, scorer_id=id)
    scaled = check_scale(id, scale)
    return statement_scorer(
        WORDING, judge, id=id, name="Answer Relevancy Scorer", label="Answer relevancy",
        description="How much of the answer addresses the question",
        runs=shape_of(id, shape), read=read, reply=Verdicts, data=shown,
        score=lambda _t, reply: relevancy_score(reply, uncertainty_weight=weight,
                                                scale=scaled),
        verdicts={"yes": scaled, "unsure": weight * scaled, "no": 0.0}, score_from=score_from,
        samples=samples)
