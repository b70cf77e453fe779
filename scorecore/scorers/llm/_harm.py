"""The scorers of the share of an answer's statements a judge flags as harmful.

``bias`` and ``toxicity`` are one scorer with two prompts: each module declares its
:class:`~scorecore.scorers.llm._engine.Wording` (what to flag, how to ask) and its factory
builds it with :func:`harm_scorer`. An answer with nothing to flag scores 0.
"""

from __future__ import annotations

from scorecore import NotScorable, Scorer
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, shape_of
from scorecore.scorers.llm._engine import Judge, RunContext, ScoreFrom, Wording
from scorecore.scorers.llm._reading import check_scale, need_answer, user_text
from scorecore.scorers.llm._verdicts import (
    Texts,
    YesNoVerdicts,
    harm_share,
    statement_scorer,
)

__all__: list[str] = []  # internal: bias and toxicity are the public face


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
    wording: Wording, judge: Judge, *, name: str, description: str, label: str, scale: float,
    shape: RunShape[ShapeIn, ShapeOut] | None, id: str, score_from: ScoreFrom = "reply",
    samples: int = 1, shows_question: bool = False,
) -> Scorer[ShapeIn, ShapeOut]:
    """The scorer of the share of the answer's statements its judge, asked in ``wording``,
    flags (0 to ``scale``); with ``shows_question`` the judge also sees the question, for
    context."""
    scaled = check_scale(id, scale)
    return statement_scorer(
        wording, judge, id=id, name=name, description=description, label=label,
        runs=shape_of(id, shape),
        read=_question_and_answer if shows_question else _answer, reply=YesNoVerdicts,
        data=_shown_question_and_answer if shows_question else _shown_answer,
        score=lambda _t, reply: harm_share(reply, scale=scaled),
        verdicts={"yes": scaled, "no": 0.0}, score_from=score_from, samples=samples)
