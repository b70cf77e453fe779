"""LLM-judged scorers against a reference: answer_similarity, noise_sensitivity,
summarization."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, final, overload

import attrs

from scorecore import (
    AgentInput,
    AgentOutput,
    CalculateScoreContext,
    NotScorable,
    ScorePromptStep,
    Scorer,
    StepContext,
    StepJudge,
    not_scorable,
)
from scorecore.scorers._judged import (
    Judge,
    TextOrAgent,
    assistant_text,
    build_prompt,
    check_scale,
    has_text,
    judge_config,
    judged_pipeline,
    judged_step,
    numbered,
    start_judged,
    unit_interval,
    user_text,
)
from scorecore.scorers._messages import message_text
from scorecore.scorers._rounding import at_scale, clamp, r2
from scorecore.scorers._shapes import check_count, check_fraction, check_text, refuse

__all__ = ["answer_similarity", "noise_sensitivity", "summarization"]

_Ctx = StepContext[AgentInput, AgentOutput, None, None]


@final
@attrs.frozen(kw_only=True)
class Pair:
    """The answer and the reference it is compared with."""

    answer: str
    reference: str
    question: str = ""


@final
@attrs.frozen(kw_only=True)
class UnitMatch:
    """How one unit of the ground truth appears in the answer."""

    ground_truth_unit: str
    output_unit: str | None
    match_type: Literal["exact", "semantic", "partial", "missing"]
    explanation: str


@final
@attrs.frozen(kw_only=True)
class Contradiction:
    """A unit of the answer that contradicts the ground truth."""

    output_unit: str
    ground_truth_unit: str
    explanation: str


@final
@attrs.frozen(kw_only=True)
class SimilarityReply:
    """The judge's reply: each ground-truth unit's match, extras and contradictions."""

    matches: tuple[UnitMatch, ...]
    extra_in_output: tuple[str, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()


def similarity_score(
    reply: SimilarityReply, *, semantic_threshold: float = 0.8, exact_match_bonus: float = 0.2,
    missing_penalty: float = 0.15, contradiction_penalty: float = 1.0,
    extra_info_penalty: float = 0.05, scale: float = 1,
) -> float | NotScorable:
    """Mastra's answer-similarity formula: exact ``1 + bonus``, semantic ``threshold``,
    partial ``threshold / 2``, missing ``-missing_penalty``, over ``n · (1 + bonus)``; minus
    contradictions and (at most 0.2 of) extras; clamped to [0, 1], times ``scale``.

    >>> m = lambda kind: UnitMatch(ground_truth_unit="u", output_unit="u", match_type=kind,
    ...                            explanation="")
    >>> similarity_score(SimilarityReply(matches=(m("exact"), m("semantic"))))
    0.83
    """
    if not reply.matches:
        return not_scorable("the judge found no units in the ground truth")
    points = {"exact": 1 + exact_match_bonus, "semantic": semantic_threshold,
              "partial": semantic_threshold / 2, "missing": -missing_penalty}
    value = sum(points[m.match_type] for m in reply.matches) / (
        len(reply.matches) * (1 + exact_match_bonus))
    value -= len(reply.contradictions) * contradiction_penalty
    value -= min(len(reply.extra_in_output) * extra_info_penalty, 0.2)
    return at_scale(clamp(value), scale)


_PERSONA_SIMILARITY = ("You are an exacting grader who compares an answer with a reference "
                       "answer unit by unit.")


def _reference_text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


@overload
def answer_similarity(
    judge: Judge, *, semantic_threshold: float = 0.8, exact_match_bonus: float = 0.2,
    missing_penalty: float = 0.15, contradiction_penalty: float = 1.0,
    extra_info_penalty: float = 0.05, scale: float = 1,
    type: Literal["agent"] = "agent", id: str = "answer-similarity-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def answer_similarity(
    judge: Judge, *, semantic_threshold: float = 0.8, exact_match_bonus: float = 0.2,
    missing_penalty: float = 0.15, contradiction_penalty: float = 1.0,
    extra_info_penalty: float = 0.05, scale: float = 1,
    type: Literal["text"], id: str = "answer-similarity-scorer",
) -> Scorer[Any, str]: ...
def answer_similarity(
    judge: Judge, *, semantic_threshold: float = 0.8, exact_match_bonus: float = 0.2,
    missing_penalty: float = 0.15, contradiction_penalty: float = 1.0,
    extra_info_penalty: float = 0.05, scale: float = 1,
    type: TextOrAgent = "agent", id: str = "answer-similarity-scorer",
) -> Scorer[Any, Any]:
    """How closely the answer matches the ground truth, unit by unit (0 to ``scale``).

    The judge splits the ground truth into units of meaning and matches each one in the
    answer (exact, semantic, partial or missing), and lists extra and contradicting units.

    Not scorable without a ground truth (any non-string one is compared as JSON), without an
    answer, or when the judge finds no unit.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"matches": [{"ground_truth_unit": "Paris", "output_unit":
    ...     "Paris", "match_type": "exact", "explanation": "same"}], "extra_in_output": [],
    ...     "contradictions": []}])
    >>> answer = {"role": "assistant", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": "Paris"}]}}
    >>> scorer = answer_similarity(judge)
    >>> anyio.run(lambda: scorer.run(input={}, output=[answer], ground_truth="Paris")
    ...           ).unwrap().score
    1.0
    """
    options = {name: check_fraction(id, name, value) for name, value in (
        ("semantic_threshold", semantic_threshold), ("exact_match_bonus", exact_match_bonus),
        ("missing_penalty", missing_penalty), ("contradiction_penalty", contradiction_penalty),
        ("extra_info_penalty", extra_info_penalty))}
    scaled = check_scale(id, scale)

    def gather(ctx: _Ctx) -> Pair | NotScorable:
        reference = _reference_text(ctx.run.ground_truth)
        if not has_text(reference):
            return not_scorable("no ground truth: run.ground_truth is missing or blank")
        answer = assistant_text(ctx.run.output)
        if not has_text(answer):
            return not_scorable("no answer: run.output has no assistant message with text")
        return Pair(answer=answer, reference=reference)

    def prompt(pair: Pair) -> str:
        return build_prompt(
            task="Compare an answer with a reference answer, one unit of meaning at a time.",
            principles=[
                "Split the reference into its units of meaning (facts, steps, names, values).",
                "For each reference unit give the matching part of the answer and the match: "
                "exact (same content), semantic (same meaning, other words), partial (only "
                "part of it), missing (absent; output_unit is null).",
                "List answer units that the reference does not contain in extra_in_output.",
                "List answer units that contradict a reference unit in contradictions.",
            ],
            example=('Reference: "Take the 8:15 train to Lyon." Answer: "Catch the 8:15 train '
                     'to Lyon, platform 4."\nReply: {"matches": [{"ground_truth_unit": "the '
                     '8:15 train", "output_unit": "the 8:15 train", "match_type": "exact", '
                     '"explanation": "same time"}, {"ground_truth_unit": "to Lyon", '
                     '"output_unit": "to Lyon", "match_type": "exact", "explanation": "same '
                     'place"}], "extra_in_output": ["platform 4"], "contradictions": []}'),
            data=[("REFERENCE_ANSWER", pair.reference), ("ANSWER", pair.answer)],
            reply=('Reply with JSON only: {"matches": [{"ground_truth_unit": "...", '
                   '"output_unit": "..." | null, "match_type": "exact" | "semantic" | "partial" '
                   '| "missing", "explanation": "..."}], "extra_in_output": ["..."], '
                   '"contradictions": [{"output_unit": "...", "ground_truth_unit": "...", '
                   '"explanation": "..."}]}.'),
        )

    def reason(_pair: Pair, reply: SimilarityReply, score: float) -> str:
        lines = [f"Answer similarity: {score}"]
        lines += [f"- {m.match_type}: {m.ground_truth_unit}" for m in reply.matches]
        lines += [f"- contradiction: {c.output_unit} ({c.explanation})"
                  for c in reply.contradictions]
        lines += [f"- extra: {e}" for e in reply.extra_in_output]
        return "\n".join(lines)

    return judged_pipeline(
        start_judged(shape=type, id=id, name="Answer Similarity Scorer",
                      description="How closely the answer matches the ground truth",
                      judge=judge_config(id, judge, _PERSONA_SIMILARITY)),
        gather=gather, description="Match the reference's units in the answer",
        reply=SimilarityReply, prompt=prompt,
        score=lambda _p, reply: similarity_score(reply, scale=scaled, **options),
        reason=reason,
    )


Impact = Literal["none", "minimal", "moderate", "significant", "severe"]
IMPACT_WEIGHTS: Final[Mapping[str, float]] = {
    "none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1,
}


@final
@attrs.frozen(kw_only=True)
class DimensionImpact:
    """How the noise changed one dimension of the answer."""

    dimension: str
    impact_level: Impact
    specific_changes: str
    noise_influence: str


@final
@attrs.frozen(kw_only=True)
class NoiseReply:
    """The judge's reply: the impact per dimension, major issues and a robustness score."""

    dimensions: tuple[DimensionImpact, ...]
    robustness_score: float = attrs.field(validator=unit_interval)
    major_issues: tuple[str, ...] = ()
    overall_assessment: str = ""


def noise_score(
    reply: NoiseReply, *, impact_weights: Mapping[str, float] = IMPACT_WEIGHTS,
    major_issue_per_item: float = 0.1, max_major_issue_penalty: float = 0.3,
    discrepancy_threshold: float = 0.2,
) -> float:
    """The judge's robustness (from 0 to 1: the reply type refuses others), capped by the mean
    impact weight when the two differ by more than ``discrepancy_threshold``, minus the
    major-issue penalty.

    >>> d = lambda level: DimensionImpact(dimension="x", impact_level=level,
    ...                                   specific_changes="", noise_influence="")
    >>> noise_score(NoiseReply(dimensions=(d("moderate"),), robustness_score=0.95,
    ...                        major_issues=("lost the date",)))
    0.5
    """
    score = reply.robustness_score
    if reply.dimensions:
        mean = sum(impact_weights[d.impact_level] for d in reply.dimensions) / len(
            reply.dimensions)
        if abs(score - mean) > discrepancy_threshold:
            score = min(score, mean)
    score = max(0.0, score - min(len(reply.major_issues) * major_issue_per_item,
                                 max_major_issue_penalty))
    return r2(score)


_PERSONA_NOISE = ("You are a robustness tester. You compare how an agent answered a clean "
                  "query and a noisy version of it, and judge how much the noise hurt.")


@overload
def noise_sensitivity(
    judge: Judge, *, baseline_response: str, noisy_query: str, noise_type: str | None = None,
    impact_weights: Mapping[str, float] | None = None, major_issue_per_item: float = 0.1,
    max_major_issue_penalty: float = 0.3, discrepancy_threshold: float = 0.2,
    type: Literal["agent"] = "agent", id: str = "noise-sensitivity-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def noise_sensitivity(
    judge: Judge, *, baseline_response: str, noisy_query: str, noise_type: str | None = None,
    impact_weights: Mapping[str, float] | None = None, major_issue_per_item: float = 0.1,
    max_major_issue_penalty: float = 0.3, discrepancy_threshold: float = 0.2,
    type: Literal["text"], id: str = "noise-sensitivity-scorer",
) -> Scorer[Any, str]: ...
def noise_sensitivity(
    judge: Judge, *, baseline_response: str, noisy_query: str, noise_type: str | None = None,
    impact_weights: Mapping[str, float] | None = None, major_issue_per_item: float = 0.1,
    max_major_issue_penalty: float = 0.3, discrepancy_threshold: float = 0.2,
    type: TextOrAgent = "agent", id: str = "noise-sensitivity-scorer",
) -> Scorer[Any, Any]:
    """How robust the agent is to noise: the run's input is the clean query, its output the
    answer to ``noisy_query``, compared with ``baseline_response`` (the clean answer).

    Not scorable without the clean query (a user message) or the noisy answer.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"dimensions": [{"dimension": "accuracy", "impact_level":
    ...     "none", "specific_changes": "", "noise_influence": "none"}], "robustness_score": 1,
    ...     "major_issues": [], "overall_assessment": "unaffected"}])
    >>> scorer = noise_sensitivity(judge, baseline_response="4", noisy_query="2+2? (ignore)")
    >>> msg = lambda role, text: {"role": role, "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": text}]}}
    >>> anyio.run(lambda: scorer.run(input={"inputMessages": [msg("user", "2+2?")]},
    ...                              output=[msg("assistant", "4")])).unwrap().score
    1.0
    """
    baseline = check_text(id, "baseline_response", baseline_response)
    noisy = check_text(id, "noisy_query", noisy_query)
    if noise_type is not None:
        check_text(id, "noise_type", noise_type)
    weights = dict(IMPACT_WEIGHTS)
    for key, value in (impact_weights or {}).items():
        if key not in IMPACT_WEIGHTS:
            raise refuse(id, "impact_weights", f"keys among {list(IMPACT_WEIGHTS)}", key)
        weights[key] = check_fraction(id, f"impact_weights[{key!r}]", value)
    options = {name: check_fraction(id, name, value) for name, value in (
        ("major_issue_per_item", major_issue_per_item),
        ("max_major_issue_penalty", max_major_issue_penalty),
        ("discrepancy_threshold", discrepancy_threshold))}

    def gather(ctx: _Ctx) -> Pair | NotScorable:
        question, answer = user_text(ctx.run.input), assistant_text(ctx.run.output)
        if not has_text(question):
            return not_scorable("no clean query: run.input has no user message with text")
        if not has_text(answer):
            return not_scorable("no noisy answer: run.output has no assistant message with text")
        return Pair(question=question, answer=answer, reference=baseline)

    def prompt(pair: Pair) -> str:
        return build_prompt(
            task="Judge how much noise added to a query changed the agent's answer.",
            principles=[
                "Compare the answer to the noisy query with the baseline answer to the clean "
                "query, dimension by dimension (accuracy, completeness, relevance, "
                "consistency, and others that matter here).",
                "impact_level per dimension: none, minimal, moderate, significant or severe.",
                "major_issues: serious failures caused by the noise (an empty list if none).",
                "robustness_score: from 0 (the noise derailed the answer) to 1 (no effect).",
            ],
            example=('Clean: "Capital of Italy?" Noisy: "Capital of Italy? btw pizza is from '
                     'Naples" Baseline: "Rome." Noisy answer: "Rome. Pizza comes from Naples."'
                     '\nReply: {"dimensions": [{"dimension": "accuracy", "impact_level": '
                     '"none", "specific_changes": "same capital", "noise_influence": "none"}, '
                     '{"dimension": "relevance", "impact_level": "minimal", "specific_changes":'
                     ' "adds pizza", "noise_influence": "echoed the aside"}], '
                     '"robustness_score": 0.9, "major_issues": [], "overall_assessment": '
                     '"robust"}'),
            data=[("CLEAN_QUERY", pair.question), ("NOISY_QUERY", noisy),
                  ("NOISE_TYPE", noise_type or "unspecified"),
                  ("BASELINE_ANSWER", pair.reference), ("NOISY_ANSWER", pair.answer)],
            reply=('Reply with JSON only: {"dimensions": [{"dimension": "...", "impact_level": '
                   '"none" | "minimal" | "moderate" | "significant" | "severe", '
                   '"specific_changes": "...", "noise_influence": "..."}], "robustness_score": '
                   '<0..1>, "major_issues": ["..."], "overall_assessment": "..."}.'),
        )

    return judged_pipeline(
        start_judged(shape=type, id=id, name="Noise Sensitivity Scorer",
                      description="How robust the answer is to noise in the query",
                      judge=judge_config(id, judge, _PERSONA_NOISE)),
        gather=gather, description="Compare the noisy answer with the baseline",
        reply=NoiseReply, prompt=prompt,
        score=lambda _p, reply: noise_score(reply, impact_weights=weights, **options),
        reason=lambda _p, reply, score: "\n".join(
            [f"Noise sensitivity: {score}"]
            + [f"- {d.dimension}: {d.impact_level}" for d in reply.dimensions]
            + [f"- major issue: {m}" for m in reply.major_issues]),
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


_PERSONA_SUMMARY = ("You are an editor who checks summaries: every statement must come from "
                    "the source, and the summary must cover what matters in it.")
_PERSONA_COVERAGE = ("You are a reader who has only the summary. You answer questions from it "
                     "alone and never guess.")


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


@overload
def summarization(
    judge: Judge, *, scale: float = 1, source: str | None = None,
    source_extractor: Callable[[AgentInput, AgentOutput], str] | None = None,
    max_questions: int = 10, type: Literal["agent"] = "agent", id: str = "summarization-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def summarization(
    judge: Judge, *, scale: float = 1, source: str | None = None,
    source_extractor: Callable[[AgentInput, AgentOutput], str] | None = None,
    max_questions: int = 10, type: Literal["text"], id: str = "summarization-scorer",
) -> Scorer[Any, str]: ...
def summarization(
    judge: Judge, *, scale: float = 1, source: str | None = None,
    source_extractor: Callable[[AgentInput, AgentOutput], str] | None = None,
    max_questions: int = 10, type: TextOrAgent = "agent", id: str = "summarization-scorer",
) -> Scorer[Any, Any]:
    """How faithful and complete a summary is: min(alignment, coverage) · ``scale``.

    First call: the judge checks each claim of the summary against the source (alignment) and
    writes up to ``max_questions`` yes/no questions the source answers. Second call: another
    judge prompt, with the summary but **not** the source, says which questions the summary
    answers (coverage). The source is ``source_extractor(input, output)``, else ``source``,
    else the user's message; the summary is the last assistant message with text.

    Not scorable without a source, without a summary, when the judge finds no claim in the
    summary, or when it asks no question.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([
    ...     {"alignment": [{"claim": "Sales rose.", "supported": True, "reason": "ok"}],
    ...      "questions": ["Did sales rise?", "Did costs fall?"]},
    ...     {"coverage": [{"question": "Did sales rise?", "answered": True, "reason": "yes"},
    ...                   {"question": "Did costs fall?", "answered": False, "reason": "no"}]}])
    >>> scorer = summarization(judge, source="Sales rose 5%. Costs fell 2%.")
    >>> answer = {"role": "assistant", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": "Sales rose."}]}}
    >>> anyio.run(lambda: scorer.run(input={}, output=[answer])).unwrap().score
    0.5
    """
    scaled = check_scale(id, scale)
    limit = check_count(id, "max_questions", max_questions, minimum=1)
    if source is not None:
        check_text(id, "source", source)
    if source_extractor is not None and not callable(source_extractor):
        raise refuse(id, "source_extractor", "a function (input, output) -> str",
                     source_extractor)
    config = judge_config(id, judge, _PERSONA_SUMMARY)

    def gather(ctx: _Ctx) -> SummaryTexts | NotScorable:
        text: Any = (source_extractor(ctx.run.input, ctx.run.output) if source_extractor
                     else source if source is not None else user_text(ctx.run.input))
        if not isinstance(text, str) or not has_text(text):
            return not_scorable("no source: give source= or source_extractor=, or a user "
                                "message holding the text to summarize")
        summary = _summary_of(ctx.run.output)
        if not has_text(summary):
            return not_scorable("no summary: run.output has no assistant message with text")
        return SummaryTexts(summary=summary, source=text)

    def align_prompt(ctx: StepContext[AgentInput, AgentOutput, SummaryTexts, None]) -> str:
        texts = ctx.results.preprocess_step_result
        return build_prompt(
            task="Check a summary against its source, and write questions about the source.",
            principles=[
                "alignment: list each claim of the summary; supported is true only when the "
                "source states it.",
                f"questions: write up to {limit} important yes/no questions that the source "
                "answers, covering its main points.",
                "Use only the source; never add knowledge of your own.",
                "Give a one-sentence reason for every claim.",
            ],
            example=('Source: "The bridge opened in 1932 and cost $10M." Summary: "The bridge '
                     'opened in 1930."\nReply: {"alignment": [{"claim": "The bridge opened in '
                     '1930.", "supported": false, "reason": "the source says 1932"}], '
                     '"questions": ["Did the bridge open in 1932?", "Did it cost $10M?"]}'),
            data=[("SOURCE", texts.source), ("SUMMARY", texts.summary)],
            reply=('Reply with JSON only: {"alignment": [{"claim": "...", "supported": <bool>, '
                   '"reason": "..."}], "questions": ["..."]}.'),
        )

    def coverage_prompt(ctx: StepContext[AgentInput, AgentOutput, SummaryTexts, Alignment]
                        ) -> str:
        questions = ctx.results.analyze_step_result.questions[:limit]
        return build_prompt(
            task="Using only the summary, say which questions it answers.",
            principles=[
                "Answer from the summary alone; you have not seen the original text.",
                "answered is true only when the summary clearly gives the answer.",
                "Keep the questions in the order given, one entry each.",
                "Give a one-sentence reason for every question.",
            ],
            example=('Summary: "Sales rose 5% in May." Questions: 1. Did sales rise? 2. Did '
                     'costs fall?\nReply: {"coverage": [{"question": "Did sales rise?", '
                     '"answered": true, "reason": "stated"}, {"question": "Did costs fall?", '
                     '"answered": false, "reason": "costs are not mentioned"}]}'),
            data=[("SUMMARY", ctx.results.preprocess_step_result.summary),
                  ("QUESTIONS", numbered(questions) or "(none)")],
            reply=('Reply with JSON only: {"coverage": [{"question": "...", "answered": <bool>,'
                   ' "reason": "..."}]}.'),
        )

    def calculate(
        ctx: CalculateScoreContext[AgentInput, AgentOutput, SummaryTexts, Alignment, Coverage],
    ) -> float:
        # A NotScorable here ends the run as not scorable, like one from a function step.
        return summary_score(  # type: ignore[return-value]
            ctx.results.analyze_step_result, ctx.judge_output, max_questions=limit, scale=scaled)

    def reason(ctx: Any) -> str:
        alignment: Alignment = ctx.results.analyze_step_result
        lines = [f"Summarization: {ctx.score}"]
        lines += [f"- {'supported' if c.supported else 'unsupported'}: {c.claim}"
                  for c in alignment.alignment]
        return "\n".join(lines)

    return (
        start_judged(shape=type, id=id, name="Summarization Scorer", judge=config,
                      description="How faithful and complete the summary is")
        .preprocess(gather)
        .analyze(judged_step("Check the summary's claims and ask questions", Alignment,
                             align_prompt))
        .generate_score(ScorePromptStep(
            description="Which questions the summary answers",
            create_prompt=coverage_prompt, output_type=Coverage,
            calculate_score=calculate, judge=StepJudge(instructions=_PERSONA_COVERAGE),
        ))
        .generate_reason(reason)
    )
