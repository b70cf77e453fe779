"""summarization: how faithful and complete a summary is, in two judge calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

import attrs

from scorecore import AgentInput, AgentOutput, NotScorable, Scorer, not_scorable
from scorecore.scorers._messages import message_text
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, check_text, refuse, shape_of
from scorecore.scorers.llm._engine import (
    FollowUp,
    Judge,
    Judgement,
    RunContext,
    Spec,
    Wording,
    build,
    numbered,
)
from scorecore.scorers.llm._reading import check_scale, has_text, user_text
from scorecore.validators import check_count

__all__ = ["summarization"]


def principles(limit: int) -> tuple[str, ...]:
    """The first call's principles, asking for up to ``limit`` questions."""
    return (
        "alignment: list each claim of the summary; supported is true only when the source "
        "states it.",
        f"questions: write up to {limit} important yes/no questions that the source answers, "
        "covering its main points.",
        "Use only the source; never add knowledge of your own.",
        "Give a one-sentence reason for every claim.",
    )


# The first call's words for the default max_questions; the factory asks for its own number.
WORDING = Wording(
    description="Check the summary's claims and ask questions",
    persona=("You are an editor who checks summaries: every statement must come from the "
             "source, and the summary must cover what matters in it."),
    task="Check a summary against its source, and write questions about the source.",
    principles=principles(10),
    example=('Source: "The bridge opened in 1932 and cost $10M." Summary: "The bridge opened '
             'in 1930."\nReply: {"alignment": [{"claim": "The bridge opened in 1930.", '
             '"supported": false, "reason": "the source says 1932"}], "questions": ["Did the '
             'bridge open in 1932?", "Did it cost $10M?"]}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("The bridge opened in 1930.", "cost $10M"),
)

COVERAGE = Wording(
    description="Which questions the summary answers",
    persona=("You are a reader who has only the summary. You answer questions from it alone "
             "and never guess."),
    task="Using only the summary, say which questions it answers.",
    principles=(
        "Answer from the summary alone; you have not seen the original text.",
        "answered is true only when the summary clearly gives the answer.",
        "Keep the questions in the order given, one entry each.",
        "Give a one-sentence reason for every question.",
    ),
    example=('Summary: "Sales rose 5% in May." Questions: 1. Did sales rise? 2. Did costs '
             'fall?\nReply: {"coverage": [{"question": "Did sales rise?", "answered": true, '
             '"reason": "stated"}, {"question": "Did costs fall?", "answered": false, "reason": '
             '"costs are not mentioned"}]}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("Sales rose 5% in May.", "Did sales rise?", "Did costs fall?"),
)


@final
@attrs.frozen(kw_only=True)
class AlignedClaim:
    """Whether one claim of the summary is supported by the source."""

    claim: str
    supported: bool
    reason: str


@final
@attrs.frozen(kw_only=True)
class Alignment:
    """The first judge reply: the summary's claims checked, and questions about the source."""

    alignment: tuple[AlignedClaim, ...]
    questions: tuple[str, ...]


@final
@attrs.frozen(kw_only=True)
class Answered:
    """Whether the summary answers one question."""

    question: str
    answered: bool
    reason: str


@final
@attrs.frozen(kw_only=True)
class Coverage:
    """The second judge reply: each question answered by the summary alone, or not."""

    coverage: tuple[Answered, ...]


def summary_score(alignment: Alignment, coverage: Coverage, *, max_questions: int,
                  scale: float) -> float | NotScorable:
    """min(share of supported claims, share of the first Q questions answered) · scale, where
    Q = min(questions, ``max_questions``); coverage entries are taken by position (missing
    ones count as unanswered).

    >>> a = Alignment(alignment=(AlignedClaim(claim="c", supported=True, reason=""),),
    ...               questions=("q1", "q2"))
    >>> c = Coverage(coverage=(Answered(question="q1", answered=True, reason=""),))
    >>> summary_score(a, c, max_questions=10, scale=1)
    0.5
    """
    if not alignment.alignment:
        return not_scorable("the judge found no claims in the summary")
    limit = min(len(alignment.questions), max_questions)
    if limit == 0:
        return not_scorable("the judge asked no questions about the source")
    aligned = sum(1 for c in alignment.alignment if c.supported) / len(alignment.alignment)
    covered = min(1.0, sum(1 for a in coverage.coverage[:limit] if a.answered) / limit)
    return at_scale(min(aligned, covered), scale)


@final
@attrs.frozen(kw_only=True)
class SummaryTexts:
    """The summary and its source."""

    summary: str
    source: str


def _summary_of(output: AgentOutput) -> str:
    for message in reversed(output):
        if message.role == "assistant":
            text = message_text(message)
            if has_text(text):
                return text
    return ""


def shown(texts: SummaryTexts) -> list[tuple[str, str]]:
    """The source and the summary."""
    return [("SOURCE", texts.source), ("SUMMARY", texts.summary)]


def explained(_texts: SummaryTexts, alignment: Alignment, score: float) -> str:
    """The score, then each claim of the summary supported or not."""
    lines = [f"Summarization: {score}"]
    lines += [f"- {'supported' if c.supported else 'unsupported'}: {c.claim}"
              for c in alignment.alignment]
    return "\n".join(lines)


def summarization(
    judge: Judge, *, scale: float = 1, source: str | None = None,
    source_extractor: Callable[[AgentInput, AgentOutput], str] | None = None,
    max_questions: int = 10, shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "summarization-scorer",
) -> Scorer[ShapeIn, ShapeOut]:
    """How faithful and complete a summary is: min(alignment, coverage) · ``scale``.

    First call: the judge checks each claim of the summary against the source (alignment) and
    writes up to ``max_questions`` yes/no questions the source answers. Second call: another
    judge prompt, with the summary but **not** the source, says which questions the summary
    answers (coverage). The source is ``source_extractor(input, output)``, else ``source``,
    else the user's message; the summary is the last assistant message with text.
    ``shape=TEXT`` scores plain strings.

    Not scorable without a source, without a summary, when the judge finds no claim in the
    summary, or when it asks no question.

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([
    ...     {"alignment": [{"claim": "Sales rose.", "supported": True, "reason": "ok"}],
    ...      "questions": ["Did sales rise?", "Did costs fall?"]},
    ...     {"coverage": [{"question": "Did sales rise?", "answered": True, "reason": "yes"},
    ...                   {"question": "Did costs fall?", "answered": False, "reason": "no"}]}])
    >>> scorer = summarization(judge, source="Sales rose 5%. Costs fell 2%.")
    >>> run = create_agent_test_run(output="Sales rose.")
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
    0.5
    """
    scaled = check_scale(id, scale)
    limit = check_count("max_questions", max_questions, minimum=1, scorer_id=id)
    if source is not None:
        check_text(id, "source", source)
    if source_extractor is not None and not callable(source_extractor):
        raise refuse(id, "source_extractor", "a function (input, output) -> str",
                     source_extractor)
    def read(ctx: RunContext) -> SummaryTexts | NotScorable:
        text: Any = (source_extractor(ctx.run.input, ctx.run.output) if source_extractor
                     else source if source is not None else user_text(ctx.run.input))
        if not isinstance(text, str) or not has_text(text):
            return not_scorable("no source: give source= or source_extractor=, or a user "
                                "message holding the text to summarize")
        summary = _summary_of(ctx.run.output)
        if not has_text(summary):
            return not_scorable("no summary: run.output has no assistant message with text")
        return SummaryTexts(summary=summary, source=text)

    def asked(read_and_reply: tuple[SummaryTexts, Alignment]) -> list[tuple[str, str]]:
        texts, alignment = read_and_reply
        return [("SUMMARY", texts.summary),
                ("QUESTIONS", numbered(alignment.questions[:limit]) or "(none)")]

    return build(Spec(
        id=id, name="Summarization Scorer",
        description="How faithful and complete the summary is",
        read=read,
        judgement=Judgement(wording=attrs.evolve(WORDING, principles=principles(limit)),
                            reply=Alignment, data=shown),
        score=FollowUp(
            judgement=Judgement(wording=COVERAGE, reply=Coverage, data=asked),
            score=lambda _t, alignment, coverage: summary_score(
                alignment, coverage, max_questions=limit, scale=scaled)),
        reason=explained,
    ), judge, shape_of(id, shape))
