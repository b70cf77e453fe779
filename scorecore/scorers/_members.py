"""How the built-in composites (a panel, a pairwise judgement) type their members.

A composite's members may take any run shape: the composite checks at build time that they
all take the same one (or builds them itself), so inside it a member, its run and its result
are typed once, here, rather than ``Any`` at every use.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from returns.result import Result

from scorecore import Scorer, ScoreResult, ScorerRun, ScorerRunError

__all__: list[str] = []  # internal: typing shared by the panel and the pairwise judgement

Member: TypeAlias = Scorer[Any, Any]
"""A member scorer, of the run shape the composite was built for."""

MemberRun: TypeAlias = ScorerRun[Any, Any]
"""A run as the composite and its members receive it."""

MemberResult: TypeAlias = ScoreResult[Any, Any]
"""A member's result, or the composite's own."""

Outcome: TypeAlias = Result[MemberResult, ScorerRunError]
"""What a member's run (or the composite's) gives: its result or why it failed."""
