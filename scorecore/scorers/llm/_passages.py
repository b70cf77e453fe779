"""What the context scorers share (context_precision, context_recall, context_relevance,
and faithfulness and hallucination, which check an answer's claims against a context): where
the context comes from, how its pieces are shown, and the one scorer of an answer's claims
that faithfulness and hallucination declare with two prompts (:func:`claims_scorer`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, final

import attrs

from scorecore import (
    AgentInput,
    AgentOutput,
    NotScorable,
    Scorer,
    ScorerDefinitionError,
    StepContext,
    not_scorable,
)
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, refuse, shape_of
from scorecore.scorers.llm._engine import Judge, RunContext, ScoreFrom, Wording, numbered
from scorecore.scorers.llm._reading import (
    check_scale,
    check_texts,
    context_pieces,
    need_answer,
    question_and_answer,
)
from scorecore.scorers.llm._verdicts import (
    AnyVerdicts,
    Texts,
    share_of_yes,
    statement_scorer,
)

__all__: list[str] = []  # internal: the building blocks of the built-in LLM scorers

ContextExtractor = Callable[[AgentInput, AgentOutput], Sequence[str]]
"""Reads the context from a run: ``(input, output) -> list of pieces`` (a lone ``str`` is one
piece)."""


GetContext = Callable[[StepContext[AgentInput, AgentOutput, Any, Any]], Sequence[str]]
"""Reads the context pieces from the step context (the run, with any earlier results); a lone
``str`` is one piece."""


def answer_and_context(
    scorer_id: str, context: object, get_context: object, *,
    fallback: Callable[[AgentOutput], tuple[str, ...]] | None = None, missing: str,
) -> Callable[[RunContext], Texts | NotScorable]:
    """The ``read`` of a scorer checking the answer's claims against a context: the context is
    ``get_context(ctx)`` if given, else ``context``, else ``fallback(output)``; not scorable
    without an answer or without a piece of context (``missing`` says how to give one).

    Raises:
        ScorerDefinitionError: ``context`` is not a list of str, or ``get_context`` is not
            callable.
    """
    given = check_texts(scorer_id, "context", context)
    if get_context is not None and not callable(get_context):
        raise refuse(scorer_id, "get_context", "a function of the step context", get_context)

    def read(ctx: RunContext) -> Texts | NotScorable:
        answer = need_answer(ctx.run.output)
        if isinstance(answer, NotScorable):
            return answer
        pieces = (context_pieces(get_context(ctx)) if get_context is not None
                  else given if given is not None
                  else fallback(ctx.run.output) if fallback is not None else ())
        if not pieces:
            return not_scorable(f"no context: {missing}")
        return Texts(answer=answer, context=pieces)

    return read


def context_and_answer(texts: Texts) -> list[tuple[str, str]]:
    """The numbered context pieces and the answer."""
    return [("CONTEXT", numbered(texts.context)), ("ANSWER", texts.answer)]


def claims_scorer(
    wording: Wording, judge: Judge, *, name: str, description: str, label: str,
    reply: type[AnyVerdicts], verdicts: Sequence[str], scale: float,
    context: Sequence[str] | None, get_context: GetContext | None,
    shape: RunShape[ShapeIn, ShapeOut] | None, id: str, score_from: ScoreFrom, samples: int,
    fallback: Callable[[AgentOutput], tuple[str, ...]] | None = None, missing: str,
) -> Scorer[ShapeIn, ShapeOut]:
    """The share of the answer's claims that the judge, shown the context, marks ``yes`` (0 to
    ``scale``): its reply lists the claims with one of ``verdicts`` each (only ``yes``
    counts); the context is read as :func:`answer_and_context` says."""
    scaled = check_scale(id, scale)
    read = answer_and_context(id, context, get_context, fallback=fallback, missing=missing)
    return statement_scorer(
        wording, judge, id=id, name=name, description=description, label=label,
        runs=shape_of(id, shape), read=read, reply=reply, data=context_and_answer,
        score=lambda _t, reply: share_of_yes(reply, scale=scaled,
                                             none="the judge found no claims in the answer"),
        verdicts={v: scaled if v == "yes" else 0.0 for v in verdicts}, score_from=score_from,
        samples=samples)


@final
@attrs.frozen(kw_only=True)
class ContextTexts:
    """What a context scorer reads from the run."""

    question: str = ""
    answer: str = ""
    ground_truth: str = ""
    context: tuple[str, ...]


def context_source(scorer_id: str, context: object, extractor: object
                   ) -> tuple[tuple[str, ...] | None, ContextExtractor | None]:
    """``context`` and ``context_extractor`` checked: one of them is needed, and a given
    context is a non-empty list of str."""
    given = check_texts(scorer_id, "context", context)
    if extractor is not None and not callable(extractor):
        raise refuse(scorer_id, "context_extractor", "a function (input, output) -> list[str]",
                     extractor)
    if given is None and extractor is None:
        raise ScorerDefinitionError(
            f"scorer {scorer_id!r}: give context= or context_extractor=",
            scorer_id=scorer_id, field="context")
    if given is not None and not given:
        raise refuse(scorer_id, "context", "a non-empty list of str", context)
    return given, extractor


def resolve(ctx: RunContext, given: tuple[str, ...] | None,
            extractor: ContextExtractor | None) -> tuple[str, ...] | NotScorable:
    """The run's context pieces (the extractor wins); not scorable without any."""
    # An extractor is user code: a lone str is one piece, anything but text is dropped.
    pieces = (context_pieces(extractor(ctx.run.input, ctx.run.output)) if extractor
              else (given or ()))
    if not pieces:
        return not_scorable("no context: the context extractor returned no text")
    return pieces


def question_answer_context(scorer_id: str, context: object, context_extractor: object
                            ) -> Callable[[RunContext], ContextTexts | NotScorable]:
    """The ``read`` of a scorer judging the context against the question and the answer (the
    context from ``context`` or ``context_extractor``, checked by :func:`context_source`): not
    scorable without a user question, an assistant answer or a context piece."""
    given, extractor = context_source(scorer_id, context, context_extractor)

    def read(ctx: RunContext) -> ContextTexts | NotScorable:
        texts = question_and_answer(ctx.run.input, ctx.run.output)
        if isinstance(texts, NotScorable):
            return texts
        pieces = resolve(ctx, given, extractor)
        if isinstance(pieces, NotScorable):
            return pieces
        return ContextTexts(question=texts[0], answer=texts[1], context=pieces)

    return read


def question_answer_pieces(texts: ContextTexts) -> list[tuple[str, str]]:
    """The question, the answer and the indexed context pieces."""
    return [("QUESTION", texts.question), ("ANSWER", texts.answer),
            ("CONTEXT", indexed(texts.context))]


def indexed(pieces: Sequence[str]) -> str:
    """``[0] a`` / ``[1] b`` lines: the pieces with the index a reply refers to them by."""
    return "\n".join(f"[{i}] {piece}" for i, piece in enumerate(pieces))
