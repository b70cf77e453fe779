"""LLM-judged scorers of retrieved context: context_precision, context_recall,
context_relevance."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal, final, overload

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
from scorecore.scorers._judged import (
    Judge,
    TextOrAgent,
    assistant_text,
    build_prompt,
    check_scale,
    check_texts,
    context_pieces,
    has_text,
    judge_config,
    judged_pipeline,
    start_judged,
    user_text,
)
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import check_fraction, refuse

__all__ = ["context_precision", "context_recall", "context_relevance"]

_Ctx = StepContext[AgentInput, AgentOutput, None, None]

ContextExtractor = Callable[[AgentInput, AgentOutput], Sequence[str]]
"""Reads the context from a run: ``(input, output) -> list of pieces`` (a lone ``str`` is one
piece)."""


@final
@attrs.frozen(kw_only=True)
class ContextTexts:
    """What a context scorer reads from the run."""

    question: str = ""
    answer: str = ""
    ground_truth: str = ""
    context: tuple[str, ...]


def _context_source(scorer_id: str, context: object, extractor: object
                    ) -> tuple[tuple[str, ...] | None, ContextExtractor | None]:
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


def _resolve(ctx: _Ctx, given: tuple[str, ...] | None,
             extractor: ContextExtractor | None) -> tuple[str, ...] | NotScorable:
    # An extractor is user code: a lone str is one piece, anything but text is dropped.
    pieces = (context_pieces(extractor(ctx.run.input, ctx.run.output)) if extractor
              else (given or ()))
    if not pieces:
        return not_scorable("no context: the context extractor returned no text")
    return pieces


def _numbered_context(pieces: Sequence[str]) -> str:
    return "\n".join(f"[{i}] {piece}" for i, piece in enumerate(pieces))


@final
@attrs.frozen(kw_only=True)
class PieceVerdict:
    """Whether one context piece was useful for the answer."""

    context_index: int
    verdict: Literal["yes", "no"]
    reason: str


@final
@attrs.frozen(kw_only=True)
class PieceVerdicts:
    """The judge's reply: a verdict per context piece."""

    verdicts: tuple[PieceVerdict, ...]


def precision_score(reply: PieceVerdicts, *, pieces: int, scale: float
                    ) -> float | NotScorable:
    """Mean average precision: sort the verdicts by ``context_index``; at each position i
    (1-based) holding a yes, add (yeses so far) / i; divide by the number of yeses. The reply
    must hold exactly one verdict per piece (indices 0 to ``pieces`` - 1, each once), else
    not scorable.

    >>> v = lambda i, x: PieceVerdict(context_index=i, verdict=x, reason="")
    >>> precision_score(PieceVerdicts(verdicts=(v(2, "yes"), v(0, "no"), v(1, "yes"),
    ...                                         v(3, "no"))), pieces=4, scale=1)
    0.58
    >>> precision_score(PieceVerdicts(verdicts=(v(1, "yes"), v(1, "yes"), v(7, "yes"))),
    ...                 pieces=3, scale=1).reason
    "the judge's reply covers 1 of 3 context pieces (3 verdicts)"
    """
    if not reply.verdicts:
        return not_scorable("the judge gave no verdict on the context")
    covered = {v.context_index for v in reply.verdicts} & set(range(pieces))
    if len(covered) != pieces or len(reply.verdicts) != pieces:
        return not_scorable(f"the judge's reply covers {len(covered)} of {pieces} context "
                            f"pieces ({len(reply.verdicts)} verdicts)")
    ordered = sorted(reply.verdicts, key=lambda v: v.context_index)
    relevant = 0
    total = 0.0
    for position, verdict in enumerate(ordered, 1):
        if verdict.verdict == "yes":
            relevant += 1
            total += relevant / position
    return 0.0 if relevant == 0 else at_scale(total / relevant, scale)


_PERSONA_PRECISION = ("You are a retrieval evaluator. You decide which retrieved passages were "
                      "actually useful for producing an answer.")
_PERSONA_RECALL = ("You are a retrieval evaluator. You decide whether each fact of a reference "
                   "answer can be found in the retrieved passages.")
_PERSONA_RELEVANCE = ("You are a retrieval evaluator. You rate how relevant each retrieved "
                      "passage is to a question and whether the answer used it.")


