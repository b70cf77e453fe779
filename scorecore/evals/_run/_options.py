"""Checking ``run_evals``'s arguments: :class:`EvalConfigError`, raised before any item runs."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable, Mapping, Sequence
from typing import Any

from scorecore._core._errors import ScorecoreError
from scorecore._core._reprs import short_repr
from scorecore._core._scorer import Scorer
from scorecore.evals._checks import is_finite_number
from scorecore.evals._persistence._port import ScoreStore
from scorecore.evals._report._values import Threshold
from scorecore.validators import check_fraction, is_int

__all__ = ["EvalConfigError", "check_scorers", "check_thresholds"]


class EvalConfigError(ScorecoreError, ValueError):
    """``run_evals`` was called wrongly (raised before any item runs).

    Attributes:
        field: the offending argument, e.g. ``"thresholds"``.
        value: the offending value.
    """

    def __init__(self, message: str, *, field: str, value: object = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


def check_concurrency(owner: str, value: object) -> int:
    """``value`` if it is an int >= 1 (the most items in flight at once)."""
    if not is_int(value) or value < 1:
        raise EvalConfigError(
            f"{owner}: concurrency must be an int >= 1, got {short_repr(value)}",
            field="concurrency", value=value,
        )
    return value


def check_arguments(
    *,
    data: object,
    target: object,
    batch_id: object,
    max_failures: object,
    resume: bool,
    max_failure_rate: object = None,
    store: ScoreStore | None,
) -> None:
    """Check ``run_evals``'s other arguments (see :func:`run_evals` for each)."""
    if isinstance(data, str | bytes | Mapping) or not isinstance(data, Iterable | AsyncIterable):
        raise EvalConfigError(
            f"run_evals: data must be an iterable or async iterable of items, "
            f"got {short_repr(data)}", field="data", value=data,
        )
    if target is not None and not callable(target):
        raise EvalConfigError(f"run_evals: target must be callable, got {short_repr(target)}",
                              field="target", value=target)
    if batch_id is not None and (not isinstance(batch_id, str) or not batch_id):
        raise EvalConfigError(
            f"run_evals: batch_id must be a non-empty str, got {short_repr(batch_id)}",
            field="batch_id", value=batch_id,
        )
    if isinstance(batch_id, str) and (":" in batch_id or "/" in batch_id):
        # Run ids are ``{batch}:{item}`` and trials add ``/trial-N``: either character would
        # let one batch's rows pass for another's.
        raise EvalConfigError(
            f"run_evals: batch_id must not contain ':' or '/' (run ids are "
            f"batch:item, trials batch/trial-N:item), got {short_repr(batch_id)}",
            field="batch_id", value=batch_id,
        )
    if max_failures is not None and (not is_int(max_failures) or max_failures < 0):
        raise EvalConfigError(
            f"run_evals: max_failures must be an int >= 0 or None, "
            f"got {short_repr(max_failures)}",
            field="max_failures", value=max_failures,
        )
    if max_failure_rate is not None and (
        not is_finite_number(max_failure_rate) or not 0 <= max_failure_rate <= 1
    ):
        raise EvalConfigError(
            f"run_evals: max_failure_rate must be a number in [0, 1] or None, "
            f"got {short_repr(max_failure_rate)}",
            field="max_failure_rate", value=max_failure_rate,
        )
    if resume and (store is None or batch_id is None):
        raise EvalConfigError(
            "run_evals: resume=True needs the store and the batch_id of the batch to resume",
            field="resume", value=resume,
        )


