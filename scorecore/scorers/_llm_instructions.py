"""LLM-judged scorers of following instructions: prompt_alignment, rubric, multi_turn_judge."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, final, overload

import attrs

from scorecore import (
    AgentInput,
    AgentOutput,
    NotScorable,
    Scorer,
    StepContext,
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
    start_judged,
    system_text,
    unit_interval,
    user_text,
)
from scorecore.scorers._messages import message_text
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import check_count, check_text, refuse

__all__ = ["RubricCriterion", "multi_turn_judge", "prompt_alignment", "rubric"]

_Ctx = StepContext[AgentInput, AgentOutput, None, None]

EvaluationMode = Literal["user", "system", "both"]


@final
@attrs.frozen(kw_only=True)
class Intent:
    """Whether the answer addresses the primary intent."""

    score: float = attrs.field(validator=unit_interval)
    primary_intent: str
    is_addressed: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class Requirement:
    """One explicit requirement and whether it was met."""

    requirement: str
    is_fulfilled: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class Requirements:
    """The requirements found and how well they were met overall."""

    requirements: tuple[Requirement, ...]
    overall_score: float = attrs.field(validator=unit_interval)


@final
@attrs.frozen(kw_only=True)
class Completeness:
    """How complete the answer is."""

    score: float = attrs.field(validator=unit_interval)
    missing_elements: tuple[str, ...]
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class Appropriateness:
    """Whether the answer's format and tone fit."""

    score: float = attrs.field(validator=unit_interval)
    format_alignment: bool
    tone_alignment: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class AlignmentReply:
    """The judge's reply: four graded aspects of alignment with the instructions."""

    intent_alignment: Intent
    requirements_fulfillment: Requirements
    completeness: Completeness
    response_appropriateness: Appropriateness
    overall_assessment: str


USER_WEIGHTS: Final = (0.4, 0.3, 0.2, 0.1)
SYSTEM_WEIGHTS: Final = (0.35, 0.35, 0.15, 0.15)


def alignment_score(reply: AlignmentReply, *, mode: EvaluationMode, scale: float) -> float:
    """User mode weighs intent, requirements, completeness and appropriateness .4/.3/.2/.1;
    system mode .35/.35/.15/.15; both mode is .7 · user + .3 · system (Mastra computes the
    system part with the user weights, a bug not copied here).

    >>> reply = AlignmentReply(
    ...     intent_alignment=Intent(score=1, primary_intent="", is_addressed=True, reasoning=""),
    ...     requirements_fulfillment=Requirements(requirements=(), overall_score=0.5),
    ...     completeness=Completeness(score=1, missing_elements=(), reasoning=""),
    ...     response_appropriateness=Appropriateness(score=0, format_alignment=False,
    ...                                              tone_alignment=False, reasoning=""),
    ...     overall_assessment="")
    >>> [alignment_score(reply, mode=m, scale=1) for m in ("user", "system", "both")]
    [0.75, 0.68, 0.73]
    """
    parts = (reply.intent_alignment.score, reply.requirements_fulfillment.overall_score,
             reply.completeness.score, reply.response_appropriateness.score)
    user = sum(w * p for w, p in zip(USER_WEIGHTS, parts, strict=True))
    system = sum(w * p for w, p in zip(SYSTEM_WEIGHTS, parts, strict=True))
    value = {"user": user, "system": system, "both": 0.7 * user + 0.3 * system}[mode]
    return at_scale(value, scale)


@final
@attrs.frozen(kw_only=True)
class AlignmentTexts:
    """The instructions and the answer."""

    user: str
    system: str
    answer: str
    history: str = ""


_PERSONA_ALIGNMENT = ("You are a strict reviewer of instruction following. You check whether "
                      "a response does what the user and the system prompt asked, in the form "
                      "they asked for.")


