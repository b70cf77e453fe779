"""The report's trust sections: a panel's agreement between members, pairwise win rates, a
cascade's tiers.

All are folded from the rows as they are read (:class:`scorecore.evals.engine.TrustFold`, as
:func:`scorecore.evals.panel_agreements` and its siblings fold them), so a resumed batch's
report covers all of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from scorecore.evals import LabelValue
from scorecore.evals.results import CascadeSummary, PairwiseSummary, PanelAgreement
from scorecore.judge.economics import format_usd
from scorecore_adapters.report._scan import Digest
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


def _cascades(summaries: Sequence[CascadeSummary], labelled: bool) -> str:
    def agreement(value: float | None, n: int) -> str:
        return f"<td class=num>{percent(value)} ({n})</td>" if labelled else ""

    rows = "".join(
        f"<tr><td>{esc(c.scorer_id)}</td><td>{t.index} {esc(t.scorer_id)}</td>"
        f"<td class=num>{t.runs}</td><td class=num>{t.decided}</td>"
        f"<td class=num>{percent(t.decided_share)}</td><td class=num>{format_usd(t.cost_usd)}</td>"
        f"{agreement(t.agreement, t.labelled)}</tr>"
        for c in summaries for t in c.tiers
    )
    totals = "".join(
        f"<tr><td>{esc(c.scorer_id)}</td><td>whole cascade</td><td class=num>{c.runs}</td>"
        f"<td class=num>{c.decided}</td><td class=num>{c.low_confidence} low confidence, "
        f"{c.failed} failed</td><td class=num>{format_usd(c.cost_usd)}</td>"
        f"{agreement(c.agreement, c.labelled)}</tr>"
        for c in summaries
    )
    per_usd = "".join(
        f"<li>{esc(c.scorer_id)}: " + (
            "n/a" if c.agreement_per_usd is None else f"{c.agreement_per_usd:.4g}")
        + " agreement per $</li>" for c in summaries) if labelled else ""
    head = "<th class=num>agreement (labelled)</th>" if labelled else ""
    return (
        '<section id="cascades"><h2>Cascades</h2>'
        '<p class="muted">Per tier: the runs that reached it, the runs it decided and their '
        "share of the decided runs, and the judge cost of every run that reached it (decided "
        "there or sent on). With labels, each tier's agreement is over the runs it decided. "
        "To compare with the last tier alone, run it as a second scorer in the same batch.</p>"
        '<table id="cascade-tiers"><thead><tr><th>cascade</th><th>tier</th>'
        "<th class=num>reached</th><th class=num>decided</th><th class=num>share</th>"
        f"<th class=num>cost</th>{head}</tr></thead><tbody>{rows}{totals}</tbody></table>"
        + (f"<ul>{per_usd}</ul>" if per_usd else "") + "</section>"
    )


def trust_sections(
    digest: Digest, *, labels: Mapping[str, LabelValue] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> str:
    """The panels' agreement, the pairwise summaries and the cascades' tiers as HTML ("" when
    the batch has none); with ``labels``, each tier's agreement (pass mark: the scorer's
    threshold, 0.5 without one)."""
    agreements = digest.panels()
    summaries = digest.pairwise()
    cascades = digest.cascades(labels, thresholds or {})
    return (_panels(agreements) if agreements else "") + (
        _pairwise(summaries) if summaries else "") + (
        _cascades(cascades, labels is not None) if cascades else "")
