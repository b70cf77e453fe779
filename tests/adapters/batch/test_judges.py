"""Batch judges against the protocol fakes: collection, outcomes, expiry, refusal, resumption."""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from returns.result import Failure, Result, Success

from scorecore import JudgeConfig, Runtime, ScorePromptStep, create_scorer
from scorecore.judge import JudgeError, JudgeMessage, JudgeRequest, JudgeResponse
from scorecore.judge.economics import JudgeMeter
from scorecore_adapters._guard import allow_model_requests
from scorecore_adapters.batch import (
    AnthropicBatchModel,
    BatchJournal,
    BatchJournalWarning,
    OpenAIBatchModel,
)
from scorecore_adapters.batch.fakes import (
    FakeAnthropicBatchAPI,
    FakeOpenAIBatchAPI,
    FakeReply,
    SimulatedKill,
)
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import VirtualClock

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"],
}
Judge = OpenAIBatchModel | AnthropicBatchModel
Fake = FakeOpenAIBatchAPI | FakeAnthropicBatchAPI


@pytest.fixture(autouse=True)
def _allow() -> Any:
    with allow_model_requests():
        yield


# Every journal a test opens (one per simulated process), closed when the test ends: a judge
# a test drops stands for a killed process, whose connection the OS would close.
_JOURNALS: list[BatchJournal] = []


@pytest.fixture(autouse=True)
def _close_journals() -> Any:
    yield
    while _JOURNALS:
        _JOURNALS.pop().close()


def request(n: int) -> JudgeRequest:
    return JudgeRequest(
        messages=(JudgeMessage(role="system", content="Grade it."),
                  JudgeMessage(role="user", content=f"item {n}")),
        output_schema=SCHEMA, native_schema=True,
    )


def item_of(body: Mapping[str, Any]) -> int:
    """The item number a request body asks about (either provider's shape)."""
    text = json.dumps(body["messages"])
    return int(text.split("item ")[1].split('"')[0].split("\\")[0])


def scores(body: Mapping[str, Any]) -> FakeReply:
    return json.dumps({"score": item_of(body) / 10})


class World:
    """One provider's fake and a virtual clock that outlive the judge processes."""

    def __init__(self, provider: str, tmp_path: Path,
                 answer: Callable[[Mapping[str, Any]], FakeReply] = scores) -> None:
        self.provider = provider
        self.clock = VirtualClock()
        self.path = tmp_path / "cache.db"
        self.fake: Fake = (FakeOpenAIBatchAPI if provider == "openai" else FakeAnthropicBatchAPI)(
            answer, clock=self.clock, processing_seconds=600.0)
        self.ids = 0

    def journal(self) -> BatchJournal:
        """The journal file as a fresh process opens it (closed when the test ends)."""
        _JOURNALS.append(BatchJournal(self.path))
        return _JOURNALS[-1]

    def judge(self, **kwargs: Any) -> Judge:
        """A judge as a fresh process would build it: new objects, the same file."""
        def new_id() -> str:
            self.ids += 1
            return f"{self.ids:04d}"
        options: dict[str, Any] = {
            "journal": self.journal(), "client": self.fake.client(),
            "api_key": "sk-test-secret-key", "clock": self.clock, "sleep": self.clock.sleep,
            "new_id": new_id, "max_batch_size": 100, "max_wait": 30.0, "poll_interval": 60.0,
            **kwargs,
        }
        cls = OpenAIBatchModel if self.provider == "openai" else AnthropicBatchModel
        return cls("judge-model", **options)


async def ask_all(judge: Judge, ns: Sequence[int]) -> dict[int, Result[JudgeResponse, JudgeError]]:
    out: dict[int, Result[JudgeResponse, JudgeError]] = {}

    async def one(n: int) -> None:
        out[n] = await judge.generate(request(n))

    async with anyio.create_task_group() as tg:
        for n in ns:
            tg.start_soon(one, n)
    return out


def score_of(result: Result[JudgeResponse, JudgeError]) -> float:
    assert isinstance(result, Success), result
    return float(json.loads(result.unwrap().text)["score"])


