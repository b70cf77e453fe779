"""The report's trust sections: a panel's agreement between members, pairwise win rates.

Both are computed from the rows (:func:`scorecore.evals.panel_agreements`,
:func:`scorecore.evals.pairwise_summaries`), so a resumed batch's report covers all of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from scorecore.evals import ScoreRow, pairwise_summaries, panel_agreements
from scorecore.evals.results import PairwiseSummary, PanelAgreement
from scorecore_adapters.report._text import esc, number, percent

__all__ = ["trust_sections"]


def _interval(alpha: float | None, ci: tuple[float, float] | None) -> str:
    if alpha is None:
        return "-"
    shown = f"{alpha:.3f}"
    return shown if ci is None else f"{shown} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _link(item_id: str) -> str:
    return (f'<a href="#item={esc(quote(item_id, safe="", errors="replace"))}">'
            f"{esc(item_id)}</a>")


def _panels(agreements: Sequence[PanelAgreement]) -> str:
    rows = "".join(
        f"<tr><td>{esc(a.scorer_id)}</td><td>{esc(', '.join(a.members))}</td>"
        f"<td class=num>{a.runs}</td><td class=num>{a.units}</td>"
        f"<td class=num>{_interval(a.alpha_interval, a.alpha_interval_ci)}</td>"
        f"<td class=num>{_interval(a.alpha_nominal, a.alpha_nominal_ci)}</td>"
        f"<td class=num>{a.agreed}</td><td class=num>{a.ties}</td>"
        f"<td class=num>{a.member_failures}</td></tr>"
        for a in agreements
    )
    disagreed = "".join(
        f"<tr><td>{esc(a.scorer_id)}</td><td>{_link(d.item_id)}</td>"
        f"<td class=num>{number(d.spread)}</td><td>"
        + esc(", ".join(
            f"{member} {score:.3f}" + ("" if member not in d.votes else
                                      " (pass)" if d.votes[member] else " (fail)")
            for member, score in d.scores.items()))
        + "</td></tr>"
        for a in agreements for d in a.most_disagreed
    )
    levels = ", ".join(sorted({f"{100 * a.confidence:.3g}%" for a in agreements}))
    most = ("<h3>Items where members disagree most</h3><table id=\"most-disagreed\"><thead>"
            "<tr><th>panel</th><th>item</th><th class=num>spread</th><th>members</th></tr>"
            f"</thead><tbody>{disagreed}</tbody></table>") if disagreed else ""
    return (
        '<section id="agreement"><h2>Judge agreement (panels)</h2>'
        "<p class=\"muted\">Krippendorff's alpha between each panel's members, items as units: "
        "interval for the scores, nominal for the pass/fail votes (with a threshold); 1 is "
        "full agreement, 0 agreement by chance. Intervals: "
        f"{esc(levels)} seeded bootstrap over items.</p>"
        '<table id="panels"><thead><tr><th>panel</th><th>members</th><th class=num>runs</th>'
        "<th class=num>units</th><th class=num>alpha (scores)</th>"
        "<th class=num>alpha (votes)</th><th class=num>agreed</th><th class=num>ties</th>"
        f"<th class=num>member failures</th></tr></thead><tbody>{rows}</tbody></table>"
        f"{most}</section>"
    )


def _pairwise(summaries: Sequence[PairwiseSummary]) -> str:
    rows = "".join(
        f"<tr><td>{esc(s.scorer_id)}</td><td class=num>{s.items}</td>"
        f"<td class=num>{s.wins}/{s.losses}/{s.ties}</td>"
        f"<td class=num>{s.position_bias} ({percent(s.position_bias_rate)})</td>"
        f"<td class=num>{number(s.win_rate)}</td>"
        f"<td class=num>[{number(s.ci_low)}, {number(s.ci_high)}]</td></tr>"
        for s in summaries
    )
    return (
        '<section id="pairwise"><h2>Pairwise judgements</h2>'
        '<p class="muted">Each item was judged in both orders; a verdict that follows the '
        "order is position bias (counted as a tie in the win rate). The interval counts every "
        "position-biased item as a loss for its low end and as a win for its high end.</p>"
        '<table id="pairwise-summary"><thead><tr><th>scorer</th><th class=num>items</th>'
        "<th class=num>won/lost/tied</th><th class=num>position bias</th>"
        "<th class=num>win rate</th><th class=num>interval</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def trust_sections(rows: Sequence[ScoreRow]) -> str:
    """The panels' agreement and the pairwise summaries as HTML ("" when the batch has none)."""
    agreements = panel_agreements(rows)
    summaries = pairwise_summaries(rows)
    return (_panels(agreements) if agreements else "") + (
        _pairwise(summaries) if summaries else "")
