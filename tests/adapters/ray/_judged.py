"""A judge scorer whose judge appends a line to a file per call, for the Ray cache tests.

Actors are other processes: the file counts the judge calls every actor made. Actors build the
scorers with ``functools.partial(scorers, path)`` (a picklable factory), so this is module-level.
"""

from __future__ import annotations

from typing import Any

from returns.result import Success

from scorecore import JudgeConfig, ModelSettings, ScorePromptStep, Scorer, create_scorer
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import Pricing

MODEL = "ray-logging-judge"
PRICING = Pricing.from_mapping({MODEL: {"input": 0.15, "output": 0.6}})


class LoggingJudge:
    """Answers a score from the prompt's length; each call appends a line to ``log``."""

    model_id = MODEL
    provider = "test"
    supports_structured_output = False

    def __init__(self, log: str) -> None:
        self._log = log

    async def generate(self, request: JudgeRequest, /) -> Any:
        with open(self._log, "a", encoding="utf-8") as log:  # noqa: ASYNC230 - a test log line
            log.write("call\n")
        text = request.messages[-1].content
        return Success(JudgeResponse(
            text=f'{{"score": {len(text) % 10 / 10}}}',
            usage=JudgeUsage(input_tokens=100 + len(text), output_tokens=7 * (len(text) % 5 + 1)),
        ))


def scorers(log: str) -> list[Scorer[Any, Any]]:
    """A judge scorer asking :class:`LoggingJudge` and a code scorer (no judge)."""
    graded = create_scorer(id="graded", description="Graded by a judge", judge=JudgeConfig(
        model=LoggingJudge(log), instructions="Grade the answer.",
        model_settings=ModelSettings(max_output_tokens=100),
    )).generate_score(ScorePromptStep(description="grade",
                                      create_prompt=lambda c: f"Rate: {c.run.output}"))
    size = create_scorer(id="size", description="Output size").generate_score(
        lambda c: min(1.0, len(str(c.run.output)) / 40))
    return [graded, size]


def items(n: int, salt: str) -> list[dict[str, Any]]:
    """``n`` items with distinct answers (``salt`` keeps them apart from other tests' in a
    shared cache), and two repeating an earlier answer (a cache hit within the run)."""
    out = [{"id": f"q{i}", "input": f"question {i}", "output": f"{salt} answer {i}"}
           for i in range(n)]
    out += [{"id": f"again{i}", "input": "again", "output": f"{salt} answer {i}"}
            for i in range(2)]
    return out


def calls(log: str) -> int:
    """How many judge calls were logged."""
    try:
        with open(log, encoding="utf-8") as file:
            return len(file.read().splitlines())
    except FileNotFoundError:
        return 0
