"""The HTML page: summary, charts, not-scorable reasons, failures, baseline diff, items."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from typing import IO, Final, final
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import attrs

from scorecore.evals import (
    Calibration,
    Comparison,
    EvalReport,
    LabelValue,
    ScoreRow,
    Threshold,
    compare,
)
from scorecore.evals.results import ScorerComparison
from scorecore.evals.store import row_item_id
from scorecore_adapters.report._assets import CSS, JS, VIEW_JS
from scorecore_adapters.report._calibration import calibration_section, caveats
from scorecore_adapters.report._charts import histogram_svg, status_svg
from scorecore_adapters.report._data import DEFAULT_BUDGET, ScorerStats
from scorecore_adapters.report._scan import Digest, ReportBuild
from scorecore_adapters.report._text import counted, esc, number, percent
from scorecore_adapters.report._trust import trust_sections


def _summary(stats: Sequence[ScorerStats]) -> str:
    rows = []
    for s in stats:
        if s.threshold is None:
            check, result = "", ""
        else:
            check = esc(s.threshold.describe())
            result = ('<span class="pass">pass</span>' if s.passed
                      else '<span class="fail">FAIL</span>')
        rows.append(
            f"<tr><td>{esc(s.scorer_id)}</td><td class=num>{number(s.mean)}</td>"
            f"<td class=num>{s.scored}</td><td class=num>{s.not_scorable}</td>"
            f"<td class=num>{s.failed}</td><td>{check}</td><td>{result}</td></tr>"
        )
    return (
        '<table id="summary"><thead><tr><th>scorer</th><th class=num>mean</th>'
        "<th class=num>scored</th><th class=num>not scorable</th><th class=num>failed</th>"
        "<th>threshold</th><th>result</th></tr></thead><tbody>" + "".join(rows)
        + "</tbody></table>"
    )


def _charts(stats: Sequence[ScorerStats]) -> str:
    cards = [
        f'<div class="chart-card"><h3>{esc(s.scorer_id)}</h3>'
        f"{histogram_svg(s.scorer_id, *s.histogram)}"
        f"<div>{status_svg(s.scored, s.not_scorable, s.failed)}</div>"
        f'<div class="muted">{s.scored} scored, {s.not_scorable} not scorable, '
        f"{s.failed} failed</div></div>"
        for s in stats
    ]
    return '<div class="charts" id="charts">' + "".join(cards) + "</div>"


def _not_scorable(digest: Digest) -> str:
    reasons = digest.not_scorable_reasons()
    if not reasons:
        return '<p class="muted" id="not-scorable">Every run was scorable.</p>'
    body = "".join(f"<tr><td>{esc(s)}</td><td class=num>{n}</td><td>{esc(r)}</td></tr>"
                   for s, r, n in reasons[:200])
    more = (f'<p class="muted">{len(reasons) - 200} more reasons: filter the items by '
            "status not_scorable.</p>" if len(reasons) > 200 else "")
    return ('<table id="not-scorable"><thead><tr><th>scorer</th><th class=num>count</th>'
            f"<th>reason</th></tr></thead><tbody>{body}</tbody></table>{more}")


def _failures(digest: Digest) -> str:
    groups = digest.tally.groups()
    if not groups:
        return '<p class="muted" id="failures">No scorer run failed.</p>'
    body = "".join(
        f"<tr><td>{esc(', '.join(g.scorer_ids))}</td><td class=num>{g.count}</td>"
        f"<td>{esc(g.cause.kind)}"
        f"</td><td>{esc(g.cause.step or '')}</td><td class=cause>{esc(g.cause.message)}</td>"
        f"<td>{esc(', '.join(g.item_ids))}</td></tr>"
        for g in groups[:500]
    )
    return ('<table id="failures"><thead><tr><th>scorers</th><th class=num>runs</th>'
            "<th>kind</th><th>step</th><th>cause (full)</th><th>first items</th></tr></thead>"
            f"<tbody>{body}</tbody></table>")


def _comparison_row(s: ScorerComparison) -> str:
    interval = ("-" if s.ci_low is None
                else f"[{number(s.ci_low, sign=True)}, {number(s.ci_high, sign=True)}]")
    changed = ' <span class="changed">definition changed</span>' if s.definition_changed else ""
    return (
        f"<tr><td>{esc(s.scorer_id)}{changed}</td><td class=num>{s.paired}</td>"
        f"<td class=num>{number(s.base_mean)}</td><td class=num>{number(s.new_mean)}</td>"
        f"<td class=num>{number(s.mean_delta, sign=True)}</td><td class=num>{interval}</td>"
        f"<td class=num>{percent(s.base_pass_rate)} → {percent(s.new_pass_rate)}</td>"
        f"<td class=num>{s.mcnemar_p:.3g}</td>"
        f"<td class=num>{s.improved}/{s.regressed}/{s.unchanged}</td>"
        f'<td><span class="verdict v-{s.verdict}">{_SCORER_VERDICTS[s.verdict]}</span></td></tr>'
    )


_SCORER_VERDICTS: Final = {"regressed": "regressed", "improved": "improved",
                           "unchanged": "unchanged", "not_enough_pairs": "too few pairs"}
_BADGES: Final = {"regressed": ("regressed", "significant regression"),
                  "no_regression": ("unchanged", "no significant regression"),
                  "not_enough_pairs": ("none", "no verdict: not enough paired items")}


def _fragment(item_id: str) -> str:
    """``item_id`` for a ``#item=`` link: percent-encoded (the page's script decodes it, so
    ``&``, ``#``, ``+`` and ``=`` stay part of the id), then HTML-escaped."""
    return esc(quote(item_id, safe="", errors="replace"))


