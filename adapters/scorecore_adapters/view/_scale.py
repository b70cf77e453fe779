"""What a digit key means for one scorer: a label on the scale its stored scores lie on.

Rows do not record a scorer's scale, so it is read from the batch's scores: a scorer scoring
only 0 and 1 is pass/fail (``1`` pass, ``0`` fail); one whose scores take a few values, each
seen more than once, has those verdict values (``0`` the lowest, ``1`` the next, …); any other
is continuous between its lowest and highest score (``[0, 1]`` when they lie within it), and
digit ``d`` is ``d/9`` of the way up.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final, Literal, TypeAlias, final

import attrs

__all__ = ["Scale", "scale_for", "scale_of"]

ScaleKind: TypeAlias = Literal["pass/fail", "verdicts", "continuous"]
MAX_VERDICTS: Final = 10  # one digit key each


@final
@attrs.frozen(kw_only=True)
class Scale:
    """One scorer's scale, as its digit keys label it.

    Attributes:
        kind: ``"pass/fail"``, ``"verdicts"`` or ``"continuous"``.
        values: the verdict values, lowest first (``"verdicts"``); the lowest and highest
            score (``"continuous"``); empty for pass/fail.

    >>> scale_of([0.0, 0.5, 1.0, 0.5, 1.0, 0.0]).digits()
    {'0': 0.0, '1': 0.5, '2': 1.0}
    >>> scale_of([0.13, 0.9, 0.42]).digits()["9"], scale_of([1.0, 0.0]).digits()
    (1.0, {'1': True, '0': False})
    """

    kind: ScaleKind
    values: tuple[float, ...] = ()

    def digits(self) -> dict[str, bool | float]:
        """Each digit key on the scale, and the label it gives (keys off the scale are absent)."""
        if self.kind == "pass/fail":
            return {"1": True, "0": False}
        if self.kind == "verdicts":
            return {str(n): v for n, v in enumerate(self.values)}
        low, high = self.values
        return {str(d): round(low + (high - low) * d / 9, 6) for d in range(10)}

    def legend(self) -> str:
        """What the digit keys mean, in words (``"1 pass · 0 fail"``)."""
        if self.kind == "pass/fail":
            return "1 pass · 0 fail"
        return " · ".join(f"{d} = {v:g}" for d, v in self.digits().items())


def scale_of(scores: Collection[float]) -> Scale:
    """The scale ``scores`` (one scorer's, in one batch) lie on; pass/fail when there are
    none."""
    distinct = sorted(set(scores))
    return scale_for(count=len(scores), distinct=distinct)


def scale_for(*, count: int, distinct: Sequence[float], low: float | None = None,
              high: float | None = None) -> Scale:
    """The scale of ``count`` scores taking the values ``distinct`` (sorted; only needed when
    there are at most :data:`MAX_VERDICTS`: else ``low`` and ``high`` say the range)."""
    if set(distinct) <= {0.0, 1.0} and (distinct or low is None):
        return Scale(kind="pass/fail")
    if distinct and len(distinct) <= MAX_VERDICTS and count >= 2 * len(distinct):
        return Scale(kind="verdicts", values=tuple(distinct))
    low = distinct[0] if low is None else low
    high = distinct[-1] if high is None else high
    if low >= 0.0 and high <= 1.0:  # a score in [0, 1]: the whole of it
        low, high = 0.0, 1.0
    return Scale(kind="continuous", values=(low, high))
