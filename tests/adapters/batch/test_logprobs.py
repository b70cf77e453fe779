"""Token log-probabilities through the batch judges: OpenAI's batch API answers Chat
Completions bodies, so it carries them (and the journal keeps them for a resumed process);
Anthropic's has none, so a probability step is not scorable or falls back to samples."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters._guard import allow_model_requests
from scorecore_adapters.batch import AnthropicBatchModel, BatchJournal, OpenAIBatchModel
from scorecore_adapters.batch.fakes import FakeAnthropicBatchAPI, FakeOpenAIBatchAPI
from scorecore_adapters.testing import VirtualClock

pytestmark = pytest.mark.anyio

FIVE = {str(i): (i - 1) / 4 for i in range(1, 6)}


@pytest.fixture(autouse=True)
def _allow() -> Iterator[None]:
    with allow_model_requests():
        yield


def four(_body: Mapping[str, Any]) -> str:
    return json.dumps({"score": 4})


def four_with_doubt(reply: str) -> list[dict[str, Any]]:
    """The reply's tokens: its "4" 60 % sure, "5" the runner-up."""
    head, tail = reply.split("4")
    return [{"token": head, "logprob": 0.0, "top_logprobs": []},
            {"token": "4", "logprob": math.log(0.6), "top_logprobs": [
                {"token": "4", "logprob": math.log(0.6)},
                {"token": "5", "logprob": math.log(0.4)}]},
            {"token": tail, "logprob": 0.0, "top_logprobs": []}]


def _judge(cls: Any, fake: Any, clock: VirtualClock, journal: BatchJournal) -> Any:
    return cls("judge-model", journal=journal, client=fake.client(), api_key="sk-test",
               clock=clock, sleep=clock.sleep, max_batch_size=1, max_wait=1.0,
               poll_interval=60.0)


def _scorer(judge: Any, **step: Any) -> Any:
    return create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="Grade.")).generate_score(ScorePromptStep(
            description="rate", create_prompt=lambda ctx: "Rate 1-5",
            score_from="probabilities", verdicts=FIVE, **step))


async def test_the_openai_batch_judge_asks_for_and_carries_logprobs(tmp_path: Path) -> None:
    """A probability step through OpenAIBatchModel: the batch line's body asks for
    log-probabilities and the score is the weighted verdict."""
    clock = VirtualClock()
    fake = FakeOpenAIBatchAPI(four, clock=clock)
    fake.logprobs = four_with_doubt
    with BatchJournal(tmp_path / "j.db") as journal:
        judge = _judge(OpenAIBatchModel, fake, clock, journal)
        result = (await _scorer(judge).run(input="q", output="a")).unwrap()
    assert result.score == pytest.approx(0.6 * 0.75 + 0.4 * 1.0)
    assert result.confidence == pytest.approx(0.6)
    ((_, body),) = next(iter(fake.batches.values())).lines
    assert (body["logprobs"], body["top_logprobs"]) == (True, 5)


async def test_a_resumed_process_reads_the_logprobs_from_the_journal(tmp_path: Path) -> None:
    """A second process asking the same request gets the journal's answer with the same
    log-probabilities, and nothing is submitted again."""
    clock = VirtualClock()
    fake = FakeOpenAIBatchAPI(four, clock=clock)
    fake.logprobs = four_with_doubt
    request = JudgeRequest(messages=(JudgeMessage(role="user", content="Rate 1-5"),),
                           top_logprobs=5)
    answers = []
    for _process in range(2):
        with BatchJournal(tmp_path / "j.db") as journal:
            judge = _judge(OpenAIBatchModel, fake, clock, journal)
            answers.append((await judge.generate(request)).unwrap())
    assert answers[0].logprobs is not None
    assert answers[1].logprobs == answers[0].logprobs
    assert len(fake.submitted) == 1


async def test_the_anthropic_batch_judge_has_none_so_the_step_says_so_or_samples(
    tmp_path: Path
) -> None:
    """Anthropic's batch API gives no log-probabilities: not scorable (no_logprobs) unless
    the step falls back to samples."""
    clock = VirtualClock()
    fake = FakeAnthropicBatchAPI(four, clock=clock)
    with BatchJournal(tmp_path / "j.db") as journal:
        judge = _judge(AnthropicBatchModel, fake, clock, journal)
        bare = (await _scorer(judge).run(input="q", output="a")).unwrap()
        sampled = (await _scorer(judge, fallback_samples=2).run(input="q", output="b")
                   ).unwrap()
    assert bare.not_scorable is not None
    assert bare.not_scorable.kind == "no_logprobs"
    assert (sampled.score, sampled.confidence) == (0.75, 1.0)
    assert len(sampled.judge["generate_score"]) == 2

