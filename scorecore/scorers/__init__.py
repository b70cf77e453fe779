"""Built-in scorers: Mastra's code-based scorers, typed, and never a silent 0.

Each factory returns a :class:`~scorecore.Scorer` built with :func:`~scorecore.create_scorer`
from public API only. Text scorers take an agent run (``type="agent"``, the default, as in
Mastra) or plain strings (``type="text"``); a missing required input (no input text, no
keywords, no output messages) gives ``not_scorable`` naming it. Pass/fail checks live in
:mod:`scorecore.scorers.checks`.

>>> import anyio
>>> from scorecore.scorers import textual_difference
>>> scorer = textual_difference(type="text")
>>> anyio.run(lambda: scorer.run(input="kitten", output="sitting")).unwrap().score
0.6153846153846154
"""

from scorecore.scorers import checks
from scorecore.scorers._completeness import completeness
from scorecore.scorers._keywords import keyword_coverage
from scorecore.scorers._similarity import content_similarity, textual_difference
from scorecore.scorers._tone import tone
from scorecore.scorers._tool_calls import tool_call_accuracy
from scorecore.scorers._trajectory import TrajectoryWeights, trajectory, trajectory_accuracy

__all__ = [
    "TrajectoryWeights",
    "checks",
    "completeness",
    "content_similarity",
    "keyword_coverage",
    "textual_difference",
    "tone",
    "tool_call_accuracy",
    "trajectory",
    "trajectory_accuracy",
]