PROVIDERS = pytest.mark.parametrize("provider", ["openai", "anthropic"])


@PROVIDERS
async def test_concurrent_requests_go_out_as_one_batch_and_each_gets_its_answer(
    provider: str, tmp_path: Path
) -> None:
    """Five concurrent requests at max_batch_size=5: one provider batch, five answers."""
    world = World(provider, tmp_path)
    judge = world.judge(max_batch_size=5)
    results = await ask_all(judge, range(5))
    assert {n: score_of(r) for n, r in results.items()} == {n: n / 10 for n in range(5)}
    assert len(world.fake.batches) == 1
    assert len(world.fake.submitted) == 5
    assert judge.progress().batches_done == 1
    assert judge.progress().requests_answered == 5


async def test_openai_batch_walks_the_documented_statuses(tmp_path: Path) -> None:
    """The judge polls through validating → in_progress → finalizing → completed."""
    world = World("openai", tmp_path)
    judge = world.judge(max_batch_size=2, poll_interval=20.0)
    await ask_all(judge, range(2))
    assert isinstance(world.fake, FakeOpenAIBatchAPI)
    (seen,) = world.fake.statuses_seen.values()
    order = list(dict.fromkeys(seen))
    assert order == ["validating", "in_progress", "finalizing", "completed"]
    uploads = [c for c in world.fake.calls if c == "POST /v1/files"]
    assert len(uploads) == 1


@PROVIDERS
async def test_a_partial_queue_is_submitted_after_max_wait(provider: str, tmp_path: Path) -> None:
    """Three requests below max_batch_size go out together once max_wait has passed."""
    world = World(provider, tmp_path)
    judge = world.judge(max_batch_size=100, max_wait=45.0)
    await ask_all(judge, range(3))
    (batch,) = world.fake.batches.values()
    assert len(batch.lines) == 3
    assert batch.created >= 45.0


@PROVIDERS
async def test_a_failed_request_fails_alone_with_the_providers_error_kind(
    provider: str, tmp_path: Path
) -> None:
    """A request the provider rate-limited fails as rate_limit; its neighbours succeed."""
    def answer(body: Mapping[str, Any]) -> FakeReply:
        if item_of(body) == 1:
            if provider == "openai":
                return 429, {"error": {"message": "slow down", "type": "rate_limit_error",
                                       "code": "rate_limit_exceeded"}}
            return 429, {"type": "error", "error": {"type": "rate_limit_error",
                                                    "message": "slow down"}}
        return scores(body)

    world = World(provider, tmp_path, answer)
    results = await ask_all(world.judge(max_batch_size=3), range(3))
    assert score_of(results[0]) == 0.0
    assert score_of(results[2]) == 0.2
    failed = results[1]
    assert isinstance(failed, Failure)
    assert failed.failure().kind == "rate_limit"
    assert failed.failure().is_retryable


@PROVIDERS
async def test_a_malformed_result_line_is_a_format_failure_of_that_request_only(
    provider: str, tmp_path: Path
) -> None:
    """A "succeeded" line without a reply comes back as raw text (the core's format failure)."""
    world = World(provider, tmp_path)
    world.fake.malformed = {"scb_0001-1"}
    results = await ask_all(world.judge(max_batch_size=3), range(3))
    (row,) = [r for r in world.journal().requests_of("scb_0001")
              if r.custom_id == "scb_0001-1"]
    hit = item_of(row.body)
    broken = results[hit]
    assert isinstance(broken, Success)
    with pytest.raises(ValueError, match="score"):
        score_of_strict(broken.unwrap().text)
    assert {n: score_of(r) for n, r in results.items() if n != hit} == {
        n: n / 10 for n in range(3) if n != hit}


def score_of_strict(text: str) -> float:
    value = json.loads(text)
    if not isinstance(value, dict) or "score" not in value:
        raise ValueError(f"no score in {text!r}")
    return float(value["score"])