def check_scorers(scorers: object, gates: object) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """The scorers to run (gates given as scorers added) and the gate ids, checked as by run_evals.

    Raises:
        EvalConfigError: not a list of scorers, a gate naming no scorer, two scorers sharing an
            id, or no scorer at all.
    """
    if isinstance(scorers, Scorer) or not isinstance(scorers, Iterable) or isinstance(
        scorers, str | bytes | Mapping
    ):
        raise EvalConfigError(
            f"run_evals: scorers must be a list of scorers, got {short_repr(scorers)}"
            + (" (wrap a single scorer in a list)" if isinstance(scorers, Scorer) else ""),
            field="scorers", value=scorers,
        )
    chosen: list[Any] = []
    for scorer in scorers:
        if not isinstance(getattr(scorer, "id", None), str) or not callable(
            getattr(scorer, "run", None)
        ):
            raise EvalConfigError(
                f"run_evals: every scorer needs an 'id' and a 'run' method, "
                f"got {short_repr(scorer)}",
                field="scorers", value=scorer,
            )
        chosen.append(scorer)
    gate_ids: list[str] = []
    if gates is not None:
        if isinstance(gates, str | bytes | Mapping) or not isinstance(gates, Iterable):
            raise EvalConfigError(
                f"run_evals: gates must be a list of scorer ids or scorers, "
                f"got {short_repr(gates)}",
                field="gates", value=gates,
            )
        for gate in gates:
            if isinstance(gate, str):
                gate_ids.append(gate)
            elif isinstance(getattr(gate, "id", None), str) and callable(
                getattr(gate, "run", None)
            ):
                gate_ids.append(gate.id)
                if all(s is not gate for s in chosen) and all(s.id != gate.id for s in chosen):
                    chosen.append(gate)
            else:
                raise EvalConfigError(
                    f"run_evals: a gate must be a scorer id or a scorer, got {short_repr(gate)}",
                    field="gates", value=gate,
                )
    if not chosen:
        raise EvalConfigError("run_evals needs at least one scorer or gate", field="scorers",
                              value=scorers)
    seen: set[str] = set()
    for scorer in chosen:
        if scorer.id in seen:
            raise EvalConfigError(
                f"run_evals: two scorers share the id {scorer.id!r}; ids must be unique",
                field="scorers", value=scorer.id,
            )
        seen.add(scorer.id)
    for gate_id in gate_ids:
        if gate_id not in seen:
            raise EvalConfigError(
                f"run_evals: gate {gate_id!r} is not one of the scorers "
                f"({', '.join(sorted(seen))})", field="gates", value=gate_id,
            )
    return tuple(chosen), tuple(dict.fromkeys(gate_ids))


def check_thresholds(thresholds: object, ids: Sequence[str]) -> dict[str, Threshold]:
    """``run_evals``'s ``thresholds`` for the scorers ``ids`` (a number means a minimum).

    Raises:
        EvalConfigError: not a mapping, an unknown scorer id, or a bound outside [0, 1].
    """
    if thresholds is None:
        return {}
    if not isinstance(thresholds, Mapping):
        raise EvalConfigError(
            f"run_evals: thresholds must map scorer ids to a number or Threshold, "
            f"got {short_repr(thresholds)}", field="thresholds", value=thresholds,
        )
    out: dict[str, Threshold] = {}
    for key, value in thresholds.items():
        if key not in ids:
            raise EvalConfigError(
                f"run_evals: threshold for unknown scorer {key!r} "
                f"(scorers: {', '.join(ids)})", field="thresholds", value=key,
            )
        if isinstance(value, Threshold):
            out[key] = value
            continue
        try:
            bound = None if value is None else check_fraction(f"threshold for {key!r}", value)
        except (TypeError, ValueError) as exc:
            raise EvalConfigError(f"run_evals: {exc}", field="thresholds", value=value) from None
        if bound is None:
            raise EvalConfigError(
                f"run_evals: threshold for {key!r} must be a number in [0, 1] or a Threshold, "
                f"got None", field="thresholds", value=value,
            )
        out[key] = Threshold(min=bound)
    return out


async def check_batch(store: ScoreStore, batch_id: str, *, resume: bool) -> None:
    """Refuse to mix a new dataset into a stored batch, or to resume a batch never stored."""
    exists = await store.has_batch(batch_id)
    if exists and not resume:
        raise EvalConfigError(
            f"run_evals: batch {short_repr(batch_id)} already has rows in the store; pass "
            f"resume=True to continue it, or choose a new batch_id",
            field="batch_id", value=batch_id,
        )
    if resume and not exists:
        raise EvalConfigError(
            f"run_evals: cannot resume batch {short_repr(batch_id)}: the store holds no rows "
            f"for it (start it with resume=False)",
            field="resume", value=resume,
        )
