"""What a panel and a pairwise judgement keep on their result (``ScoreResult.details``).

Read them with :meth:`~scorecore.ScoreResult.details_as`: ``result.details_as(PanelResult)``
is the panel's members and spread (``None`` for a result of another scorer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias, final

import attrs

from scorecore import JudgeExecution, RunFailureCause, StepName
from scorecore.composite import (
    CompositeDetails,
    cause_from_json,
    cause_to_json,
    judge_from_json,
    judge_to_json,
)

__all__ = ["PairwiseResult", "PanelMember", "PanelResult"]


MemberStatus: TypeAlias = Literal["scored", "not_scorable", "failed"]
"""How one member of a panel fared on one run."""


@final
@attrs.frozen(kw_only=True)
class PanelMember:
    """One member's run in a panel (``result.details_as(PanelResult).members``).

    Attributes:
        scorer_id: the member scorer's id.
        status: ``"scored"``, ``"not_scorable"`` or ``"failed"``.
        score: its score, when scored.
        reason: its reason (or, not scorable, why not).
        vote: whether the score reached the panel's threshold (``None`` without a threshold
            or a score).
        replaces: the member this one stood in for (a replacement), else ``None``.
        replaced: whether it failed and a replacement took its seat (its score never counts).
        failed_step: the step that failed, when it failed.
        cause: why it failed, when it failed (the run error's structured cause).
        judge: its judge executions per prompt step.
    """

    scorer_id: str
    status: MemberStatus
    score: float | None = None
    reason: str | None = None
    vote: bool | None = None
    replaces: str | None = None
    replaced: bool = False
    failed_step: str | None = None
    cause: RunFailureCause | None = None
    judge: Mapping[StepName, tuple[JudgeExecution, ...]] = attrs.field(factory=dict)


@final
@attrs.frozen(kw_only=True)
class PanelResult(CompositeDetails):
    """What a panel of judges made of one run: every member, the aggregate and the spread.

    Attributes:
        aggregate: how members' scores were combined: ``"median"``, ``"mean"``, ``"min"``,
            ``"max"``, ``"majority"``, or the name of the function given.
        members: every member that ran, in seat order; a failed member that was replaced is
            followed by its replacement.
        min_successful: the members that had to score.
        threshold: the pass mark votes are taken at, if any.
        score: the aggregate (``None`` when too few scored, or a tie was not scorable).
        std_dev: the population standard deviation of the counted scores.
        min: the lowest counted score.
        max: the highest counted score.
        agreed: whether the counted members agreed: all voted alike (with a threshold) or
            gave the same score (without); ``None`` with fewer than two scores.
        tie: the majority vote was a tie (settled by the panel's ``on_tie``).
        passes: members voting pass (with a threshold).
        fails: members voting fail (with a threshold).
    """

    kind: ClassVar[str] = "panel"

    aggregate: str
    members: tuple[PanelMember, ...]
    min_successful: int
    threshold: float | None = None
    score: float | None = None
    std_dev: float | None = None
    min: float | None = None
    max: float | None = None
    agreed: bool | None = None
    tie: bool = False
    passes: int | None = None
    fails: int | None = None

    @property
    def counted(self) -> tuple[PanelMember, ...]:
        """The members whose scores the aggregate used (scored, not replaced)."""
        return tuple(m for m in self.members if m.status == "scored" and not m.replaced)

    def to_json(self) -> dict[str, object]:
        """The panel as a row keeps it (``metadata["panel"]``), camelCase as Mastra's JSON."""
        return _panel_json(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PanelResult:
        """The panel back from :meth:`to_json`'s JSON."""
        return _panel_from_json(data)


PairwiseVerdict: TypeAlias = Literal["output", "baseline", "tie"]
"""Which of two outputs a judge preferred."""


@final
@attrs.frozen(kw_only=True)
class PairwiseResult(CompositeDetails):
    """A pairwise judgement of ``output`` against ``baseline_output``.

    A pairwise scorer's result keeps it: ``result.details_as(PairwiseResult)``.

    Attributes:
        outcome: for ``output``: ``"win"``, ``"loss"``, ``"tie"``, or ``"position_bias"``
            when the judge's preference followed the order the two were shown in.
        forward: the judge's verdict with ``output`` shown first.
        swapped: its verdict with ``baseline_output`` shown first (``None`` without swap).
    """

    kind: ClassVar[str] = "pairwise"

    outcome: Literal["win", "loss", "tie", "position_bias"]
    forward: PairwiseVerdict
    swapped: PairwiseVerdict | None = None

    @property
    def consistent(self) -> bool:
        """Whether both orders gave the same verdict (``True`` without a swap)."""
        return self.swapped is None or self.swapped == self.forward

    def to_json(self) -> dict[str, object]:
        """The verdicts as a row keeps them (``metadata["pairwise"]``)."""
        return {"outcome": self.outcome, "forward": self.forward, "swapped": self.swapped}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairwiseResult:
        """The verdicts back from :meth:`to_json`'s JSON."""
        return cls(outcome=data["outcome"], forward=data["forward"], swapped=data.get("swapped"))


def _member_json(member: PanelMember) -> dict[str, Any]:
    out: dict[str, Any] = {"scorerId": member.scorer_id, "status": member.status,
                           "score": member.score, "reason": member.reason, "vote": member.vote}
    if member.replaces is not None:
        out["replaces"] = member.replaces
    if member.replaced:
        out["replaced"] = True
    if member.failed_step is not None:
        out["failedStep"] = member.failed_step
    if member.cause is not None:
        out["error"] = cause_to_json(member.cause)
    if member.judge:
        out["judge"] = judge_to_json(member.judge)
    return out


def _member_from_json(data: Mapping[str, Any]) -> PanelMember:
    error = data.get("error")
    return PanelMember(
        scorer_id=data["scorerId"], status=data["status"], score=data.get("score"),
        reason=data.get("reason"), vote=data.get("vote"), replaces=data.get("replaces"),
        replaced=bool(data.get("replaced", False)), failed_step=data.get("failedStep"),
        cause=None if error is None else cause_from_json(error),
        judge=judge_from_json(data.get("judge")),
    )


_PANEL_NUMBERS = (("threshold", "threshold"), ("score", "score"), ("std_dev", "stdDev"),
                  ("min", "min"), ("max", "max"), ("agreed", "agreed"), ("passes", "passes"),
                  ("fails", "fails"))


def _panel_json(panel: PanelResult) -> dict[str, Any]:
    out: dict[str, Any] = {"aggregate": panel.aggregate, "minSuccessful": panel.min_successful}
    out |= {key: getattr(panel, name) for name, key in _PANEL_NUMBERS}
    out["tie"] = panel.tie
    out["members"] = [_member_json(m) for m in panel.members]
    return out


def _panel_from_json(data: Mapping[str, Any]) -> PanelResult:
    return PanelResult(
        aggregate=data["aggregate"], min_successful=data["minSuccessful"],
        members=tuple(_member_from_json(m) for m in data.get("members", ())),
        tie=bool(data.get("tie", False)),
        **{name: data.get(key) for name, key in _PANEL_NUMBERS},
    )