@PROVIDERS
@pytest.mark.parametrize("ending", ["expire_after", "cancel_after"])
async def test_an_expired_or_cancelled_batch_is_resubmitted_for_its_unanswered_requests_only(
    provider: str, ending: str, tmp_path: Path
) -> None:
    """Two of four answered before the end: only the other two go out again, journalled."""
    world = World(provider, tmp_path)
    setattr(world.fake, ending, 2)
    judge = world.judge(max_batch_size=4)
    answered_first: list[str] = []

    async def run() -> dict[int, Result[JudgeResponse, JudgeError]]:
        return await ask_all(judge, range(4))

    # The second batch must run normally.
    original_create = world.fake._create

    def create_once(lines: list[tuple[str, Mapping[str, Any]]]) -> Any:
        batch = original_create(lines)
        answered_first.append(str(len(lines)))
        setattr(world.fake, ending, None)
        return batch

    world.fake._create = create_once  # type: ignore[method-assign]
    results = await run()
    assert {n: score_of(r) for n, r in results.items()} == {n: n / 10 for n in range(4)}
    assert answered_first == ["4", "2"]
    assert world.fake.duplicates() == []
    journal = world.journal()
    first, second = journal.batches()
    assert first.counts == {"answered": 2, "unanswered": 2}
    resent = journal.requests_of(second.job)
    assert {r.resubmit_of for r in resent} == {"scb_0001-2", "scb_0001-3"}
    assert judge.progress().requests_resubmitted == 2


@PROVIDERS
async def test_a_429_on_submit_fails_the_batchs_requests_and_creates_nothing(
    provider: str, tmp_path: Path
) -> None:
    """A refused creation is a rate_limit failure (the retry policy's business), journalled."""
    world = World(provider, tmp_path)
    world.fake.refuse_next = [429]
    judge = world.judge(max_batch_size=2)
    results = await ask_all(judge, range(2))
    assert all(isinstance(r, Failure) and r.failure().kind == "rate_limit"
               for r in results.values())
    assert world.fake.batches == {}
    (refused,) = world.journal().batches()
    assert refused.state == "refused"
    again = await ask_all(judge, range(2))  # the retry joins the next batch
    assert {n: score_of(r) for n, r in again.items()} == {0: 0.0, 1: 0.1}


def stored_bytes(folder: Path) -> bytes:
    """Everything the cache file (and its WAL) holds."""
    return b"".join(p.read_bytes() for p in folder.glob("cache.db*"))


def creation_call(provider: str) -> int:
    """The HTTP call (1-based) that creates the batch: OpenAI uploads a file first."""
    return 2 if provider == "openai" else 1


@PROVIDERS
@pytest.mark.parametrize("after_processing", [False, True])
async def test_a_kill_around_submission_resumes_without_submitting_twice(
    provider: str, after_processing: bool, tmp_path: Path
) -> None:
    """Killed as the batch is created (before or after the provider made it, before the id
    was recorded): the next process adopts the batch or submits it, never both."""
    world = World(provider, tmp_path)
    world.fake.kill_at = creation_call(provider)
    world.fake.kill_after_processing = after_processing
    with pytest.raises(BaseExceptionGroup) as killed:
        await ask_all(world.judge(max_batch_size=3), range(3))
    assert killed.group_contains(SimulatedKill)
    assert len(world.fake.batches) == (1 if after_processing else 0)
    world.fake.restart()
    second = world.judge(max_batch_size=3)
    results = await ask_all(second, range(3))
    assert {n: score_of(r) for n, r in results.items()} == {0: 0.0, 1: 0.1, 2: 0.2}
    assert len(world.fake.batches) == 1
    assert world.fake.duplicates() == []
    assert len(world.fake.submitted) == 3


@PROVIDERS
async def test_a_kill_while_polling_resumes_the_submitted_batch(
    provider: str, tmp_path: Path
) -> None:
    """Killed while the batch runs: the next process polls it and submits nothing."""
    world = World(provider, tmp_path)
    world.fake.kill_at = creation_call(provider) + 1  # the first status read
    with pytest.raises(BaseExceptionGroup):
        await ask_all(world.judge(max_batch_size=2), range(2))
    world.fake.restart()
    second = world.judge(max_batch_size=2)
    results = await ask_all(second, range(2))
    assert {n: score_of(r) for n, r in results.items()} == {0: 0.0, 1: 0.1}
    assert len(world.fake.submitted) == 2
    assert second.progress().batches_submitted == 0
    assert second.progress().requests_resumed == 2


