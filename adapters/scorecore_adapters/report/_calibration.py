"""The report's calibration section: each scorer against human labels (``--labels``)."""

from __future__ import annotations

import bisect
from collections.abc import Collection, Mapping, Sequence
from typing import Final, final

from scorecore.evals import Calibration, ScoreRow
from scorecore.evals.results import (
    CalibrationStatistic,
    ConfusionMatrix,
    Estimate,
    ScorerCalibration,
)
from scorecore.evals.store import row_item_id
from scorecore_adapters.report._text import counted, esc, listed, number

_LISTED: Final = 50


def _estimate(e: Estimate | None) -> str:
    if e is None:
        return "<td class=num>-</td>"
    if e.value is None:
        return f'<td class=num title="{esc(e.reason or "")}">undefined</td>'
    if e.low is None or e.high is None:
        return (f'<td class=num title="{esc(e.reason or "")}">{number(e.value)} '
                f'<span class="muted">(no interval)</span></td>')
    return (f"<td class=num>{number(e.value)} <span class=\"muted\">[{number(e.low)}, "
            f"{number(e.high)}]</span></td>")


# How each statistic is named: in text (terminals, JSON-minded readers) and in the HTML page.
_NAMES: Final[Mapping[CalibrationStatistic, tuple[str, str]]] = {
    "kappa": ("kappa", "κ"), "spearman": ("spearman", "Spearman ρ"),
    "kendall": ("kendall", "Kendall τ"), "mae": ("MAE", "MAE"),
    "accuracy": ("accuracy", "accuracy"), "precision": ("precision", "precision"),
    "recall": ("recall", "recall"),
}


def statistic_name(statistic: CalibrationStatistic, *, html: bool) -> str:
    """A statistic's short name (``kappa``, or ``κ`` on the HTML page)."""
    return _NAMES[statistic][html]


def statistic_columns(
    c: Calibration, *, html: bool
) -> list[tuple[str, CalibrationStatistic]]:
    """(header, statistic) of a calibration table's statistic columns, for its kind of labels:
    the one view the ``calibrate`` command and the HTML report both show.

    The headline κ's header says which κ it is: quadratic-weighted for grades, of pass/fail
    for continuous labels.
    """
    kappa = statistic_name("kappa", html=html)
    header = {"binary": kappa, "ordinal": f"quadratic {kappa}",
              "continuous": f"{kappa} (pass/fail)"}[c.kind]
    return [(header if s == "kappa" else statistic_name(s, html=html), s) for s in c.statistics]


def estimate_notes(
    c: Calibration, s: ScorerCalibration, *, html: bool
) -> list[tuple[str, str, str]]:
    """(name, state, reason) of each of ``s``'s estimates that is undefined or has no interval,
    in the table's order (state: ``"undefined"`` or ``"no interval"``)."""
    notes = []
    for statistic in c.statistics:
        e = s.estimate(statistic)
        if e is not None and e.reason is not None:
            state = "undefined" if e.value is None else "no interval"
            notes.append((statistic_name(statistic, html=html), state, e.reason))
    return notes


def _fitted(s: ScorerCalibration) -> str:
    f = s.fitted_threshold
    if f.threshold is None or f.kappa is None:
        return f'<td title="{esc(f.reason or "")}">-</td>'
    return (f"<td class=num>{f.threshold:g} <span class=\"muted\">(κ {f.kappa:.3f}, "
            f"fitted on these labels)</span></td>")


def _matrix(title: str, m: ConfusionMatrix) -> str:
    head = "".join(f"<th class=num>{esc(c)}</th>" for c in m.classes)
    body = "".join(
        f"<tr><th>{esc(label)}</th>" + "".join(f"<td class=num>{v}</td>" for v in row) + "</tr>"
        for label, row in zip(m.classes, m.counts, strict=True)
    )
    return (f'<table class="confusion"><caption>{esc(title)}</caption><thead><tr>'
            f"<th>label \\ scorer</th>{head}</tr></thead><tbody>{body}</tbody></table>")


def _ids(ids: Sequence[str]) -> str:
    return listed(ids, _LISTED)


def _notes(c: Calibration, s: ScorerCalibration) -> str:
    notes = [f"{name} {state}: {esc(reason)}"
             for name, state, reason in estimate_notes(c, s, html=True)]
    if s.not_scored:
        notes.append("labelled items not scored (left out): "
                     + _ids([f"{i} ({status})" for i, status in s.not_scored.items()]))
    if s.without_row:
        notes.append(f"labelled items without a row: {_ids(s.without_row)}")
    return "".join(f"<p class=\"muted\">{note}</p>" for note in notes)


def _caveat(s: ScorerCalibration) -> str:
    caveat = s.caveat()
    if caveat is None:
        return ""
    return f'<p class="caveat">{esc(s.scorer_id)}: {esc(caveat)}</p>'


def caveats(c: Calibration | None) -> str:
    """The caveat of each scorer whose agreement with the labels cannot be told from chance,
    for the page's header (nothing without labels or caveats)."""
    if c is None:
        return ""
    return "".join(f'<p class="caveat" id="caveat-{i}">{esc(s.scorer_id)}: '
                   f"{esc(caveat)}</p>"
                   for i, s in enumerate(c.scorers) if (caveat := s.caveat()) is not None)