def _baseline(comparison: Comparison | None) -> str:
    if comparison is None:
        return ""
    c = comparison
    table = (
        '<table id="comparison"><thead><tr><th>scorer</th><th class=num>pairs</th>'
        "<th class=num>baseline</th><th class=num>this batch</th><th class=num>delta</th>"
        "<th class=num>interval</th><th class=num>pass rate</th><th class=num>McNemar p</th>"
        "<th class=num>+/-/=</th><th>verdict</th></tr></thead><tbody>"
        + "".join(_comparison_row(s) for s in c.scorers) + "</tbody></table>"
    )
    notes = [*counted("item(s) only in the baseline", c.only_in_base, 20),
             *counted("item(s) only in this batch", c.only_in_new, 20)]
    if c.scorers_differ:
        notes.append("scorers differ: " + esc(c.scorer_differences()))
    if c.verdict == "not_enough_pairs":
        notes.append(esc(c.verdict_reason or ""))
    regressed = [
        f"<tr><td>{esc(s.scorer_id)}</td><td><a href=\"#item={_fragment(item.item_id)}\">"
                f"{esc(item.item_id)}</a></td><td>{number(item.base_score)} ({item.base_status})"
                f"</td><td>{number(item.new_score)} ({item.new_status})</td>"
        f"<td class=num>{number(item.delta, sign=True)}</td></tr>"
        for s in c.scorers for item in s.most_regressed
    ]
    most = ("<h3>Most regressed items</h3><table id=\"most-regressed\"><thead><tr><th>scorer"
            "</th><th>item</th><th>baseline</th><th>this batch</th><th class=num>delta</th>"
            "</tr></thead><tbody>" + "".join(regressed) + "</tbody></table>") if regressed else ""
    gate, words = _BADGES[c.verdict]
    levels = ", ".join(sorted({f"{100 * s.confidence:.3g}%" for s in c.scorers})) or "95%"
    return (
        f'<section id="baseline"><h2>Compared with baseline {esc(c.base_batch)} '
        f'<span class="verdict v-{gate}">{words}</span></h2>'
        f'<p class="muted">Items paired by id; tolerance {c.tolerance:g}; interval: {levels} '
        f"seeded bootstrap of the mean delta ({c.resamples} resamples, seed {c.seed}); pass "
        "rate with an exact McNemar test. The Δ column of the items shows per-item deltas.</p>"
        + table + "".join(f"<p>{n}</p>" for n in notes) + most + "</section>"
    )