@PROVIDERS
async def test_secrets_never_reach_an_error(provider: str, tmp_path: Path) -> None:
    """A provider error that echoes the key is scrubbed, as for the synchronous judges."""
    def answer(body: Mapping[str, Any]) -> FakeReply:
        del body
        message = "bad key sk-test-secret-key"
        if provider == "openai":
            return 401, {"error": {"message": message, "type": "invalid_request_error"}}
        return 401, {"type": "error", "error": {"type": "authentication_error",
                                                "message": message}}

    world = World(provider, tmp_path, answer)
    (result,) = (await ask_all(world.judge(max_batch_size=1), [0])).values()
    assert isinstance(result, Failure)
    assert result.failure().kind == "auth"
    assert "sk-test-secret-key" not in repr(result.failure())
    assert b"sk-test-secret-key" not in stored_bytes(tmp_path)  # bodies only, scrubbed


@PROVIDERS
async def test_a_provider_outage_while_polling_fails_the_calls_and_a_retry_resumes_the_batch(
    provider: str, tmp_path: Path
) -> None:
    """Status reads failing five times in a row fail the waiting runs (server error); run
    again, their requests rejoin the batch already submitted: nothing is submitted twice."""
    world = World(provider, tmp_path)
    world.fake.fail_status_reads = 5
    judge = world.judge(max_batch_size=2)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="Grade.",
    )).generate_score(ScorePromptStep(description="s",
                                      create_prompt=lambda c: f"item {c.run.output}"))
    meter = JudgeMeter(cache=MemoryJudgeCache())

    async def run_all() -> dict[int, Any]:
        out: dict[int, Any] = {}

        async def one(n: int) -> None:
            out[n] = await scorer.run(input="q", output=str(n), runtime=Runtime(meter=meter))

        async with anyio.create_task_group() as tg:
            for n in range(2):
                tg.start_soon(one, n)
        return out

    first = await run_all()
    assert all(isinstance(r, Failure) for r in first.values())
    again = await run_all()
    assert {n: r.unwrap().score for n, r in again.items()} == {0: 0.0, 1: 0.1}
    assert len(world.fake.submitted) == 2


@PROVIDERS
async def test_a_malformed_line_goes_through_the_format_fallback_into_the_next_batch(
    provider: str, tmp_path: Path
) -> None:
    """The core's format fallback asks again (schema in the instructions): a second batch
    answers, and the run scores."""
    world = World(provider, tmp_path)
    world.fake.malformed = {"scb_0001-0"}
    judge = world.judge(max_batch_size=1)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="Grade.",
    )).generate_score(ScorePromptStep(description="s",
                                      create_prompt=lambda c: f"item {c.run.output}"))
    result = await scorer.run(input="q", output="3",
                              runtime=Runtime(meter=JudgeMeter(cache=MemoryJudgeCache())))
    assert result.unwrap().score == 0.3
    assert len(world.fake.batches) == 2
    (execution,) = result.unwrap().judge["generate_score"]
    assert execution.model_call_count == 2


@pytest.mark.parametrize(("field", "value"), [
    ("max_batch_size", 0), ("max_batch_size", 2.5), ("max_wait", -1), ("poll_interval", "30s"),
])
def test_bad_options_name_the_field_and_value(field: str, value: Any, tmp_path: Path) -> None:
    """A batch judge refuses a bad option at construction, naming it and the value given."""
    with pytest.raises((TypeError, ValueError)) as raised:
        OpenAIBatchModel("m", journal=str(tmp_path / "j.db"), **{field: value})
    assert f"OpenAIBatchModel.{field}" in str(raised.value)
    assert repr(value) in str(raised.value)


