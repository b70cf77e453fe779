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

from scorecore._agent import (
    AgentInput,
    AgentMessage,
    AgentOutput,
    GenericPart,
    MessageContent,
    MessagePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)
from scorecore._causes import (
    InputMismatch,
    InvalidScore,
    InvalidStepValue,
    JudgeFailed,
    JudgeOutputInvalid,
    PrepareRunFailed,
    ProcessorAborted,
    RunFailureCause,
    StepRaised,
)
from scorecore._config import (
    DefaultRetryBudgetWarning,
    JudgeConfig,
    PromptStep,
    ScorePromptStep,
    StepJudge,
)
from scorecore._convert import converter, from_mastra_json, to_mastra_json
from scorecore._errors import ScorecoreError, ScorerDefinitionError, ScorerRunError
from scorecore._filter import filter_run
from scorecore._judge import (
    Abort,
    ErrorProcessor,
    InputProcessor,
    JsonPromptInjection,
    JudgeError,
    JudgeErrorKind,
    JudgeMessage,
    JudgeModel,
    JudgeRequest,
    JudgeResponse,
    JudgeUsage,
    ModelSettings,
    OutputProcessor,
    Retry,
    StepName,
)
from scorecore._runtime import Clock, NewId, Runtime, Sleep
from scorecore._scorer import PrepareRun, Scorer, ScorerBuilder, StepInfo, create_scorer
from scorecore._values import (
    CalculateScoreContext,
    JudgeExecution,
    NotScorable,
    PartialResult,
    ReasonContext,
    ScoreResult,
    ScorerRun,
    StepContext,
    StepResults,
    is_not_scorable,
    not_scorable,
)

__all__ = [
    "Abort",
    "AgentInput",
    "AgentMessage",
    "AgentOutput",
    "CalculateScoreContext",
    "Clock",
    "DefaultRetryBudgetWarning",
    "ErrorProcessor",
    "GenericPart",
    "InputMismatch",
    "InputProcessor",
    "InvalidScore",
    "InvalidStepValue",
    "JsonPromptInjection",
    "JudgeConfig",
    "JudgeError",
    "JudgeErrorKind",
    "JudgeExecution",
    "JudgeFailed",
    "JudgeMessage",
    "JudgeModel",
    "JudgeOutputInvalid",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeUsage",
    "MessageContent",
    "MessagePart",
    "ModelSettings",
    "NewId",
    "NotScorable",
    "OutputProcessor",
    "PartialResult",
    "PrepareRun",
    "PrepareRunFailed",
    "ProcessorAborted",
    "PromptStep",
    "ReasonContext",
    "ReasoningPart",
    "Retry",
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
    "StepInfo",
    "StepJudge",
    "StepName",
    "StepRaised",
    "StepResults",
    "SystemMessage",
    "TextPart",
    "ToolInvocation",
    "ToolInvocationPart",
    "converter",
    "create_scorer",
    "filter_run",
    "from_mastra_json",
    "is_not_scorable",
    "not_scorable",
    "to_mastra_json",
]
