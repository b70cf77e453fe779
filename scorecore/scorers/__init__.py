"""Built-in scorers: Mastra's suite, typed, and never a silent 0.

Each factory returns a :class:`~scorecore.Scorer` built with :func:`~scorecore.create_scorer`
from public API only. Text scorers take an agent run (``shape=AGENT``, the default, as in
Mastra) or plain strings (``shape=TEXT``);
LLM-judged scorers take a judge (a :class:`~scorecore.JudgeModel` or a
:class:`~scorecore.JudgeConfig`) first;
trajectory scorers take a :class:`~scorecore.agent.Trajectory`. A missing required input (no
input text, no context, no ground truth, no tool calls, no expectation …) gives
``not_scorable`` naming it. Pass/fail checks live in :mod:`scorecore.scorers.checks`.

>>> from scorecore.scorers import TEXT, textual_difference
>>> scorer = textual_difference(shape=TEXT)
>>> scorer.run_sync(input="kitten", output="sitting").unwrap().score
0.6153846153846154
"""

from scorecore.composite import MemberFailure, PanelFailed
from scorecore.scorers import checks
from scorecore.scorers._cascade import CascadeResult, cascade
from scorecore.scorers._completeness import completeness
from scorecore.scorers._details import PairwiseResult, PanelMember, PanelResult
from scorecore.scorers._keywords import keyword_coverage
from scorecore.scorers._pairwise import OnPositionBias, pairwise
from scorecore.scorers._panel import Aggregate, OnTie, panel
from scorecore.scorers._shapes import AGENT, TEXT, RunShape
from scorecore.scorers._similarity import content_similarity, textual_difference
from scorecore.scorers._tone import tone
from scorecore.scorers._tool_calls import tool_call_accuracy
from scorecore.scorers._trajectory import TrajectoryWeights, trajectory, trajectory_accuracy
from scorecore.scorers.llm.answer_relevancy import answer_relevancy
from scorecore.scorers.llm.answer_similarity import answer_similarity
from scorecore.scorers.llm.bias import bias
from scorecore.scorers.llm.context_precision import context_precision
from scorecore.scorers.llm.context_recall import context_recall
from scorecore.scorers.llm.context_relevance import context_relevance
from scorecore.scorers.llm.faithfulness import faithfulness
from scorecore.scorers.llm.hallucination import hallucination
from scorecore.scorers.llm.llm_tool_call_accuracy import llm_tool_call_accuracy
from scorecore.scorers.llm.llm_trajectory_accuracy import llm_trajectory_accuracy
from scorecore.scorers.llm.multi_turn_judge import multi_turn_judge
from scorecore.scorers.llm.noise_sensitivity import noise_sensitivity
from scorecore.scorers.llm.prompt_alignment import prompt_alignment
from scorecore.scorers.llm.rubric import RubricCriterion, rubric
from scorecore.scorers.llm.summarization import summarization
from scorecore.scorers.llm.toxicity import toxicity

__all__ = [
    "AGENT",
    "TEXT",
    "Aggregate",
    "CascadeResult",
    "MemberFailure",
    "OnPositionBias",
    "OnTie",
    "PairwiseResult",
    "PanelFailed",
    "PanelMember",
    "PanelResult",
    "RubricCriterion",
    "RunShape",
    "TrajectoryWeights",
    "answer_relevancy",
    "answer_similarity",
    "bias",
    "cascade",
    "checks",
    "completeness",
    "content_similarity",
    "context_precision",
    "context_recall",
    "context_relevance",
    "faithfulness",
    "hallucination",
    "keyword_coverage",
    "llm_tool_call_accuracy",
    "llm_trajectory_accuracy",
    "multi_turn_judge",
    "noise_sensitivity",
    "pairwise",
    "panel",
    "prompt_alignment",
    "rubric",
    "summarization",
    "textual_difference",
    "tone",
    "tool_call_accuracy",
    "toxicity",
    "trajectory",
    "trajectory_accuracy",
]
