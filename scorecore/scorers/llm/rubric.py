"""rubric: whether the response meets every required criterion of a rubric."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, final

import attrs

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, refuse, shape_of
from scorecore.scorers.llm._engine import Judge, Judgement, RunContext, Spec, Wording, build
from scorecore.scorers.llm._reading import check_scale, question_and_answer

__all__ = ["RubricCriterion", "rubric"]

WORDING = Wording(
    description="Apply the rubric",
    persona=("You are a grader who applies a rubric literally: a criterion is met only when the "
             "response clearly meets it."),
    task="Apply a rubric to a response: say for each criterion whether it is met.",
    principles=(
        "Give exactly one verdict per criterion, in the rubric's order.",
        "satisfied is true only when the response clearly meets the criterion.",
        "Judge the criteria as written; do not add your own.",
        "Give a one-sentence reason for every verdict.",
    ),
    example=('Rubric: 1. [required] greets the user 2. [optional] under 20 words. Response: '
             '"Hello! Your order ships today."\nReply: {"criteria": [{"criterion": "greets the '
             'user", "satisfied": true, "reasoning": "says hello"}, {"criterion": "under 20 '
             'words", "satisfied": true, "reasoning": "6 words"}], "overall_assessment": "meets '
             'the rubric"}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("greets the user", "under 20 words", "Your order ships today."),
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


@final
@attrs.frozen(kw_only=True)
class RubricTexts:
    """The task, the response and the rubric."""

    task: str
    answer: str
    criteria: tuple[RubricCriterion, ...]


def shown(texts: RubricTexts) -> list[tuple[str, str]]:
    """The task, the response and the rubric's numbered criteria, each marked required or
    optional."""
    lines = "\n".join(f"{i}. [{'required' if c.required else 'optional'}] {c.description}"
                      for i, c in enumerate(texts.criteria, 1))
    return [("TASK", texts.task), ("RESPONSE", texts.answer), ("RUBRIC", lines)]


def explained(texts: RubricTexts, reply: RubricReply, score: float) -> str:
    """The score, then each criterion met or not (optional ones marked)."""
    lines = [f"Rubric: {score}"]
    matched = matched_verdicts(texts.criteria, reply)
    for i, criterion in enumerate(texts.criteria):
        verdict = None if isinstance(matched, NotScorable) else matched[i]
        mark = "met" if verdict is not None and verdict.satisfied else "not met"
        lines.append(f"- {mark}{'' if criterion.required else ' (optional)'}: "
                     f"{criterion.description}")
    return "\n".join(lines)


def rubric(
    judge: Judge, *, criteria: str | Sequence[RubricCriterion | str] | None = None,
    scale: float = 1, shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "rubric-scorer",
) -> Scorer[ShapeIn, ShapeOut]:
    """``scale`` when the response meets every required criterion of a rubric, else 0.

    The rubric is ``criteria``, else ``run.request_context["rubric"]``, else the run's extra
    ``rubric`` (text or a list). Which criteria are required comes from the rubric, never
    from the judge's reply. ``shape=TEXT`` scores plain strings.

    Not scorable without a task (user message), a response, or a non-empty rubric.

    >>> from scorecore.agent import create_agent_test_run
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"criteria": [
    ...     {"criterion": "mentions the price", "satisfied": True, "reasoning": "$5"}],
    ...     "overall_assessment": "fine"}])
    >>> scorer = rubric(judge, criteria="- mentions the price")
    >>> run = create_agent_test_run(input_messages="Cost?", output="It costs $5.")
    >>> scorer.run_sync(input=run.input, output=run.output).unwrap().score
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
    def read(ctx: RunContext) -> RubricTexts | NotScorable:
        chosen = own
        if chosen is None:
            found = (ctx.run.request_context or {}).get("rubric", ctx.run.extra.get("rubric"))
            chosen = parse_rubric(found) if found is not None else ()
        if not chosen:
            return not_scorable("no rubric: give criteria= or a 'rubric' in the run's "
                                "request_context")
        texts = question_and_answer(ctx.run.input, ctx.run.output, question="task",
                                    answer="response")
        return (texts if isinstance(texts, NotScorable)
                else RubricTexts(task=texts[0], answer=texts[1], criteria=chosen))

    return build(Spec(
        id=id, name="Rubric Scorer",
        description="Whether the response meets every required criterion",
        read=read,
        judgement=Judgement(wording=WORDING, reply=RubricReply, data=shown),
        score=lambda texts, reply: rubric_score(texts.criteria, reply, scale=scaled),
        reason=explained,
    ), judge, shape_of(id, shape))
