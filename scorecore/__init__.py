"""scorecore: strictly typed LLM-evaluation scorers.

A scorer is a pipeline ``preprocess → analyze → generate_score → generate_reason`` whose
steps are plain functions or prompt objects answered by an LLM judge.

>>> import anyio
>>> from scorecore import create_scorer
>>> exact = create_scorer(id="exact", description="Exact match").generate_score(
...     lambda ctx: 1.0 if ctx.run.output == ctx.run.ground_truth else 0.0
... )
>>> anyio.run(lambda: exact.run(input="2+2?", output="4", ground_truth="4")).unwrap().score
1.0
"""

from scorecore._core._agent import AgentInput, AgentOutput
from scorecore._core._causes import (
    BudgetExhausted,
    ExampleEcho,
    InputMismatch,
    InvalidScore,
    InvalidStepValue,
    JudgeFailed,
    JudgeOutputInvalid,
    PrepareRunFailed,
    ProcessorAborted,
    RunFailureCause,
    StepFailed,
    StepRaised,
)
from scorecore._core._config import (
    DefaultRetryBudgetWarning,
    JudgeConfig,
    PromptStep,
    ScorePromptStep,
    StepJudge,
)
from scorecore._core._errors import ScorecoreError, ScorerDefinitionError
from scorecore._core._filter import filter_run
from scorecore._core._judge import JudgeModel, ModelSettings, StepName
from scorecore._core._mastra_json import from_mastra_json, to_mastra_json
from scorecore._core._redact import redact_secrets
from scorecore._core._runtime import Clock, NewId, Runtime, Sleep, WallClock
from scorecore._core._scorer import PrepareRun, Scorer, ScorerBuilder, StepInfo, create_scorer
from scorecore._core._values import (
    CalculateScoreContext,
    JudgeExecution,
    NotScorable,
    PartialResult,
    ReasonContext,
    ScoreResult,
    ScorerRun,
    ScorerRunError,
    StepContext,
    StepResults,
    is_not_scorable,
    not_scorable,
)

__version__ = "0.1.0"
"""The installed version (PEP 440)."""

__all__ = [
    "AgentInput",
    "AgentOutput",
    "BudgetExhausted",
    "CalculateScoreContext",
    "Clock",
    "DefaultRetryBudgetWarning",
    "ExampleEcho",
    "InputMismatch",
    "InvalidScore",
    "InvalidStepValue",
    "JudgeConfig",
    "JudgeExecution",
    "JudgeFailed",
    "JudgeModel",
    "JudgeOutputInvalid",
    "ModelSettings",
    "NewId",
    "NotScorable",
    "PartialResult",
    "PrepareRun",
    "PrepareRunFailed",
    "ProcessorAborted",
    "PromptStep",
    "ReasonContext",
    "RunFailureCause",
    "Runtime",
    "ScorePromptStep",
    "ScoreResult",
    "ScorecoreError",
    "Scorer",
    "ScorerBuilder",
    "ScorerDefinitionError",
    "ScorerRun",
    "ScorerRunError",
    "Sleep",
    "StepContext",
    "StepFailed",
    "StepInfo",
    "StepJudge",
    "StepName",
    "StepRaised",
    "StepResults",
    "WallClock",
    "create_scorer",
    "filter_run",
    "from_mastra_json",
    "is_not_scorable",
    "not_scorable",
    "redact_secrets",
    "to_mastra_json",
]