@overload
def context_precision(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    type: Literal["agent"] = "agent", id: str = "context-precision-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def context_precision(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    type: Literal["text"], id: str = "context-precision-scorer",
) -> Scorer[Any, str]: ...
def context_precision(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    type: TextOrAgent = "agent", id: str = "context-precision-scorer",
) -> Scorer[Any, Any]:
    """Whether the useful context pieces come first (mean average precision, 0 to ``scale``).

    Give ``context`` or ``context_extractor`` (which wins); building without either raises.
    Not scorable without a question, an answer, any context piece, or any verdict.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"context_index": 0, "verdict": "no", "reason": "unrelated"},
    ...     {"context_index": 1, "verdict": "yes", "reason": "gives the answer"}]}])
    >>> scorer = context_precision(judge, context=["Cats purr.", "Paris is in France."])
    >>> msg = lambda role, text: {"role": role, "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": text}]}}
    >>> anyio.run(lambda: scorer.run(input={"inputMessages": [msg("user", "Where is Paris?")]},
    ...                              output=[msg("assistant", "In France.")])).unwrap().score
    0.5
    """
    scaled = check_scale(id, scale)
    given, extractor = _context_source(id, context, context_extractor)

    def gather(ctx: _Ctx) -> ContextTexts | NotScorable:
        question, answer = user_text(ctx.run.input), assistant_text(ctx.run.output)
        if not has_text(question):
            return not_scorable("no question: run.input has no user message with text")
        if not has_text(answer):
            return not_scorable("no answer: run.output has no assistant message with text")
        pieces = _resolve(ctx, given, extractor)
        if isinstance(pieces, NotScorable):
            return pieces
        return ContextTexts(question=question, answer=answer, context=pieces)

    def prompt(texts: ContextTexts) -> str:
        return build_prompt(
            task="Decide, for each numbered context piece, whether it was useful for "
                 "arriving at the answer to the question.",
            principles=[
                "Give exactly one verdict per piece, with its index as shown in brackets.",
                "yes: the piece contains information that supports or leads to the answer. "
                "no: it is irrelevant or unused.",
                "Judge usefulness for this question and answer only.",
                "Give a one-sentence reason for every verdict.",
            ],
            example=('Question: "Who wrote Hamlet?" Answer: "Shakespeare." Context: "[0] '
                     'Hamlet is a tragedy by William Shakespeare. [1] Denmark is in Europe."\n'
                     'Reply: {"verdicts": [{"context_index": 0, "verdict": "yes", "reason": '
                     '"names the author"}, {"context_index": 1, "verdict": "no", "reason": '
                     '"about geography"}]}'),
            data=[("QUESTION", texts.question), ("ANSWER", texts.answer),
                  ("CONTEXT", _numbered_context(texts.context))],
            reply=('Reply with JSON only: {"verdicts": [{"context_index": <int>, "verdict": '
                   '"yes" | "no", "reason": "..."}]}.'),
        )

    return judged_pipeline(
        start_judged(shape=type, id=id, name="Context Precision Scorer",
                      description="Whether the useful context pieces come first",
                      judge=judge_config(id, judge, _PERSONA_PRECISION)),
        gather=gather, description="Judge each context piece's usefulness",
        reply=PieceVerdicts, prompt=prompt,
        score=lambda texts, reply: precision_score(reply, pieces=len(texts.context),
                                                   scale=scaled),
        reason=lambda _t, reply, score: "\n".join(
            [f"Context precision: {score}"]
            + [f"- [{v.context_index}] {v.verdict}: {v.reason}" for v in reply.verdicts]),
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


def _ground_truth_text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)


