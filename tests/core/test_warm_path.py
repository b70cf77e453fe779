"""The prompt step's warm path: a cache filled by an earlier release still answers every step,
and the run reads back the same values as the run that asked the judge."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from returns.result import Success

from scorecore import (
    JudgeConfig,
    PromptStep,
    Runtime,
    ScorePromptStep,
    StepJudge,
    create_scorer,
)
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage, ModelSettings
from scorecore.judge.economics import JudgeMeter
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import virtual_runtime

pytestmark = pytest.mark.anyio

CLAIMS = {"type": "object", "required": ["claims"],
          "properties": {"claims": {"type": "array", "items": {"type": "string"}}}}
REPLIES = {
    "analyze": '{"claims": ["the answer names a city", "ünïcode ✓"]}',
    "generate_score": '{"score": 0.75}',
    "generate_reason": "Two claims, both supported.",
}


@attrs.define(eq=False)
class _Judge:
    """Answers by step; ``supports_structured_output`` says whether it takes the schema natively."""

    supports_structured_output: bool = False
    model_id: str = "pinned-judge"
    provider: str = "pinned"
    cache_identity: str | None = None
    requests: list[JudgeRequest] = attrs.field(factory=list)

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.requests.append(request)
        return Success(JudgeResponse(
            text=REPLIES[request.step], usage=JudgeUsage(input_tokens=10, output_tokens=2)))


def _scorer(judge: _Judge, **config: Any) -> Any:
    return (
        create_scorer(id="pinned", description="three prompt steps",
                      judge=JudgeConfig(model=judge, instructions="Grade it.", **config))
        .analyze(PromptStep(description="claims", output_schema=CLAIMS,
                            create_prompt=lambda c: f"Claims in: {c.run.output}"))
        .generate_score(ScorePromptStep(
            description="score", create_prompt=lambda c: f"Score: {c.run.output}",
            judge=StepJudge(model_settings=ModelSettings(temperature=0.0, seed=7,
                                                         extra={"top_k": 3}))))
        .generate_reason(PromptStep(description="why",
                                    create_prompt=lambda c: f"Why {c.score}? {c.run.output}"))
    )


def _runtime(cache: MemoryJudgeCache, trial: int) -> Runtime:
    runtime, _clock = virtual_runtime()
    return attrs.evolve(runtime, meter=JudgeMeter(cache=cache, trial=trial))


# Keys written by the release before the prompt step's warm path was reworked, per routing
# (the schema in the user message, in the system message, sent natively), trial and identity.
PINNED = {
    ("auto", False, 0, None): (
        "a279ffcb2913dc9664598d54e8a2f0fb91759384a2317f4d77933a6e6ab7054e",
        "aeb67e07cd8faabb94cbcdfdbec098fe344dddbbecaa5cd4c1bae9a8ef8e70eb",
        "418a8d2022856cb40668780d6c2eafbb0aa9f7111a1fe0cd6bb4e436f8a8ee29",
    ),
    ("system", False, 1, None): (
        "31564eea08c9eb27d48274171fe7868eb5240fc3514405bd068f83a6e2ee9530",
        "4cb15185162d93381639f526f90ca5f6ce39aaedb774e46ccb91d45605d938a0",
        "590e77b66e705155ab3b5e9fd4df214e97068a3a34e1d5a6c5d2e2f5cfe8c409",
    ),
    ("auto", True, 0, "http://h"): (
        "4c07d4f266c2e90f3f53fb1f324d1a083046521f568a66791f250f82cf82fa2a",
        "5f820f16c08a473caf1ffcf5331a3e6df8de10e218e9ea92cb2eee22b6de9861",
        "c043824abd46d56e6183cfc7b809286fc931be8c2757db4c297f1b39bcf9c37f",
    ),
    (False, False, 2, "http://h"): (
        "6c6fd0930bd5501971d73f1f5006ebc2f5d8f886ba9c75afd3f1f13b0326918e",
        "b5ab96b47c5dc2cef0d79a3485623f9620da5425159162dbe6cba05057a94e8e",
        "a6f8d6af968330346f97be77072ce19790e5c3adc06b45b28cefc81251c9c870",
    ),
}
CASES = [("auto", False, 0, None), ("system", False, 1, None), ("auto", True, 0, "http://h"),
         (False, False, 2, "http://h")]


@pytest.mark.parametrize("case", CASES, ids=str)
async def test_a_cache_filled_before_still_answers_every_step(case: Any) -> None:
    """Entries stored under the pinned keys answer all three steps without a judge call, and
    the run reads back what the run that asked the judge got."""
    injection, native, trial, identity = case
    judge = _Judge(supports_structured_output=native, cache_identity=identity)
    cache = MemoryJudgeCache()
    asked = (await _scorer(judge, json_prompt_injection=injection).run(
        input="q", output="Paris", run_id="r1", runtime=_runtime(cache, trial))).unwrap()
    assert len(judge.requests) == 3
    assert tuple(cache.entries) == PINNED[case]

    filled = MemoryJudgeCache()
    filled.entries.update(cache.entries)
    again = _Judge(supports_structured_output=native, cache_identity=identity)
    read = (await _scorer(again, json_prompt_injection=injection).run(
        input="q", output="Paris", run_id="r1", runtime=_runtime(filled, trial))).unwrap()
    assert again.requests == []
    assert (read.score, read.reason, read.analyze_step_result) == (
        asked.score, asked.reason, asked.analyze_step_result)
    assert read.analyze_prompt == asked.analyze_prompt
    for step, (execution,) in read.judge.items():
        (first,) = asked.judge[step]
        assert (execution.cache_hits, execution.cache_misses, execution.model_call_count) == (
            1, 0, 0)
        assert attrs.evolve(execution, cache_hits=0, cache_misses=1, model_call_count=1,
                            usage=first.usage) == first
