"""Writing scorers made of scorers: the kernel's part of a panel, a pairwise judgement, a cascade.

A :class:`CompositeScorer` is a :class:`~scorecore.Scorer` whose run is a function of its
members' runs (:func:`run_members`); what it learnt about them goes on the result's one slot,
``ScoreResult.details``, as a :class:`CompositeDetails` of its own family. The built-in
composites (:func:`scorecore.scorers.panel`, :func:`scorecore.scorers.pairwise`) are written
with these names only.

>>> from scorecore.scorers import PanelResult
>>> issubclass(PanelResult, CompositeDetails), PanelResult.kind
(True, 'panel')
"""

from scorecore._core._causes import MemberFailure, PanelFailed
from scorecore._core._composite import (
    CompositeScorer,
    Runner,
    Shape,
    run_members,
    shape_of,
    structure_value,
)
from scorecore._core._mastra_json import (
    cause_from_json,
    cause_to_json,
    judge_from_json,
    judge_to_json,
)
from scorecore._core._reprs import short_repr
from scorecore._core._values import CompositeDetails

__all__ = [
    "CompositeDetails",
    "CompositeScorer",
    "MemberFailure",
    "PanelFailed",
    "Runner",
    "Shape",
    "cause_from_json",
    "cause_to_json",
    "judge_from_json",
    "judge_to_json",
    "run_members",
    "shape_of",
    "short_repr",
    "structure_value",
]