@final
@attrs.frozen(kw_only=True)
class _Gate:
    """One gate the page was asked for: what it checks, whether it passed, and why not."""

    name: str
    passed: bool
    outcome: str
    reason: str | None = None


def _gates(
    verdict: EvalReport, calibration: Calibration | None, min_kappa: float | None,
    comparison: Comparison | None,
) -> list[_Gate]:
    """Every gate asked for: the batch's checks always, the κ gate with ``min_kappa``, the
    comparison with a baseline; the page's verdict is their conjunction."""
    gates = [_Gate(name="checks (thresholds, gates, failure budget)", passed=verdict.passed,
                   outcome=verdict.verdict, reason=verdict.verdict_reason)]
    if calibration is not None and min_kappa is not None:
        failed = calibration.failed_checks(min_kappa)
        # One line, as the checks' reason: the first failing scorer, and how many more (the
        # calibration section has each scorer's κ and interval).
        more = f" (and {len(failed) - 1} more scorer(s))" if len(failed) > 1 else ""
        gates.append(_Gate(
            name=f"calibration: every scorer's κ interval above {min_kappa:g}",
            passed=not failed, outcome="failed" if failed else "passed",
            reason=failed[0] + more if failed else None))
    if comparison is not None:
        regressed = [s.scorer_id for s in comparison.scorers if s.verdict == "regressed"]
        reason = None
        if comparison.verdict == "regressed":
            reason = f"significant regression in {', '.join(regressed)}"
        elif comparison.verdict == "not_enough_pairs":
            # Fail-closed: a comparison that gave no verdict is not a pass.
            reason = f"no verdict: {comparison.verdict_reason or 'not enough paired items'}"
        gates.append(_Gate(
            name=f"compared with baseline {comparison.base_batch}",
            passed=comparison.verdict == "no_regression", outcome=_BADGES[comparison.verdict][1],
            reason=reason))
    return gates


def _verdict(gates: Sequence[_Gate]) -> str:
    verdict = "passed" if all(g.passed for g in gates) else "failed"
    return f'<span class="verdict {verdict}" id="verdict">{verdict}</span>'


def _verdict_reason(gates: Sequence[_Gate]) -> str:
    failed = [g for g in gates if not g.passed]
    if not failed:
        return ""
    more = (f" (and {len(failed) - 1} more failed gate(s))" if len(failed) > 1 else "")
    return (f'<p id="verdict-reason">verdict: failed — {esc(failed[0].reason or "")}'
            f"{more}</p>")


def _gate_list(gates: Sequence[_Gate]) -> str:
    """The gates one by one, when more than the batch's checks were asked for."""
    if len(gates) < 2:
        return ""
    items = "".join(
        f'<li>{esc(g.name)}: <span class="{"pass" if g.passed else "fail"}">'
        f"{esc(g.outcome)}</span>{' — ' + esc(g.reason) if g.reason else ''}</li>"
        for g in gates)
    return f'<ul id="gates">{items}</ul>'


def _view_prefix(view_url: str, batch_id: str) -> str:
    """The workbench address of ``batch_id``'s runs, the item id to be appended: only the
    scheme, host and path of ``view_url`` (a pasted URL's ``?token=`` never reaches the page).

    Raises:
        ValueError: ``view_url`` is not an ``http(s)://HOST[:PORT]`` address.
    """
    parts = urlsplit(view_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"view_url must be the workbench's address, such as "
                         f"http://127.0.0.1:8765, got {view_url!r}")
    base = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    return f"{base}/run?{urlencode({'batch': batch_id})}&item="


