"""The result's one slot for a composite's details: any family fits it, a cascade as a panel.

A cascade is not built in yet; the family below stands for one (the tier that decided), written
with the public ``scorecore.composite`` names only, to show that a new composite needs no change
to the kernel, the rows or the Mastra JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, final

import attrs
import pytest
from returns.result import Success

from scorecore import (
    Scorer,
    ScoreResult,
    ScorerRun,
    create_scorer,
    from_mastra_json,
    to_mastra_json,
)
from scorecore.composite import CompositeDetails, CompositeScorer, run_members, shape_of
from scorecore.evals import run_evals
from scorecore.scorers import PairwiseResult, PanelResult
from scorecore_adapters.testing import InMemoryScoreStore
from tests.secret_shapes import SECRET_SHAPES

pytestmark = pytest.mark.anyio


@final
@attrs.frozen(kw_only=True)
class Decided(CompositeDetails):
    """Which tier of a cascade decided, and why."""

    kind: ClassVar[str] = "test_cascade"

    tier: str
    why: str

    def to_json(self) -> dict[str, object]:
        return {"tier": self.tier, "why": self.why}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Decided:
        return cls(tier=data["tier"], why=data["why"])


def fixed(scorer_id: str, score: float) -> Scorer[Any, Any]:
    return create_scorer(id=scorer_id, description="d").generate_score(lambda ctx: score)


def cascade(cheap: Scorer[Any, Any], strong: Scorer[Any, Any], why: str = "") -> Scorer[Any, Any]:
    """The cheap scorer decides when it is sure (a score of 0 or 1), else the strong one."""

    async def runner(run: ScorerRun[Any, Any], runtime: Any) -> Any:
        (first,) = await run_members([(cheap, run)], runtime)
        score = first.unwrap().score
        tier = cheap
        if score not in (0.0, 1.0):
            (second,) = await run_members([(strong, run)], runtime)
            score, tier = second.unwrap().score, strong
        return Success(ScoreResult(run=run, score=score, reason=f"decided by {tier.id}",
                                   details=Decided(tier=tier.id, why=why or tier.id)))

    return CompositeScorer(kind="cascade", id="cascade", name="Cascade", description="d",
                           members=(cheap, strong), runner=runner, policy={},
                           shape=shape_of(cheap))


async def test_a_cascade_names_its_deciding_tier_in_the_slot() -> None:
    """``details_as`` reads the family's details; other families read ``None``."""
    result = (await cascade(fixed("cheap", 0.5), fixed("strong", 0.8)).run(
        input="q", output="a")).unwrap()
    assert result.score == 0.8
    assert result.details_as(Decided) == Decided(tier="strong", why="strong")
    assert result.details_as(PanelResult) is None
    assert result.details_as(PairwiseResult) is None


async def test_the_details_round_trip_through_mastra_json_under_their_kind() -> None:
    """Mastra's JSON keeps the details under their kind and reads them back as they were."""
    result = (await cascade(fixed("cheap", 1.0), fixed("strong", 0.8)).run(
        input="q", output="a")).unwrap()
    data = to_mastra_json(result)
    assert data["test_cascade"] == {"tier": "cheap", "why": "cheap"}
    assert "details" not in data
    back = from_mastra_json(data)
    assert back.details == result.details
    assert "test_cascade" not in back.run.extra


async def test_a_stored_row_keeps_the_details_under_their_kind_with_secrets_redacted() -> None:
    """A batch's row keeps any family's details in ``metadata[kind]``, redacted as the panel's
    and the pairwise judgement's are (their texts explain the run)."""
    shape = SECRET_SHAPES[0]
    store = InMemoryScoreStore()
    await run_evals([{"input": "q", "output": "a", "id": "i1"}],
                    [cascade(fixed("cheap", 0.5), fixed("strong", 0.8), why=shape.text)],
                    store=store, batch_id="b")
    (row,) = await store.list_run("b")
    stored = (row.metadata or {})["test_cascade"]
    assert stored["tier"] == "strong"
    assert shape.secret not in stored["why"]
    assert shape.kept in stored["why"]


def test_two_families_cannot_share_a_kind() -> None:
    """A second family claiming a kind already taken is refused when it is defined."""
    with pytest.raises(TypeError, match="'panel' is already PanelResult"):

        class Impostor(CompositeDetails):  # the definition itself is refused
            kind: ClassVar[str] = "panel"