@final
class LabelledRows:
    """What a calibration needs of a batch, taken from its pages as the report reads them:
    the rows of the labelled items (usually few), the first row of each scorer, and the
    smallest ids of the items without a label (the page lists only those).

    Memory grows with the labelled items, not the batch: the calibration of
    :meth:`rows` is that of the whole batch, but for :attr:`Calibration.rows_without_labels`,
    which :meth:`without_label` gives as a count and the ids the page lists.

    >>> from scorecore.evals import ScoreRow
    >>> found = LabelledRows({"a"})
    >>> found.add([ScoreRow(id=f"{i}/s", scorer_id="s", run_id=f"b:{i}", batch_id="b",
    ...                     status="scored", score=1.0) for i in "cab"])
    >>> [row_item_id(r) for r in found.rows()], found.without_label(items=3)
    (['a'], (2, ('b', 'c')))
    """

    def __init__(self, labels: Collection[str]) -> None:
        self._labels = labels
        self._rows: list[ScoreRow] = []
        self._labelled: set[str] = set()
        self._first: dict[str, ScoreRow] = {}
        self._unlabelled: list[str] = []  # sorted, distinct, at most _LISTED

    def add(self, page: Sequence[ScoreRow]) -> None:
        """Take the batch's next rows (in the store's order: an item's trials in order)."""
        for row in page:
            key = row_item_id(row)
            if key in self._labels:
                self._rows.append(row)
                self._labelled.add(key)
            else:
                self._note(key)
            self._first.setdefault(row.scorer_id, row)

    def _note(self, key: str) -> None:
        smallest = self._unlabelled
        if len(smallest) == _LISTED and key >= smallest[-1]:
            return
        at = bisect.bisect_left(smallest, key)
        if at < len(smallest) and smallest[at] == key:
            return
        smallest.insert(at, key)
        del smallest[_LISTED:]

    def rows(self) -> list[ScoreRow]:
        """The rows to calibrate: the labelled items', and the first row of each scorer with
        none of them (an unlabelled item's: it counts nowhere, but the scorer is calibrated
        as over the whole batch, on no item)."""
        scorers = {row.scorer_id for row in self._rows}
        return [*self._rows, *(row for sid, row in self._first.items() if sid not in scorers)]

    def without_label(self, *, items: int) -> tuple[int, tuple[str, ...]]:
        """How many of the batch's ``items`` (distinct item ids) have no label, and the
        smallest of their ids (as many as the page lists)."""
        return items - len(self._labelled), tuple(self._unlabelled)


def calibration_section(
    c: Calibration | None, *, without_label: tuple[int, Sequence[str]] | None = None
) -> str:
    """The section, or nothing without labels; ``without_label``: the count and the first
    ids of the items without a label (:meth:`LabelledRows.without_label`), when ``c`` was
    computed from the labelled items' rows only."""
    if c is None:
        return ""
    columns = statistic_columns(c, html=True)
    head = "".join(f"<th class=num>{esc(h)}</th>" for h, _ in columns)
    rows = "".join(
        f"<tr><td>{esc(s.scorer_id)}</td><td class=num>{s.n}</td>"
        f"<td class=num>≥ {s.threshold:g}</td>"
        + "".join(_estimate(s.estimate(stat)) for _, stat in columns) + _fitted(s) + "</tr>"
        for s in c.scorers
    )
    details = "".join(
        f"<h3>{esc(s.scorer_id)}</h3><div class=\"confusions\" "
        "style=\"display:flex;gap:2em;flex-wrap:wrap\">"
        + _matrix(f"pass/fail at ≥ {s.threshold:g}", s.confusion)
        + (_matrix("grades (score rounded to the nearest grade)", s.grades)
           if s.grades is not None else "")
        + "</div>" + _caveat(s) + _notes(c, s)
        for s in c.scorers
    )
    sides = [*counted("labelled item(s) without rows", c.labels_without_rows, _LISTED),
             *(counted("item(s) without a label", c.rows_without_labels, _LISTED)
               if without_label is None else
               counted("item(s) without a label", without_label[1], _LISTED,
                       total=without_label[0]))]
    scale = f", scale {c.scale[0]:g}..{c.scale[1]:g}" if c.scale is not None else ""
    return (
        '<section id="calibration"><h2>Calibration against human labels</h2>'
        f'<p class="muted">{c.labels} label(s), {esc(c.kind)}{scale}; items paired by id (an '
        f"item's trials at their mean); {100 * c.confidence:g}% seeded bootstrap intervals "
        f"({c.resamples} resamples, seed {c.seed}). An item passes when its score is at least "
        "the threshold. The fitted threshold maximises κ on these same labels: its κ is "
        "optimistic, check it on other labels before relying on it.</p>"
        '<table id="calibration-table"><thead><tr><th>scorer</th><th class=num>n</th>'
        f"<th class=num>threshold</th>{head}<th class=num>fitted threshold</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>{details}"
        + "".join(f"<p>{side}</p>" for side in sides) + "</section>"
    )