@overload
def context_recall(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    type: Literal["agent"] = "agent", id: str = "context-recall-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def context_recall(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    type: Literal["text"], id: str = "context-recall-scorer",
) -> Scorer[Any, str]: ...
def context_recall(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    type: TextOrAgent = "agent", id: str = "context-recall-scorer",
) -> Scorer[Any, Any]:
    """The share of the ground truth's claims that the context contains (0 to ``scale``).

    Give ``context`` or ``context_extractor``. Not scorable without a ground truth (Mastra
    scores 0 after three judge calls), without any context piece, or without any claim.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"verdicts": [
    ...     {"claim": "Paris is the capital.", "verdict": "yes", "reason": "[0]"},
    ...     {"claim": "It has 2 million people.", "verdict": "no", "reason": "absent"}]}])
    >>> scorer = context_recall(judge, context=["Paris is the capital of France."])
    >>> anyio.run(lambda: scorer.run(input={}, output=[], ground_truth=
    ...     "Paris is the capital; it has 2 million people.")).unwrap().score
    0.5
    """
    scaled = check_scale(id, scale)
    given, extractor = _context_source(id, context, context_extractor)

    def gather(ctx: _Ctx) -> ContextTexts | NotScorable:
        truth = _ground_truth_text(ctx.run.ground_truth)
        if not has_text(truth):
            return not_scorable("no ground truth: run.ground_truth is missing or blank")
        pieces = _resolve(ctx, given, extractor)
        if isinstance(pieces, NotScorable):
            return pieces
        return ContextTexts(ground_truth=truth, context=pieces)

    def prompt(texts: ContextTexts) -> str:
        return build_prompt(
            task="Split the reference answer into claims and decide whether the context "
                 "contains each one.",
            principles=[
                "List every distinct factual claim of the reference answer.",
                "yes: a context piece states the claim or something that directly implies it. "
                "no: no piece does.",
                "Judge only by the context; never by what you know.",
                "Give a one-sentence reason, citing the piece index for a yes.",
            ],
            example=('Reference: "Water boils at 100 °C and freezes at 0 °C." Context: "[0] At '
                     'sea level water boils at 100 °C."\nReply: {"verdicts": [{"claim": "Water '
                     'boils at 100 °C.", "verdict": "yes", "reason": "[0]"}, {"claim": "Water '
                     'freezes at 0 °C.", "verdict": "no", "reason": "not mentioned"}]}'),
            data=[("REFERENCE_ANSWER", texts.ground_truth),
                  ("CONTEXT", _numbered_context(texts.context))],
            reply=('Reply with JSON only: {"verdicts": [{"claim": "...", "verdict": "yes" | '
                   '"no", "reason": "..."}]}.'),
        )

    return judged_pipeline(
        start_judged(shape=type, id=id, name="Context Recall Scorer",
                      description="The share of the ground truth's claims the context holds",
                      judge=judge_config(id, judge, _PERSONA_RECALL)),
        gather=gather, description="Find each reference claim in the context",
        reply=ClaimVerdicts, prompt=prompt,
        score=lambda _t, reply: recall_score(reply, scale=scaled),
        reason=lambda _t, reply, score: "\n".join(
            [f"Context recall: {score}"]
            + [f"- {v.verdict}: {v.claim} ({v.reason})" for v in reply.verdicts]),
    )


Relevance = Literal["high", "medium", "low", "none"]
_WEIGHTS = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}


@final
@attrs.frozen(kw_only=True)
class PieceRelevance:
    """How relevant one context piece is, and whether the answer used it."""

    context_index: int
    relevance_level: Relevance
    was_used: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class RelevanceReply:
    """The judge's reply: each piece's relevance, and what context was missing."""

    evaluations: tuple[PieceRelevance, ...]
    missing_context: tuple[str, ...] = ()
    overall_assessment: str = ""


def relevance_score(
    reply: RelevanceReply, *, scale: float, unused_high_relevance_context: float = 0.1,
    missing_context_per_item: float = 0.15, max_missing_context_penalty: float = 0.5,
) -> float | NotScorable:
    """Mean relevance weight (high 1, medium 0.7, low 0.3, none 0), minus a penalty per highly
    relevant piece left unused and per missing piece of context (capped); at least 0.

    >>> e = lambda level, used: PieceRelevance(context_index=0, relevance_level=level,
    ...                                        was_used=used, reasoning="")
    >>> relevance_score(RelevanceReply(evaluations=(e("high", False), e("medium", True)),
    ...                                missing_context=("dates",)), scale=1)
    0.6
    """
    if not reply.evaluations:
        return not_scorable("the judge gave no evaluation of the context")
    base = sum(_WEIGHTS[e.relevance_level] for e in reply.evaluations) / len(reply.evaluations)
    unused = sum(1 for e in reply.evaluations if e.relevance_level == "high" and not e.was_used)
    missing = min(len(reply.missing_context) * missing_context_per_item,
                  max_missing_context_penalty)
    return at_scale(max(0.0, base - unused * unused_high_relevance_context - missing), scale)