@overload
def prompt_alignment(
    judge: Judge, *, scale: float = 1, evaluation_mode: EvaluationMode = "both",
    include_conversation_history: bool | int = False,
    type: Literal["agent"] = "agent", id: str = "prompt-alignment-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def prompt_alignment(
    judge: Judge, *, scale: float = 1, evaluation_mode: EvaluationMode = "both",
    include_conversation_history: bool | int = False,
    type: Literal["text"], id: str = "prompt-alignment-scorer",
) -> Scorer[Any, str]: ...
def prompt_alignment(
    judge: Judge, *, scale: float = 1, evaluation_mode: EvaluationMode = "both",
    include_conversation_history: bool | int = False,
    type: TextOrAgent = "agent", id: str = "prompt-alignment-scorer",
) -> Scorer[Any, Any]:
    """How well the answer follows the user's request and/or the system prompt.

    ``evaluation_mode``: ``"user"`` (the user's message), ``"system"`` (the system prompts)
    or ``"both"``. ``include_conversation_history``: ``True`` adds the last 10 remembered
    messages to the prompt, a number that many.

    Not scorable without an answer, or without the instructions the mode needs (``both``
    needs at least one of them).

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> graded = {"score": 1, "reasoning": "ok"}
    >>> judge = ScriptedJudge([{
    ...     "intent_alignment": {**graded, "primary_intent": "a haiku", "is_addressed": True},
    ...     "requirements_fulfillment": {"requirements": [], "overall_score": 1},
    ...     "completeness": {**graded, "missing_elements": []},
    ...     "response_appropriateness": {**graded, "format_alignment": True,
    ...                                  "tone_alignment": True},
    ...     "overall_assessment": "follows the request"}])
    >>> msg = lambda role, text: {"role": role, "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": text}]}}
    >>> scorer = prompt_alignment(judge, evaluation_mode="user")
    >>> anyio.run(lambda: scorer.run(input={"inputMessages": [msg("user", "A haiku, please")]},
    ...                              output=[msg("assistant", "Old pond...")])).unwrap().score
    1.0
    """
    scaled = check_scale(id, scale)
    if evaluation_mode not in ("user", "system", "both"):
        raise refuse(id, "evaluation_mode", "'user', 'system' or 'both'", evaluation_mode)
    mode: EvaluationMode = evaluation_mode
    history = (10 if include_conversation_history is True else 0
               if include_conversation_history is False
               else check_count(id, "include_conversation_history",
                                include_conversation_history, minimum=1))

    def gather(ctx: _Ctx) -> AlignmentTexts | NotScorable:
        user, system = user_text(ctx.run.input), system_text(ctx.run.input)
        if mode == "user" and not has_text(user):
            return not_scorable("no user instructions: run.input has no user message")
        if mode == "system" and not has_text(system):
            return not_scorable("no system instructions: run.input has no system message")
        if mode == "both" and not (has_text(user) or has_text(system)):
            return not_scorable("no instructions: run.input has neither a user nor a system "
                                "message")
        answer = assistant_text(ctx.run.output)
        if not has_text(answer):
            return not_scorable("no answer: run.output has no assistant message with text")
        lines = [f"{m.role}: {message_text(m)}"
                 for m in ctx.run.input.remembered_messages[-history:]] if history else []
        return AlignmentTexts(user=user, system=system, answer=answer, history="\n".join(lines))

    def prompt(texts: AlignmentTexts) -> str:
        data = []
        if mode != "system":
            data.append(("USER_REQUEST", texts.user or "(none)"))
        if mode != "user":
            data.append(("SYSTEM_PROMPT", texts.system or "(none)"))
        if texts.history:
            data.append(("CONVERSATION_HISTORY", texts.history))
        data.append(("RESPONSE", texts.answer))
        return build_prompt(
            task="Grade how well a response follows its instructions, on four aspects.",
            principles=[
                "intent_alignment: name the primary intent and score (0 to 1) how well the "
                "response addresses it.",
                "requirements_fulfillment: list every explicit requirement (format, length, "
                "content, constraints), say whether each is met, and give an overall score.",
                "completeness: score whether anything asked for is missing, and list it.",
                "response_appropriateness: score whether format and tone fit the request.",
            ],
            example=('Request: "Two bullet points on tea, formal." Response: "- Tea is '
                     'popular."\nReply: {"intent_alignment": {"score": 0.8, "primary_intent": '
                     '"facts about tea", "is_addressed": true, "reasoning": "on topic"}, '
                     '"requirements_fulfillment": {"requirements": [{"requirement": "two bullet'
                     ' points", "is_fulfilled": false, "reasoning": "only one"}], '
                     '"overall_score": 0.5}, "completeness": {"score": 0.5, '
                     '"missing_elements": ["a second point"], "reasoning": "one point"}, '
                     '"response_appropriateness": {"score": 1, "format_alignment": true, '
                     '"tone_alignment": true, "reasoning": "bullets, formal"}, '
                     '"overall_assessment": "half done"}'),
            data=data,
            reply=('Reply with JSON only, every score from 0 to 1: {"intent_alignment": {...}, '
                   '"requirements_fulfillment": {...}, "completeness": {...}, '
                   '"response_appropriateness": {...}, "overall_assessment": "..."} as in the '
                   'example.'),
        )

    return judged_pipeline(
        start_judged(shape=type, id=id, name="Prompt Alignment Scorer",
                      description="How well the answer follows its instructions",
                      judge=judge_config(id, judge, _PERSONA_ALIGNMENT)),
        gather=gather, description="Grade the response against its instructions",
        reply=AlignmentReply, prompt=prompt,
        score=lambda _t, reply: alignment_score(reply, mode=mode, scale=scaled),
        reason=lambda _t, reply, score: f"Prompt alignment ({mode}): {score}. "
                                        f"{reply.overall_assessment}",
    )


