"""Trust in judges on the command line: panels' agreement and pairwise win rates of a batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from scorecore.evals import ScoreRow, pairwise_summaries, panel_agreements
from scorecore.evals.results import PairwiseSummary, PanelAgreement
from scorecore_adapters.report._text import number, percent

__all__ = ["print_agreements", "print_trust", "trust_json"]


def _alpha(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def trust_json(rows: Sequence[ScoreRow]) -> dict[str, Any]:
    """``{"panels": [...], "pairwise": [...]}`` for the batch's rows (empty lists: none)."""
    return {"panels": [a.to_json() for a in panel_agreements(rows)],
            "pairwise": [s.to_json() for s in pairwise_summaries(rows)]}


def print_trust(rows: Sequence[ScoreRow], *, out: TextIO) -> None:
    """A few lines per panel (alpha, the most disagreed items) and per pairwise scorer, for
    a batch's stored rows (``scorecore show``)."""
    print_agreements(panel_agreements(rows), pairwise_summaries(rows), out=out)


def print_agreements(
    panels: Sequence[PanelAgreement], pairwise: Sequence[PairwiseSummary], *, out: TextIO
) -> None:
    """A few lines per panel (alpha, the most disagreed items) and per pairwise scorer
    (nothing when there are none): what ``scorecore show`` and ``scorecore eval`` print."""
    for a in panels:
        print(f"panel {a.scorer_id} ({', '.join(a.members)}): {a.units} of {a.runs} runs with "
              f"2+ scores; alpha scores {_alpha(a.alpha_interval, a.alpha_interval_ci)}, "
              f"votes {_alpha(a.alpha_nominal, a.alpha_nominal_ci)}; {a.agreed} agreed, "
              f"{a.ties} ties, {a.member_failures} member failures", file=out)
        for d in a.most_disagreed[:5]:
            scores = ", ".join(f"{m} {number(s)}" for m, s in d.scores.items())
            print(f"    disagree on {d.item_id}: spread {number(d.spread)} ({scores})", file=out)
    for s in pairwise:
        print(f"pairwise {s.scorer_id}: win rate {number(s.win_rate)} "
              f"[{number(s.ci_low)}, {number(s.ci_high)}] over {s.items} items "
              f"({s.wins} won, {s.losses} lost, {s.ties} tied); position bias on "
              f"{s.position_bias} ({percent(s.position_bias_rate)})", file=out)