def _view_links(view_url: str | None, batch_id: str) -> tuple[str, str]:
    """The items table's extra header and the script that links each row to its run in the
    workbench; nothing without ``view_url`` (the page is then as it always was)."""
    if view_url is None:
        return "", ""
    # JSON inside a data script: <, > and & escaped, so no stored id can close the element.
    data = (json.dumps({"run": _view_prefix(view_url, batch_id)})
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    return ("<th>workbench</th>",
            f'<script type="application/json" id="view-links">{data}</script>'
            f"<script>{VIEW_JS}</script>")


def render_report(
    rows: Sequence[ScoreRow],
    *,
    batch_id: str,
    baseline: Sequence[ScoreRow] | None = None,
    thresholds: Mapping[str, Threshold] | None = None,
    tolerance: float = 0.02,
    source: str = "",
    budget: int = DEFAULT_BUDGET,
    comparison: Comparison | None = None,
    max_failures: int | None = 0,
    max_failure_rate: float | None = None,
    calibration: Calibration | None = None,
    min_kappa: float | None = None,
    labels: Mapping[str, LabelValue] | None = None,
    view_url: str | None = None,
) -> str:
    """One self-contained HTML page about a batch's rows (inline CSS, JS and SVG; no network).

    The header's verdict is the conjunction of every gate asked for: the batch's checks
    (thresholds, gates, failure budget), the κ gate (``min_kappa`` with ``calibration``)
    and the comparison with ``baseline`` (a significant regression, or no verdict for want of
    paired items, fails it); each is listed with its outcome. A scorer whose agreement with
    the labels cannot be told from chance gets a caveat under the verdict.

    Args:
        rows: the batch's stored rows (``store.list_run(batch_id)``).
        batch_id: the batch's id (the page's title).
        baseline: another batch's rows: the page then shows ``compare(baseline, rows)`` and
            each item's delta.
        thresholds: per scorer id, the bounds its mean must meet (summary and verdict), also
            the comparison's pass rule.
        tolerance: the comparison's tolerance.
        source: where the rows came from (shown under the title).
        budget: bytes the items' data may take; long values are cut to fit (the store keeps
            them whole), causes are never cut.
        comparison: ``compare(baseline, rows, ...)`` when the caller already computed it
            (``scorecore report`` does, to apply ``--min-paired`` and
            ``--require-same-scorers`` first); by default it is computed here. A scorer whose
            definition changed is compared and marked "definition changed".
        max_failures, max_failure_rate: the failure budget of the page's verdict, which is
            ``run_evals``'s rule applied to the rows (``EvalReport.verdict``), with its
            reason in one line under the title.
        calibration: the batch's scorers against human labels
            (:func:`~scorecore.evals.calibrate`): the page then has a calibration section.
        min_kappa: with ``calibration``, a gate: each scorer's κ interval must lie above it
            (:meth:`~scorecore.evals.Calibration.failed_checks`).
        labels: human labels by item id (pass/fail): the cascades section then gives each
            tier's agreement on the runs it decided (the pass mark: the scorer's threshold's
            ``min``, 0.5 without one).
        view_url: the address of a ``scorecore view`` workbench serving the batch's store
            (``http://127.0.0.1:8765``): each row of the items table then links to its run's
            page there (a plain link: no token; the reader's browser must have opened the
            workbench once). ``scorecore report`` finds a running one itself.

    Raises:
        ValueError: ``view_url`` is not an ``http(s)://`` address.

    >>> from scorecore.evals import ScoreRow
    >>> row = ScoreRow(id="1", scorer_id="s", run_id="b:1", batch_id="b", status="scored",
    ...                score=0.5, output="<script>alert(1)</script>")
    >>> page = render_report([row], batch_id="b")
    >>> "<script>alert" in page, page.count("<script")
    (False, 2)
    """
    chosen = thresholds or {}
    if baseline is not None and comparison is None:
        comparison = compare(baseline, rows, tolerance=tolerance, thresholds=chosen)
    build = ReportBuild(
        {row.scorer_id for row in rows}, thresholds=chosen, max_failures=max_failures,
        max_failure_rate=max_failure_rate, budget=budget,
        baseline={} if baseline is None else baseline_scores(baseline))
    page = io.StringIO()
    with closing(build):
        for scan in build.scans():
            scan.add(rows)
            scan.end()
        write_page(page, build, batch_id=batch_id, thresholds=chosen, source=source,
                   comparison=None if baseline is None else comparison,
                   calibration=calibration, min_kappa=min_kappa, labels=labels,
                   view_url=view_url)
    return page.getvalue()


def baseline_scores(rows: Iterable[ScoreRow]) -> dict[tuple[str, str], float | None]:
    """A baseline batch's score per (scorer id, item id), for each item's delta (``None``:
    not scored; the last of an item's trials)."""
    return {(r.scorer_id, row_item_id(r)): r.score if r.status == "scored" else None
            for r in rows}


def write_page(
    out: IO[str],
    build: ReportBuild,
    *,
    batch_id: str,
    thresholds: Mapping[str, Threshold],
    source: str = "",
    comparison: Comparison | None = None,
    calibration: Calibration | None = None,
    min_kappa: float | None = None,
    labels: Mapping[str, LabelValue] | None = None,
    view_url: str | None = None,
    without_label: tuple[int, Sequence[str]] | None = None,
) -> None:
    """Write the page of a batch whose scans ``build`` has read (see :func:`render_report`
    for the arguments) into ``out``, its items' data a chunk at a time; ``without_label``: the
    items without a label, counted, when ``calibration`` was computed from the labelled items'
    rows only (:class:`~scorecore_adapters.report._calibration.LabelledRows`)."""
    digest = build.digest
    assert digest is not None  # noqa: S101 - after the scans
    marks = {sid: t.min for sid, t in thresholds.items() if t.min is not None}
    stats = digest.stats()
    gates = _gates(digest.verdict(), calibration, min_kappa, comparison)
    limit = build.limit
    cut = (f" Values longer than {limit:,} characters are cut here (…(+N) says how many "
           "characters were left out), except for items with a failed or not-scorable run; "
           "the store keeps them whole (scorecore show BATCH --json)."
           if limit is not None else "")
    delta_head = "<th class=num>Δ</th>" if comparison is not None else ""
    view_head, view_script = _view_links(view_url, batch_id)
    out.write(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>scorecore report: {esc(batch_id)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>Batch {esc(batch_id)} {_verdict(gates)}</h1>{_verdict_reason(gates)}"
        f"{_gate_list(gates)}{caveats(calibration)}"
        f'<p class="muted">{digest.items} item(s), {digest.rows} row(s), {len(stats)} '
        f"scorer(s){' from ' + esc(source) if source else ''}.{cut}</p></header>"
        "<noscript>The item explorer needs JavaScript; the tables above it do not.</noscript>"
        f"<h2>Summary</h2>{_summary(stats)}"
        f"<h2>Score distributions</h2>{_charts(stats)}"
        f"{_baseline(comparison)}{calibration_section(calibration, without_label=without_label)}"
        f"{trust_sections(digest, labels=labels, thresholds=marks)}"
        f"<h2>Failures</h2>{_failures(digest)}"
        f"<h2>Not scorable</h2>{_not_scorable(digest)}"
        '<h2>Items</h2><div id="controls"><label>scorer <select id="f-scorer">'
        '<option value="">all</option></select></label><label>status <select id="f-status">'
        '<option value="">all</option><option>scored</option><option>not_scorable</option>'
        '<option>failed</option></select></label><input id="f-search" type="search" '
        'placeholder="search ids, reasons, causes, outputs"><button id="prev">previous'
        '</button><button id="next">next</button><span id="items-info" class="muted"></span>'
        '</div><table id="items"><thead><tr><th>item</th><th>scorer</th><th>status</th>'
        f'<th class=num>score</th>{delta_head}<th>reason / cause</th>{view_head}'
        "</tr></thead>"
        '<tbody id="items-body"></tbody></table><section id="drill" hidden></section>'
        '<script type="application/octet-stream" id="report-data" '
        'data-encoding="gzip+base64">'
    )
    build.write_data(out)
    out.write(f"</script><script>{JS}</script>{view_script}</body></html>\n")