@PROVIDERS
async def test_a_result_line_repeating_a_custom_id_is_ignored_and_counted(
    provider: str, tmp_path: Path
) -> None:
    """A result file with a custom_id twice (the answer, then an error): the first line is
    the answer, the copy is counted in the progress and noted on the journalled batch."""
    world = World(provider, tmp_path)
    world.fake.duplicated = {"scb_0001-1"}
    judge = world.judge(max_batch_size=3)
    results = await ask_all(judge, range(3))
    assert {n: score_of(r) for n, r in results.items()} == {0: 0.0, 1: 0.1, 2: 0.2}
    assert judge.progress().duplicate_results == 1
    assert "1 duplicate result line(s) ignored" in judge.progress().describe()
    (batch,) = judge.journal.batches()
    assert batch.note is not None
    assert "1 duplicate result line(s) ignored" in batch.note
    judge.journal.close()


async def _newer_batches(world: World, count: int) -> None:
    """``count`` batches made in the same account by someone else, after ours."""
    async with world.fake.client() as client:
        if world.provider == "openai":
            line = {"custom_id": "other", "method": "POST", "url": "/v1/chat/completions",
                    "body": {"model": "m", "messages": [{"role": "user", "content": "item 0"}]}}
            uploaded = await client.post(
                "https://api.openai.com/v1/files", data={"purpose": "batch"},
                files={"file": ("x.jsonl", json.dumps(line).encode(), "application/jsonl")})
            for _ in range(count):
                await client.post("https://api.openai.com/v1/batches", json={
                    "input_file_id": uploaded.json()["id"], "endpoint": "/v1/chat/completions",
                    "completion_window": "24h"})
        else:
            for n in range(count):
                await client.post("https://api.anthropic.com/v1/messages/batches", json={
                    "requests": [{"custom_id": f"other-{n}", "params": {
                        "model": "m", "max_tokens": 10,
                        "messages": [{"role": "user", "content": "item 0"}]}}]})


@PROVIDERS
async def test_recovery_pages_back_past_many_newer_batches_to_the_prepare_time(
    provider: str, tmp_path: Path
) -> None:
    """Killed after the provider made the batch, before its id was recorded, then 600 other
    batches are made in the account: the next process pages back through the listing to the
    batch's prepare time, finds it and submits nothing again."""
    world = World(provider, tmp_path)
    world.fake.kill_at = creation_call(provider)
    world.fake.kill_after_processing = True
    with pytest.raises(BaseExceptionGroup):
        await ask_all(world.judge(max_batch_size=3), range(3))
    world.fake.restart()
    await _newer_batches(world, 600)
    second = world.judge(max_batch_size=3)
    results = await ask_all(second, range(3))
    assert {n: score_of(r) for n, r in results.items()} == {0: 0.0, 1: 0.1, 2: 0.2}
    assert second.progress().batches_submitted == 0
    assert [cid for cid in world.fake.submitted if cid.startswith("scb_")] == [
        "scb_0001-0", "scb_0001-1", "scb_0001-2"]
    second.journal.close()


@PROVIDERS
async def test_recovery_stops_listing_at_batches_older_than_the_prepare_time(
    provider: str, tmp_path: Path
) -> None:
    """Killed before the provider made the batch: the next process reads the listing back to
    the prepare time (less an hour for clock skew), not the account's whole history."""
    world = World(provider, tmp_path)
    await _newer_batches(world, 450)
    for batch in world.fake.batches.values():
        batch.created_wall -= 2 * 3600.0  # made two hours before ours
    world.fake.kill_at = len(world.fake.calls) + creation_call(provider)
    with pytest.raises(BaseExceptionGroup):
        await ask_all(world.judge(max_batch_size=3), range(3))
    world.fake.restart()
    before = len(world.fake.calls)
    second = world.judge(max_batch_size=3)
    results = await ask_all(second, range(3))
    assert {n: score_of(r) for n, r in results.items()} == {0: 0.0, 1: 0.1, 2: 0.2}
    listings = [c for c in world.fake.calls[before:] if c.rstrip("/").endswith("batches")
                and c.startswith("GET")]
    assert len(listings) == 1  # the first page reaches the old batches
    assert second.progress().batches_submitted == 1
    second.journal.close()