@final
@attrs.frozen(kw_only=True)
class RubricCriterion:
    """One criterion of a rubric; ``required`` ones gate the score.

    >>> RubricCriterion(description="Cites a source").required
    True
    """

    description: str
    id: str | None = None
    required: bool = True


_MARKER: Final = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def parse_rubric(value: object) -> tuple[RubricCriterion, ...]:
    """A rubric from text (each non-blank line a required criterion, list markers dropped), a
    list of criteria, strings or ``{"description", "id", "required"}`` objects.

    >>> [c.description for c in parse_rubric("- cites a source\\n2) is polite\\n\\n")]
    ['cites a source', 'is polite']
    """
    if isinstance(value, str):
        lines = (_MARKER.sub("", line).strip() for line in value.splitlines())
        return tuple(RubricCriterion(description=line) for line in lines if line)
    if isinstance(value, Sequence):
        criteria = []
        for item in value:
            if isinstance(item, RubricCriterion):
                criteria.append(item)
            elif isinstance(item, str) and item.strip():
                criteria.append(RubricCriterion(description=item.strip()))
            elif isinstance(item, Mapping) and isinstance(item.get("description"), str):
                criteria.append(RubricCriterion(
                    description=item["description"], id=item.get("id"),
                    required=item.get("required", True) is not False))
            else:
                raise ValueError(f"a rubric criterion must be text or have a description, "
                                 f"got {type(item).__name__}")
        return tuple(criteria)
    raise ValueError(f"a rubric must be text or a list of criteria, got {type(value).__name__}")


@final
@attrs.frozen(kw_only=True)
class CriterionVerdict:
    """Whether the response satisfies one criterion."""

    criterion: str
    satisfied: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class RubricReply:
    """The judge's reply: one verdict per criterion, in the rubric's order."""

    criteria: tuple[CriterionVerdict, ...]
    overall_assessment: str = ""


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def matched_verdicts(criteria: Sequence[RubricCriterion], reply: RubricReply
                     ) -> tuple[CriterionVerdict, ...] | NotScorable:
    """The judge's verdicts in the rubric's order: one per criterion, else not scorable. A
    verdict whose echoed criterion equals a description (spacing and case aside) goes to that
    criterion; the others fill the remaining criteria in order.

    >>> rubric_ = parse_rubric(["a", "b"])
    >>> v = lambda text, ok: CriterionVerdict(criterion=text, satisfied=ok, reasoning="")
    >>> [x.criterion for x in matched_verdicts(rubric_, RubricReply(criteria=(
    ...     v("B", True), v("a", False))))]
    ['a', 'B']
    >>> matched_verdicts(rubric_, RubricReply(criteria=(v("a", True),))).reason
    "the judge's reply has 1 verdict(s) for 2 criteria"
    """
    if len(reply.criteria) != len(criteria):
        return not_scorable(f"the judge's reply has {len(reply.criteria)} verdict(s) for "
                            f"{len(criteria)} criteria")
    slots: list[CriterionVerdict | None] = [None] * len(criteria)
    by_text: dict[str, list[int]] = {}
    for i, criterion in enumerate(criteria):
        by_text.setdefault(_key(criterion.description), []).append(i)
    rest: list[CriterionVerdict] = []
    for verdict in reply.criteria:
        free = [i for i in by_text.get(_key(verdict.criterion), ()) if slots[i] is None]
        if free:
            slots[free[0]] = verdict
        else:
            rest.append(verdict)
    leftovers = iter(rest)
    return tuple(slot if slot is not None else next(leftovers) for slot in slots)


def rubric_score(criteria: Sequence[RubricCriterion], reply: RubricReply, *,
                 scale: float) -> float | NotScorable:
    """``scale`` if every gating criterion is satisfied, else 0. The gate is the rubric's
    required criteria (all of them when none is required); verdicts are matched to criteria by
    :func:`matched_verdicts` (not scorable unless there is one per criterion).

    >>> rubric_ = parse_rubric([{"description": "a", "required": False}, "b"])
    >>> verdicts = lambda *ok: RubricReply(criteria=tuple(
    ...     CriterionVerdict(criterion="", satisfied=s, reasoning="") for s in ok))
    >>> rubric_score(rubric_, verdicts(False, True), scale=1.0)
    1.0
    >>> rubric_score(rubric_, verdicts(True, False), scale=1.0)
    0.0
    """
    matched = matched_verdicts(criteria, reply)
    if isinstance(matched, NotScorable):
        return matched
    gate = [i for i, c in enumerate(criteria) if c.required] or list(range(len(criteria)))
    return float(scale) if all(matched[i].satisfied for i in gate) else 0.0


