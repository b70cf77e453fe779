"""Trust in judges on the command line: panels' agreement, pairwise win rates and cascades'
tiers of a batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from scorecore.evals import (
    ScoreRow,
    cascade_summaries,
    pairwise_summaries,
    panel_agreements,
)
from scorecore.evals.results import CascadeSummary, PairwiseSummary, PanelAgreement
from scorecore.judge.economics import format_usd
from scorecore_adapters.report._text import number, percent

__all__ = [
    "print_agreements",
    "print_cascades",
    "trust_json",
]


def _alpha(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def trust_json(rows: Sequence[ScoreRow]) -> dict[str, Any]:
    """``{"panels": [...], "pairwise": [...], "cascades": [...]}`` for the batch's rows (empty
    lists: none)."""
    return {"panels": [a.to_json() for a in panel_agreements(rows)],
            "pairwise": [s.to_json() for s in pairwise_summaries(rows)],
            "cascades": [c.to_json() for c in cascade_summaries(rows)]}


def print_agreements(
    panels: Sequence[PanelAgreement], pairwise: Sequence[PairwiseSummary], *,
    cascades: Sequence[CascadeSummary] = (), out: TextIO,
) -> None:
    """A few lines per panel (alpha, the most disagreed items), per pairwise scorer and per
    cascade (nothing when there are none): what ``scorecore show`` and ``scorecore eval``
    print."""
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
    print_cascades(cascades, out=out)


def print_cascades(cascades: Sequence[CascadeSummary], *, out: TextIO) -> None:
    """A line per cascade and one per tier: the share of runs it decided, its judge cost and,
    when the summary was made with labels, its agreement on the runs it decided."""
    for c in cascades:
        with_labels = c.agreement is not None or c.labelled
        line = (f"cascade {c.scorer_id}: {c.decided} of {c.runs} runs decided, "
                f"{c.low_confidence} low confidence, {c.failed} failed; "
                f"cost {format_usd(c.cost_usd)}")
        if with_labels:
            per_usd = "n/a" if c.agreement_per_usd is None else f"{c.agreement_per_usd:.4g}"
            line += (f"; agreement {percent(c.agreement)} over {c.labelled} labelled, "
                     f"{per_usd} per $")
        print(line, file=out)
        for t in c.tiers:
            tier = (f"    tier {t.index} {t.scorer_id}: decided {t.decided} of {t.runs} "
                    f"reaching it ({percent(t.decided_share)} of decided), "
                    f"cost {format_usd(t.cost_usd)}")
            if with_labels:
                tier += f", agreement {percent(t.agreement)} over {t.labelled} labelled"
            print(tier, file=out)
