"""The scorers of the share of an answer's statements a judge flags as harmful.

``bias`` and ``toxicity`` are one scorer with two prompts: each module declares a
:class:`Harm` (what to flag, how to ask) and its factory builds it with :func:`harm_scorer`.
An answer with nothing to flag scores 0.
"""

from __future__ import annotations

from typing import final

import attrs

from scorecore import NotScorable, Scorer
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, RunContext, ScoreFrom, Spec, build, sure
from scorecore.scorers.llm._reading import check_scale, need_answer, user_text
from scorecore.scorers.llm._verdicts import Texts, YesNoVerdicts, harm_share, listed

__all__: list[str] = []  # internal: bias and toxicity are the public face


@final
@attrs.frozen(kw_only=True)
class Harm:
    """What one harm-share scorer flags and how it asks its judge.

    Attributes:
        name: the scorer's name (``"Bias Scorer"``).
        description: the scorer's description.
        label: the reason's first word (``"Bias"``).
        judged: the prompt step's description.
        persona: the judge's persona.
        task: the task the prompt opens with.
        principles: the numbered principles.
        example: the worked example.
        echoes: what a reply would only say by restating ``example``.
        shows_question: whether the judge also sees the question, for context.
    """

    name: str
    description: str
    label: str
    judged: str
    persona: str
    task: str
    principles: tuple[str, ...]
    example: str
    echoes: tuple[str, ...]
    shows_question: bool = False


def _answer(ctx: RunContext) -> Texts | NotScorable:
    """The answer; not scorable without one."""
    answer = need_answer(ctx.run.output)
    return answer if isinstance(answer, NotScorable) else Texts(answer=answer)


def _question_and_answer(ctx: RunContext) -> Texts | NotScorable:
    """The answer, and the question if there is one; not scorable without an answer."""
    answer = need_answer(ctx.run.output)
    if isinstance(answer, NotScorable):
        return answer
    return Texts(question=user_text(ctx.run.input), answer=answer)


def _shown_answer(texts: Texts) -> list[tuple[str, str]]:
    """The answer."""
    return [("ANSWER", texts.answer)]


def _shown_question_and_answer(texts: Texts) -> list[tuple[str, str]]:
    """The question (``(none)`` without one) and the answer."""
    return [("QUESTION", texts.question or "(none)"), ("ANSWER", texts.answer)]


def harm_scorer(
    harm: Harm, judge: Judge, *, scale: float, shape: RunShape[ShapeIn, ShapeOut] | None,
    id: str, score_from: ScoreFrom = "reply", samples: int = 1,
) -> Scorer[ShapeIn, ShapeOut]:
    """The scorer of the share of the answer's statements ``harm`` flags (0 to ``scale``)."""
    scaled = check_scale(id, scale)
    runs = shape_of(id, shape)
    return build(Spec(
        id=id, name=harm.name, description=harm.description,
        read=_question_and_answer if harm.shows_question else _answer,
        judgement=Judgement(
            description=harm.judged, persona=harm.persona, task=harm.task,
            principles=harm.principles, example=harm.example, echoes=harm.echoes,
            reply=YesNoVerdicts,
            data=_shown_question_and_answer if harm.shows_question else _shown_answer),
        score=lambda _t, reply: harm_share(reply, scale=scaled),
        reason=listed(harm.label),
    ), judge, runs, sure(id, score_from, samples, {"yes": scaled, "no": 0.0}))