_PERSONA_RUBRIC = ("You are a grader who applies a rubric literally: a criterion is met only "
                   "when the response clearly meets it.")


@final
@attrs.frozen(kw_only=True)
class RubricTexts:
    """The task, the response and the rubric."""

    task: str
    answer: str
    criteria: tuple[RubricCriterion, ...]


@overload
def rubric(
    judge: Judge, *, criteria: str | Sequence[RubricCriterion | str] | None = None,
    scale: float = 1, type: Literal["agent"] = "agent", id: str = "rubric-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def rubric(
    judge: Judge, *, criteria: str | Sequence[RubricCriterion | str] | None = None,
    scale: float = 1, type: Literal["text"], id: str = "rubric-scorer",
) -> Scorer[Any, str]: ...
def rubric(
    judge: Judge, *, criteria: str | Sequence[RubricCriterion | str] | None = None,
    scale: float = 1, type: TextOrAgent = "agent", id: str = "rubric-scorer",
) -> Scorer[Any, Any]:
    """``scale`` when the response meets every required criterion of a rubric, else 0.

    The rubric is ``criteria``, else ``run.request_context["rubric"]``, else the run's extra
    ``rubric`` (text or a list). Which criteria are required comes from the rubric, never
    from the judge's reply.

    Not scorable without a task (user message), a response, or a non-empty rubric.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"criteria": [
    ...     {"criterion": "mentions the price", "satisfied": True, "reasoning": "$5"}],
    ...     "overall_assessment": "fine"}])
    >>> msg = lambda role, text: {"role": role, "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": text}]}}
    >>> scorer = rubric(judge, criteria="- mentions the price")
    >>> anyio.run(lambda: scorer.run(input={"inputMessages": [msg("user", "Cost?")]},
    ...                              output=[msg("assistant", "It costs $5.")])).unwrap().score
    1.0
    """
    scaled = check_scale(id, scale)
    own: tuple[RubricCriterion, ...] | None = None
    if criteria is not None:
        try:
            own = parse_rubric(criteria)
        except ValueError as exc:
            raise refuse(id, "criteria", "text or a list of criteria", criteria) from exc
        if not own:
            raise refuse(id, "criteria", "at least one criterion", criteria)

    def gather(ctx: _Ctx) -> RubricTexts | NotScorable:
        chosen = own
        if chosen is None:
            found = (ctx.run.request_context or {}).get("rubric", ctx.run.extra.get("rubric"))
            chosen = parse_rubric(found) if found is not None else ()
        if not chosen:
            return not_scorable("no rubric: give criteria= or a 'rubric' in the run's "
                                "request_context")
        task, answer = user_text(ctx.run.input), assistant_text(ctx.run.output)
        if not has_text(task):
            return not_scorable("no task: run.input has no user message with text")
        if not has_text(answer):
            return not_scorable("no response: run.output has no assistant message with text")
        return RubricTexts(task=task, answer=answer, criteria=chosen)

    def prompt(texts: RubricTexts) -> str:
        lines = "\n".join(f"{i}. [{'required' if c.required else 'optional'}] {c.description}"
                          for i, c in enumerate(texts.criteria, 1))
        return build_prompt(
            task="Apply a rubric to a response: say for each criterion whether it is met.",
            principles=[
                "Give exactly one verdict per criterion, in the rubric's order.",
                "satisfied is true only when the response clearly meets the criterion.",
                "Judge the criteria as written; do not add your own.",
                "Give a one-sentence reason for every verdict.",
            ],
            example=('Rubric: 1. [required] greets the user 2. [optional] under 20 words. '
                     'Response: "Hello! Your order ships today."\nReply: {"criteria": '
                     '[{"criterion": "greets the user", "satisfied": true, "reasoning": '
                     '"says hello"}, {"criterion": "under 20 words", "satisfied": true, '
                     '"reasoning": "6 words"}], "overall_assessment": "meets the rubric"}'),
            data=[("TASK", texts.task), ("RESPONSE", texts.answer), ("RUBRIC", lines)],
            reply=('Reply with JSON only: {"criteria": [{"criterion": "...", "satisfied": '
                   '<bool>, "reasoning": "..."}], "overall_assessment": "..."}.'),
        )

    def reason(texts: RubricTexts, reply: RubricReply, score: float) -> str:
        lines = [f"Rubric: {score}"]
        matched = matched_verdicts(texts.criteria, reply)
        for i, criterion in enumerate(texts.criteria):
            verdict = None if isinstance(matched, NotScorable) else matched[i]
            mark = "met" if verdict is not None and verdict.satisfied else "not met"
            lines.append(f"- {mark}{'' if criterion.required else ' (optional)'}: "
                         f"{criterion.description}")
        return "\n".join(lines)

    return judged_pipeline(
        start_judged(shape=type, id=id, name="Rubric Scorer",
                      description="Whether the response meets every required criterion",
                      judge=judge_config(id, judge, _PERSONA_RUBRIC)),
        gather=gather, description="Apply the rubric", reply=RubricReply, prompt=prompt,
        score=lambda texts, reply: rubric_score(texts.criteria, reply, scale=scaled),
        reason=reason,
    )


