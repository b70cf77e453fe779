"""A judge model can read the cache key of the call it is answering (batch judges journal it)."""

from __future__ import annotations

from typing import Any

import pytest

from scorecore import JudgeConfig, Runtime, ScorePromptStep, create_scorer
from scorecore.judge import JudgeRequest
from scorecore.judge.economics import JudgeMeter, cache_key, current_cache_key
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import FunctionJudge

pytestmark = pytest.mark.anyio


async def test_generate_sees_the_key_its_reply_is_cached_under() -> None:
    """Inside generate, current_cache_key() is the key the meter stores the reply under,
    trial included; outside a call it is None."""
    seen: list[tuple[JudgeRequest, str | None]] = []

    def answer(request: JudgeRequest) -> Any:
        seen.append((request, current_cache_key()))
        return {"score": 1.0}

    judge = FunctionJudge(answer)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="Grade.",
    )).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: str(c.run.output)))
    cache = MemoryJudgeCache()
    meter = JudgeMeter(cache=cache)
    for trial in (0, 1):
        result = await scorer.run(input="q", output="a",
                                  runtime=Runtime(meter=meter.for_trial(trial)))
        assert result.unwrap().score == 1.0
    assert current_cache_key() is None
    keys = [key for _, key in seen]
    assert keys == [cache_key(request, provider=judge.provider, model_id=judge.model_id,
                              trial=trial, identity=judge.cache_identity)
                    for trial, (request, _) in enumerate(seen)]
    assert set(keys) == set(cache.entries)


async def test_no_key_without_a_cache() -> None:
    """A run without a cache gives the judge no key."""
    seen: list[str | None] = []

    def answer(request: JudgeRequest) -> Any:
        del request
        seen.append(current_cache_key())
        return {"score": 1.0}

    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=FunctionJudge(answer), instructions="Grade.",
    )).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: str(c.run.output)))
    await scorer.run(input="q", output="a", runtime=Runtime(meter=JudgeMeter()))
    assert seen == [None]