@overload
def context_relevance(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    unused_high_relevance_context: float = 0.1, missing_context_per_item: float = 0.15,
    max_missing_context_penalty: float = 0.5,
    type: Literal["agent"] = "agent", id: str = "context-relevance-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def context_relevance(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    unused_high_relevance_context: float = 0.1, missing_context_per_item: float = 0.15,
    max_missing_context_penalty: float = 0.5,
    type: Literal["text"], id: str = "context-relevance-scorer",
) -> Scorer[Any, str]: ...
def context_relevance(
    judge: Judge, *, scale: float = 1, context: Sequence[str] | None = None,
    context_extractor: ContextExtractor | None = None,
    unused_high_relevance_context: float = 0.1, missing_context_per_item: float = 0.15,
    max_missing_context_penalty: float = 0.5,
    type: TextOrAgent = "agent", id: str = "context-relevance-scorer",
) -> Scorer[Any, Any]:
    """How relevant the context is to the question, and whether the answer used it.

    Give ``context`` or ``context_extractor``. Not scorable without a question, an answer,
    any context piece (Mastra scores 1) or any evaluation.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"evaluations": [{"context_index": 0, "relevance_level":
    ...     "high", "was_used": True, "reasoning": "answers it"}], "missing_context": [],
    ...     "overall_assessment": "good"}])
    >>> scorer = context_relevance(judge, context=["Paris is in France."])
    >>> msg = lambda role, text: {"role": role, "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": text}]}}
    >>> anyio.run(lambda: scorer.run(input={"inputMessages": [msg("user", "Where is Paris?")]},
    ...                              output=[msg("assistant", "In France.")])).unwrap().score
    1.0
    """
    scaled = check_scale(id, scale)
    given, extractor = _context_source(id, context, context_extractor)
    penalties: dict[str, Any] = {
        "unused_high_relevance_context": check_fraction(
            id, "unused_high_relevance_context", unused_high_relevance_context),
        "missing_context_per_item": check_fraction(
            id, "missing_context_per_item", missing_context_per_item),
        "max_missing_context_penalty": check_fraction(
            id, "max_missing_context_penalty", max_missing_context_penalty),
    }

    def gather(ctx: _Ctx) -> ContextTexts | NotScorable:
        question, answer = user_text(ctx.run.input), assistant_text(ctx.run.output)
        if not has_text(question):
            return not_scorable("no question: run.input has no user message with text")
        if not has_text(answer):
            return not_scorable("no answer: run.output has no assistant message with text")
        pieces = _resolve(ctx, given, extractor)
        if isinstance(pieces, NotScorable):
            return pieces
        return ContextTexts(question=question, answer=answer, context=pieces)

    def prompt(texts: ContextTexts) -> str:
        return build_prompt(
            task="Rate how relevant each numbered context piece is to the question, say "
                 "whether the answer used it, and name context that was missing.",
            principles=[
                "Evaluate every piece once, with its index as shown in brackets.",
                "high: directly answers the question; medium: useful background; low: "
                "barely related; none: unrelated.",
                "was_used: the answer relies on information from this piece.",
                "missing_context: facts the question needed that no piece provides (an empty "
                "list when nothing was missing).",
            ],
            example=('Question: "When did the museum open and what does it cost?" Context: '
                     '"[0] The museum opened in 1901." Answer: "It opened in 1901."\nReply: '
                     '{"evaluations": [{"context_index": 0, "relevance_level": "high", '
                     '"was_used": true, "reasoning": "gives the date"}], "missing_context": '
                     '["the ticket price"], "overall_assessment": "the price is missing"}'),
            data=[("QUESTION", texts.question), ("ANSWER", texts.answer),
                  ("CONTEXT", _numbered_context(texts.context))],
            reply=('Reply with JSON only: {"evaluations": [{"context_index": <int>, '
                   '"relevance_level": "high" | "medium" | "low" | "none", "was_used": <bool>, '
                   '"reasoning": "..."}], "missing_context": ["..."], '
                   '"overall_assessment": "..."}.'),
        )

    return judged_pipeline(
        start_judged(shape=type, id=id, name="Context Relevance Scorer",
                      description="How relevant the context is and whether it was used",
                      judge=judge_config(id, judge, _PERSONA_RELEVANCE)),
        gather=gather, description="Rate each context piece's relevance and use",
        reply=RelevanceReply, prompt=prompt,
        score=lambda _t, reply: relevance_score(reply, scale=scaled, **penalties),
        reason=lambda _t, reply, score: "\n".join(
            [f"Context relevance: {score}"]
            + [f"- [{e.context_index}] {e.relevance_level}"
               f"{'' if e.was_used else ' (unused)'}: {e.reasoning}" for e in reply.evaluations]
            + [f"- missing: {m}" for m in reply.missing_context]),
    )
