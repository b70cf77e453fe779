"""``run_evals_sync``: :func:`~scorecore.evals.run_evals` for scripts and notebooks."""

from __future__ import annotations

from scorecore._core._sync import synchronous
from scorecore.evals._run._evals import run_evals

__all__ = ["run_evals_sync"]

run_evals_sync = synchronous(
    run_evals,
    name="run_evals_sync",
    module=__name__,
    doc="""Run :func:`run_evals` to completion in a new event loop and return its report.

    It takes exactly the arguments of :func:`run_evals`; use it where nothing is awaited yet
    (a script, a notebook without top-level ``await``, a REPL).

    Raises:
        RuntimeError: called while an event loop runs in this thread (async code, a Jupyter
            cell); the message says to ``await run_evals(...)`` instead.
        EvalConfigError: as :func:`run_evals`.
        StoreError: as :func:`run_evals`.

    >>> from scorecore import create_scorer
    >>> exact = create_scorer(id="exact", description="Exact match").generate_score(
    ...     lambda ctx: 1.0 if ctx.run.output == ctx.run.ground_truth else 0.0
    ... )
    >>> report = run_evals_sync([{"input": "2+2?", "output": "4", "ground_truth": "4"}], [exact])
    >>> report.verdict, report.scorers[0].mean
    ('passed', 1.0)
    """,
)

# The function's globals are scorecore._core._sync's, so doctest would not find its example alone.
__test__ = {"run_evals_sync": run_evals_sync.__doc__}