@PROVIDERS
async def test_a_journalled_batch_the_provider_does_not_know_is_resubmitted_with_a_warning(
    provider: str, tmp_path: Path
) -> None:
    """The journal holds a submitted batch the provider answers 404 for (it has no such
    batch, so none of its requests ran): the next process says so and submits them again,
    once, instead of failing every resume."""
    world = World(provider, tmp_path)
    world.fake.kill_at = creation_call(provider) + 1  # the first status read
    with pytest.raises(BaseExceptionGroup):
        await ask_all(world.judge(max_batch_size=3), range(3))
    world.fake.restart()
    (lost,) = list(world.fake.batches)
    del world.fake.batches[lost]
    second = world.judge(max_batch_size=3)
    with pytest.warns(BatchJournalWarning, match=rf"no batch {lost} \(HTTP 404\)"):
        results = await ask_all(second, range(3))
    assert {n: score_of(r) for n, r in results.items()} == {0: 0.0, 1: 0.1, 2: 0.2}
    assert second.progress().batches_not_found == 1
    assert second.progress().requests_resubmitted == 3
    assert "1 not found at the provider" in second.progress().describe()
    assert len(world.fake.submitted) == 6
    assert world.fake.duplicates() == []
    (gone, _) = second.journal.batches()
    assert gone.status == "not_found"
    assert gone.note is not None
    assert "HTTP 404" in gone.note
    second.journal.close()


def _delete_journal(folder: Path) -> None:
    """The cache file and its -wal and -shm, as a user deleting the journal would."""
    for name in ("cache.db", "cache.db-wal", "cache.db-shm"):
        (folder / name).unlink(missing_ok=True)


@PROVIDERS
async def test_a_deleted_journal_is_noticed_and_warned_about(provider: str, tmp_path: Path) -> None:
    """The journal (the cache file and its -wal and -shm) is deleted after a batch was
    submitted: the next process cannot know what was sent, and says so instead of
    resubmitting in silence."""
    world = World(provider, tmp_path)
    world.fake.kill_at = creation_call(provider) + 1  # the first status read
    first = world.judge(max_batch_size=2)
    with pytest.raises(BaseExceptionGroup):
        await ask_all(first, range(2))
    first.journal.close()
    _delete_journal(tmp_path)
    world.fake.restart()
    second = world.judge(max_batch_size=2)
    with pytest.warns(BatchJournalWarning, match="deleted or replaced"):
        results = await ask_all(second, range(2))
    assert {n: score_of(r) for n, r in results.items()} == {0: 0.0, 1: 0.1}
    second.journal.close()


def _copy_without_wal(folder: Path) -> Path:
    """The cache file and its .batch-id mark, copied without the -wal file."""
    moved = folder / "moved"
    moved.mkdir()
    for name in ("cache.db", "cache.db.batch-id"):
        shutil.copy(folder / name, moved / name)
    return moved


@PROVIDERS
async def test_a_journal_that_lost_its_wal_file_is_warned_about(
    provider: str, tmp_path: Path
) -> None:
    """A process journals two batches and dies; the second lives only in the -wal file, which
    is deleted (here: the cache file is copied without it). The next process warns that the
    journal lost requests it had."""
    world = World(provider, tmp_path)
    first = world.judge(max_batch_size=1)
    await ask_all(first, [0])
    checkpoint = sqlite3.connect(world.path)
    checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    checkpoint.close()
    await ask_all(first, [1])  # journalled in the -wal file only
    moved = _copy_without_wal(tmp_path)
    first.journal.close()
    world.path = moved / "cache.db"
    second = world.judge(max_batch_size=1)
    with pytest.warns(BatchJournalWarning, match=r"holds 1 of the 2 request\(s\)"):
        results = await ask_all(second, [1])
    assert score_of(results[1]) == 0.1
    second.journal.close()


def test_a_journal_written_as_remembered_gives_no_warning(tmp_path: Path) -> None:
    """Closed and opened again, a journal that holds what it last wrote claims in silence."""
    journal = BatchJournal(tmp_path / "cache.db")
    assert journal.claim() is None
    journal.prepare("job1", provider="openai", base_url="http://x", model="m",
                    requests=[("job1-0", "k", {"model": "m"}, None)])
    journal.close()
    again = BatchJournal(tmp_path / "cache.db")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert again.claim() is None
    again.close()
