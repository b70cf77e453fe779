"""Inline SVG charts: a score histogram and a status bar per scorer (no script, no library)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from scorecore_adapters.report._text import esc

BINS: Final = 20
_WIDTH: Final = 320
_HEIGHT: Final = 120
_PAD: Final = 18


def bounds(low: float | None, high: float | None) -> tuple[float, float]:
    """The range a histogram shows for scores from ``low`` to ``high`` (``None``: no score)."""
    # Scores are usually in [0, 1]; show that range unless the scorer leaves it.
    return min(0.0 if low is None else low, 0.0), max(1.0 if high is None else high, 1.0)


def _edge(value: float) -> str:
    # Two decimals for scores as they usually are; 1e+308, not 309 digits, for huge ones.
    return f"{value:.2f}" if abs(value) < 1e15 else f"{value:.3g}"


def bin_of(score: float, low: float, high: float, bins: int = BINS) -> int:
    """The bin of ``score`` among ``bins`` equal bins from ``low`` to ``high`` (last inclusive)."""
    # In halves: the span of scores near -1.8e308 and 1.8e308 is beyond the largest float.
    span = high / 2 - low / 2
    index = int((score / 2 - low / 2) / span * bins) if span > 0 else 0
    return min(max(index, 0), bins - 1)


def histogram_svg(scorer_id: str, low: float, high: float, counts: Sequence[int]) -> str:
    """A histogram as an inline SVG element (each bar titled with its count): ``counts`` scores
    in equal bins from ``low`` to ``high`` (:func:`bin_of`)."""
    tallest = max(counts, default=0) or 1
    plot_w = _WIDTH - 2 * _PAD
    plot_h = _HEIGHT - 2 * _PAD
    bar_w = plot_w / len(counts)
    half_step = (high / 2 - low / 2) / len(counts)  # halves, as in bin_of
    bars = []
    for index, count in enumerate(counts):
        h = plot_h * count / tallest
        x = _PAD + index * bar_w
        y = _PAD + plot_h - h
        a, b = (min(2 * (low / 2 + i * half_step), high) for i in (index, index + 1))
        bars.append(
            f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar_w - 1:.1f}" '
            f'height="{h:.1f}"><title>{_edge(a)} to {_edge(b)}: {count}</title></rect>'
        )
    axis_y = _PAD + plot_h
    return (
        f'<svg class="chart histogram" role="img" viewBox="0 0 {_WIDTH} {_HEIGHT}" '
        f'width="{_WIDTH}" height="{_HEIGHT}" data-scorer="{esc(scorer_id)}" '
        f'aria-label="score distribution of {esc(scorer_id)}">'
        f"<title>score distribution of {esc(scorer_id)} ({sum(counts)} scores)</title>"
        f'<line class="axis" x1="{_PAD}" y1="{axis_y}" x2="{_WIDTH - _PAD}" y2="{axis_y}"/>'
        + "".join(bars)
        + f'<text x="{_PAD}" y="{_HEIGHT - 3}">{low:g}</text>'
        f'<text x="{_WIDTH - _PAD}" y="{_HEIGHT - 3}" text-anchor="end">{high:g}</text>'
        f'<text x="{_PAD}" y="12">max {tallest if any(counts) else 0}</text>'
        "</svg>"
    )


def status_svg(scored: int, not_scorable: int, failed: int) -> str:
    """One stacked bar: scored, not scorable and failed shares."""
    total = scored + not_scorable + failed
    parts = []
    x = 0.0
    for name, count in (("scored", scored), ("not-scorable", not_scorable), ("failed", failed)):
        width = _WIDTH * count / total if total else 0.0
        parts.append(f'<rect class="st-{name}" x="{x:.1f}" y="0" width="{width:.1f}" '
                     f'height="14"><title>{name}: {count}</title></rect>')
        x += width
    return (f'<svg class="chart status" role="img" viewBox="0 0 {_WIDTH} 14" width="{_WIDTH}" '
            f'height="14" aria-label="statuses">' + "".join(parts) + "</svg>")
