"""prompt_alignment: how well the answer follows the user's request and/or the system prompt."""

from __future__ import annotations

from typing import Final, Literal, final

import attrs

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._messages import message_text
from scorecore.scorers._rounding import at_scale
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, refuse, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, RunContext, Spec, Wording, build
from scorecore.scorers.llm._reading import (
    UNIT_INTERVAL,
    check_scale,
    has_text,
    need_answer,
    system_text,
    user_text,
)
from scorecore.validators import check_count, unit_interval

__all__ = ["prompt_alignment"]

EvaluationMode = Literal["user", "system", "both"]

WORDING = Wording(
    description="Grade the response against its instructions",
    persona=("You are a strict reviewer of instruction following. You check whether a response "
             "does what the user and the system prompt asked, in the form they asked for."),
    task="Grade how well a response follows its instructions, on four aspects.",
    principles=(
        "intent_alignment: name the primary intent and score (0 to 1) how well the response "
        "addresses it.",
        "requirements_fulfillment: list every explicit requirement (format, length, content, "
        "constraints), say whether each is met, and give an overall score.",
        "completeness: score whether anything asked for is missing, and list it.",
        "response_appropriateness: score whether format and tone fit the request.",
    ),
    example=('Request: "Two bullet points on tea, formal." Response: "- Tea is popular."\nReply: '
             '{"intent_alignment": {"score": 0.8, "primary_intent": "facts about tea", '
             '"is_addressed": true, "reasoning": "on topic"}, "requirements_fulfillment": '
             '{"requirements": [{"requirement": "two bullet points", "is_fulfilled": false, '
             '"reasoning": "only one"}], "overall_score": 0.5}, "completeness": {"score": 0.5, '
             '"missing_elements": ["a second point"], "reasoning": "one point"}, '
             '"response_appropriateness": {"score": 1, "format_alignment": true, '
             '"tone_alignment": true, "reasoning": "bullets, formal"}, "overall_assessment": '
             '"half done"}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("Two bullet points on tea", "Tea is popular."),
)

# Every score the judge gives is from 0 to 1: UNIT_INTERVAL says so in the schema the judge
# receives, and unit_interval refuses any other (a format failure, asked again).


@final
@attrs.frozen(kw_only=True)
class Intent:
    """Whether the answer addresses the primary intent."""

    score: float = attrs.field(validator=unit_interval, metadata=UNIT_INTERVAL)
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
    overall_score: float = attrs.field(validator=unit_interval, metadata=UNIT_INTERVAL)


@final
@attrs.frozen(kw_only=True)
class Completeness:
    """How complete the answer is."""

    score: float = attrs.field(validator=unit_interval, metadata=UNIT_INTERVAL)
    missing_elements: tuple[str, ...]
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class Appropriateness:
    """Whether the answer's format and tone fit."""

    score: float = attrs.field(validator=unit_interval, metadata=UNIT_INTERVAL)
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


def prompt_alignment(
    judge: Judge, *, scale: float = 1, evaluation_mode: EvaluationMode = "both",
    include_conversation_history: bool | int = False,
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "prompt-alignment-scorer",
) -> Scorer[ShapeIn, ShapeOut]:
    """How well the answer follows the user's request and/or the system prompt.

    ``evaluation_mode``: ``"user"`` (the user's message), ``"system"`` (the system prompts)
    or ``"both"``. ``include_conversation_history``: ``True`` adds the last 10 remembered
    messages to the prompt, a number that many. ``shape=TEXT`` scores plain strings.

    Not scorable without an answer, or without the instructions the mode needs (``both``
    needs at least one of them).

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> graded = {"score": 1, "reasoning": "ok"}
    >>> judge = ScriptedJudge([{
    ...     "intent_alignment": {**graded, "primary_intent": "a haiku", "is_addressed": True},
    ...     "requirements_fulfillment": {"requirements": [], "overall_score": 1},
    ...     "completeness": {**graded, "missing_elements": []},
    ...     "response_appropriateness": {**graded, "format_alignment": True,
    ...                                  "tone_alignment": True},
    ...     "overall_assessment": "follows the request"}])
    >>> scorer = prompt_alignment(judge, evaluation_mode="user")
    >>> run = create_agent_test_run(input_messages="A haiku, please", output="Old pond...")
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
    1.0
    """
    scaled = check_scale(id, scale)
    if evaluation_mode not in ("user", "system", "both"):
        raise refuse(id, "evaluation_mode", "'user', 'system' or 'both'", evaluation_mode)
    mode: EvaluationMode = evaluation_mode
    history = (10 if include_conversation_history is True else 0
               if include_conversation_history is False
               else check_count("include_conversation_history",
                                include_conversation_history, minimum=1, scorer_id=id))
    def read(ctx: RunContext) -> AlignmentTexts | NotScorable:
        user, system = user_text(ctx.run.input), system_text(ctx.run.input)
        if mode == "user" and not has_text(user):
            return not_scorable("no user instructions: run.input has no user message")
        if mode == "system" and not has_text(system):
            return not_scorable("no system instructions: run.input has no system message")
        if mode == "both" and not (has_text(user) or has_text(system)):
            return not_scorable("no instructions: run.input has neither a user nor a system "
                                "message")
        answer = need_answer(ctx.run.output)
        if isinstance(answer, NotScorable):
            return answer
        lines = [f"{m.role}: {message_text(m)}"
                 for m in ctx.run.input.remembered_messages[-history:]] if history else []
        return AlignmentTexts(user=user, system=system, answer=answer, history="\n".join(lines))

    def shown(texts: AlignmentTexts) -> list[tuple[str, str]]:
        data = []
        if mode != "system":
            data.append(("USER_REQUEST", texts.user or "(none)"))
        if mode != "user":
            data.append(("SYSTEM_PROMPT", texts.system or "(none)"))
        if texts.history:
            data.append(("CONVERSATION_HISTORY", texts.history))
        data.append(("RESPONSE", texts.answer))
        return data

    return build(Spec(
        id=id, name="Prompt Alignment Scorer",
        description="How well the answer follows its instructions",
        read=read,
        judgement=Judgement(wording=WORDING, reply=AlignmentReply, data=shown),
        score=lambda _t, reply: alignment_score(reply, mode=mode, scale=scaled),
        reason=lambda _t, reply, score: f"Prompt alignment ({mode}): {score}. "
                                        f"{reply.overall_assessment}",
    ), judge, shape_of(id, shape))