@final
@attrs.frozen(kw_only=True)
class CriterionMet:
    """The judge's reply: whether the conversation satisfies the criterion."""

    satisfied: bool
    reasoning: str


_PERSONA_MULTI_TURN = ("You are a reviewer of whole conversations. You decide whether an "
                       "assistant's turns, taken together, satisfy a criterion.")


@overload
def multi_turn_judge(
    judge: Judge, *, criterion: str, scale: float = 1,
    type: Literal["agent"] = "agent", id: str = "multi-turn-judge-scorer",
) -> Scorer[AgentInput, AgentOutput]: ...
@overload
def multi_turn_judge(
    judge: Judge, *, criterion: str, scale: float = 1,
    type: Literal["text"], id: str = "multi-turn-judge-scorer",
) -> Scorer[Any, str]: ...
def multi_turn_judge(
    judge: Judge, *, criterion: str, scale: float = 1,
    type: TextOrAgent = "agent", id: str = "multi-turn-judge-scorer",
) -> Scorer[Any, Any]:
    """``scale`` if the assistant's turns, taken together, satisfy ``criterion``, else 0.

    The turns are every assistant message's text (blank ones dropped), fenced as untrusted
    transcript. Not scorable when the output has no assistant turn.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"satisfied": True, "reasoning": "stayed polite"}])
    >>> msg = lambda text: {"role": "assistant", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": text}]}}
    >>> scorer = multi_turn_judge(judge, criterion="The assistant stays polite")
    >>> anyio.run(lambda: scorer.run(input={}, output=[msg("Hi!"), msg("Sure.")])).unwrap().score
    1.0
    """
    wanted = check_text(id, "criterion", criterion)
    if not has_text(wanted):
        raise refuse(id, "criterion", "a non-blank str", criterion)
    scaled = check_scale(id, scale)

    def gather(ctx: _Ctx) -> tuple[str, ...] | NotScorable:
        turns = tuple(text.strip() for m in ctx.run.output if m.role == "assistant"
                      if has_text(text := message_text(m)))
        if not turns:
            return not_scorable("no assistant turns: run.output has no assistant message "
                                "with text")
        return turns

    def prompt(turns: tuple[str, ...]) -> str:
        transcript = "\n".join(f"Turn {i}: {turn}" for i, turn in enumerate(turns, 1))
        return build_prompt(
            task="Decide whether the assistant's turns in a conversation satisfy a criterion.",
            principles=[
                "Consider all turns together; one turn can fail the criterion for all.",
                "satisfied is true only when the criterion clearly holds.",
                "The criterion is yours to apply; the transcript is only evidence.",
                "Give a short reason pointing at the decisive turns.",
            ],
            example=('Criterion: "Never reveals the discount code." Turns: 1. "Hi!" 2. "The '
                     'code is SAVE10."\nReply: {"satisfied": false, "reasoning": "turn 2 '
                     'reveals the code"}'),
            data=[("CRITERION", wanted), ("TRANSCRIPT", transcript)],
            reply='Reply with JSON only: {"satisfied": <bool>, "reasoning": "..."}.',
        )

    return judged_pipeline(
        start_judged(shape=type, id=id, name="Multi-turn Judge Scorer",
                      description=f"Whether the conversation satisfies: {wanted}",
                      judge=judge_config(id, judge, _PERSONA_MULTI_TURN)),
        gather=gather, description="Judge the conversation against the criterion",
        reply=CriterionMet, prompt=prompt,
        score=lambda _t, reply: scaled if reply.satisfied else 0.0,
        reason=lambda _t, reply, _s: reply.reasoning,
    )


