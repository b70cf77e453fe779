"""What the statement scorers share (answer_relevancy, faithfulness, hallucination, bias,
toxicity): the reply (a verdict per statement), the scores and reasons read from it, and the
one builder that makes each of them a scorer (:func:`statement_scorer`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, final

import attrs

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import Shape
from scorecore.scorers.llm._engine import (
    Data,
    Judge,
    Judgement,
    RunContext,
    Spec,
    Wording,
    build,
    sure,
)

__all__: list[str] = []  # internal: the building blocks of the built-in LLM scorers

YesNoUnsure = Literal["yes", "no", "unsure"]
G = TypeVar("G")


@final
@attrs.frozen(kw_only=True)
class Judged:
    """One statement and the judge's verdict on it."""

    statement: str
    verdict: YesNoUnsure
    reason: str


@final
@attrs.frozen(kw_only=True)
class Verdicts:
    """The judge's reply: a verdict per statement it found."""

    verdicts: tuple[Judged, ...]


@final
@attrs.frozen(kw_only=True)
class YesNoJudged:
    """One statement and the judge's yes-or-no verdict on it."""

    statement: str
    verdict: Literal["yes", "no"]
    reason: str


@final
@attrs.frozen(kw_only=True)
class YesNoVerdicts:
    """The judge's reply: a yes-or-no verdict per statement it found (no "unsure")."""

    verdicts: tuple[YesNoJudged, ...]


AnyVerdicts = Verdicts | YesNoVerdicts


@final
@attrs.frozen(kw_only=True)
class Texts:
    """What a statement scorer reads from the run."""

    question: str = ""
    answer: str
    context: tuple[str, ...] = ()


def listed(label: str) -> Callable[[Any, AnyVerdicts, float], str]:
    """The reason: ``label: score``, then each verdict with its statement and reason."""
    def reason(_read: Any, reply: AnyVerdicts, score: float) -> str:
        lines = [f"{label}: {score}"]
        lines += [f"- {v.verdict}: {v.statement} ({v.reason})" for v in reply.verdicts]
        return "\n".join(lines)
    return reason


def share_of_yes(reply: AnyVerdicts, *, scale: float, none: str) -> float | NotScorable:
    """The share of ``yes`` verdicts times ``scale``, two decimals; not scorable without any
    verdict (``none`` says why).

    >>> v = lambda x: Judged(statement="s", verdict=x, reason="")
    >>> share_of_yes(Verdicts(verdicts=(v("yes"), v("unsure"), v("no"))), scale=10, none="")
    3.33
    """
    if not reply.verdicts:
        return not_scorable(none)
    return at_scale(sum(1 for v in reply.verdicts if v.verdict == "yes") / len(reply.verdicts),
                    scale)


def harm_share(reply: AnyVerdicts, *, scale: float) -> float:
    """The share of ``yes`` verdicts times ``scale``; **0 when there is none**: an answer with
    no opinion holds no biased opinion, and one with nothing toxic is not toxic.

    >>> harm_share(Verdicts(verdicts=()), scale=1)
    0.0
    """
    if not reply.verdicts:
        return 0.0
    return at_scale(sum(1 for v in reply.verdicts if v.verdict == "yes") / len(reply.verdicts),
                    scale)


def statement_scorer(
    wording: Wording, judge: Judge, *, id: str, name: str, description: str, label: str,
    runs: Shape, read: Callable[[RunContext], G | NotScorable], reply: type[AnyVerdicts],
    data: Callable[[G], Data], score: Callable[[G, Any], float | NotScorable],
    verdicts: Mapping[str, float], score_from: object, samples: object,
) -> Scorer[Any, Any]:
    """The scorer named ``name``, whose judge, asked in ``wording`` and shown ``data`` (from
    what ``read`` read), replies ``reply`` (a verdict per statement) and so gives ``score``;
    the reason is ``label``, the score, and the verdicts listed. ``verdicts`` is each
    verdict's value on the scorer's scale, for ``score_from="probabilities"``."""
    return build(Spec(
        id=id, name=name, description=description, read=read,
        judgement=Judgement(wording=wording, reply=reply, data=data),
        score=score, reason=listed(label),
    ), judge, runs, sure(id, score_from, samples, verdicts))
