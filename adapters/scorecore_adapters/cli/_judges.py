"""``scorecore eval``'s judge line: which judge models answered, how often, tokens and tokens/s.

Counted from the judge executions of the runs this command made (stored rows read back on
``--resume`` carry none): per provider and model, the calls made to the model, the tokens of
those calls, and the tokens per second over the batch's duration. A reply read from the judge
cache made no call and counts no tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO, final

import attrs

from scorecore import JudgeExecution
from scorecore.evals import ItemResult

__all__ = ["JudgeTally"]


@final
@attrs.define
class _Counts:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def _executions(result: ItemResult) -> Iterable[JudgeExecution]:
    for outcome in result.outcomes:
        if outcome.resumed:
            continue
        score = outcome.result
        if score is None and outcome.run_error is not None:
            score = outcome.run_error.partial
        if score is None:
            continue
        for executions in score.judge.values():
            yield from executions


@final
class JudgeTally:
    """Judge calls and tokens per ``(provider, model_id)``, added item by item."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], _Counts] = {}

    def add(self, result: ItemResult) -> None:
        """Count the judge executions of one item's runs."""
        for execution in _executions(result):
            if not execution.model_call_count:
                continue  # answered from the cache (or refused by the budget): no call made
            counts = self._counts.setdefault((execution.provider, execution.model_id), _Counts())
            counts.calls += execution.model_call_count
            usage = execution.usage
            if usage is not None:
                counts.input_tokens += usage.input_tokens or 0
                counts.output_tokens += usage.output_tokens or 0

    def lines(self, duration: float) -> list[str]:
        """One line per judge model: calls, tokens, tokens per second over ``duration``."""
        out = []
        for (provider, model_id), c in sorted(self._counts.items()):
            line = (f"judge model {provider} {model_id}: {c.calls} call(s), "
                    f"{c.input_tokens + c.output_tokens:,} tokens ({c.input_tokens:,} in, "
                    f"{c.output_tokens:,} out)")
            if duration > 0 and c.output_tokens:
                line += (f"; {c.output_tokens / duration:,.1f} output tokens/s, "
                         f"{(c.input_tokens + c.output_tokens) / duration:,.1f} tokens/s "
                         f"over the batch's {duration:.1f} s")
            out.append(line)
        return out

    def print(self, duration: float, *, out: TextIO) -> None:
        """Print :meth:`lines`."""
        for line in self.lines(duration):
            print(line, file=out)
