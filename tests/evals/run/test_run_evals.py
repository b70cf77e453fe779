"""Tests of run_evals: streaming, concurrency, failure isolation, thresholds, report arithmetic."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import JudgeConfig, PromptStep, ScorePromptStep, Scorer, create_scorer, not_scorable
from scorecore._core._redact import redact_secrets
from scorecore.evals import (
    EvalConfigError,
    EvalItem,
    InvalidItem,
    ItemResult,
    ScoreRow,
    StoreError,
    Threshold,
    run_evals,
)
from scorecore.evals.engine import item_from_mapping
from scorecore.evals.store import CompletedScore, row_id
from scorecore_adapters.testing import (
    FunctionJudge,
    InMemoryScoreStore,
    ScriptedJudge,
    judge_error,
    virtual_runtime,
)

pytestmark = pytest.mark.anyio


def exact() -> Scorer[Any, Any]:
    return create_scorer(id="exact", description="exact match").generate_score(
        lambda ctx: float(ctx.run.output == ctx.run.ground_truth)
    )


def const(scorer_id: str, value: float) -> Scorer[Any, Any]:
    return create_scorer(id=scorer_id, description="constant").generate_score(lambda _: value)


async def test_mean_counts_and_verdict(anyio_backend: str) -> None:
    """The report gives each scorer's mean and counts, and a passing verdict."""
    data = [
        {"input": "a", "output": "1", "ground_truth": "1"},
        {"input": "b", "output": "2", "groundTruth": "3"},
        EvalItem(input="c", output="4", ground_truth="4"),
    ]
    report = await run_evals(data, [exact()], thresholds={"exact": 0.6})
    summary = report.summary("exact")
    assert (summary.scored, summary.not_scorable, summary.failed) == (3, 0, 0)
    assert summary.mean == pytest.approx(2 / 3)
    assert report.verdict == "passed"
    assert report.total_items == 3
    assert report.results is None


@pytest.mark.parametrize("concurrency", [1, 3, 8])
async def test_concurrency_limit_is_respected(anyio_backend: str, concurrency: int) -> None:
    """No more than `concurrency` items are in flight at once, and the limit is reached."""
    in_flight = 0
    peak = 0

    async def target(item: EvalItem) -> Any:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        in_flight -= 1
        return item.input

    data = ({"input": i} for i in range(50))
    report = await run_evals(data, [const("c", 1.0)], target=target, concurrency=concurrency)
    assert report.total_items == 50
    assert peak == concurrency


async def test_data_is_streamed_not_listed(anyio_backend: str) -> None:
    """Items are pulled lazily: at most about `concurrency` ahead of the completed ones."""
    pulled = 0
    completed = 0
    lead = 0

    def items() -> Iterator[dict[str, Any]]:
        nonlocal pulled, lead
        for i in range(40):
            pulled += 1
            lead = max(lead, pulled - completed)
            yield {"input": i, "output": i}

    def on_item(_: ItemResult) -> None:
        nonlocal completed
        completed += 1

    await run_evals(items(), [const("c", 1.0)], concurrency=4, on_item_complete=on_item)
    assert lead <= 4


async def test_async_iterable_data(anyio_backend: str) -> None:
    """An async generator works as the dataset, pulled by several workers."""

    async def items() -> AsyncIterator[dict[str, Any]]:
        for i in range(20):
            await anyio.lowlevel.checkpoint()
            yield {"input": i, "output": i, "ground_truth": i if i % 2 else -1}

    report = await run_evals(items(), [exact()], concurrency=5)
    assert report.summary("exact").mean == 0.5
    assert report.total_items == 20


async def test_results_are_in_dataset_order_with_ids(anyio_backend: str) -> None:
    """Kept results come back in dataset order, with item ids and deterministic run ids."""
    runtime, clock = virtual_runtime()

    async def target(item: EvalItem) -> Any:
        # Later items finish first: completion order differs from dataset order.
        await clock.sleep(0)
        for _ in range(10 - int(item.input)):
            await anyio.lowlevel.checkpoint()
        return item.input

    data: list[Any] = [{"input": i, "id": f"q{i}"} if i % 2 else {"input": i} for i in range(10)]
    completion: list[int] = []
    report = await run_evals(
        data, [const("c", 0.5)], target=target, concurrency=10, keep_results=True,
        batch_id="b1", runtime=runtime, on_item_complete=lambda r: completion.append(r.index),
    )
    assert report.results is not None
    assert [r.index for r in report.results] == list(range(10))
    assert completion != list(range(10))
    assert report.results[1].item_id == "q1"
    assert report.results[1].run_id == "b1:q1"
    assert report.results[2].run_id == "b1:#2"
    assert [o.scorer_id for o in report.results[0].outcomes] == ["c"]


async def test_raising_target_is_recorded_for_that_item(anyio_backend: str) -> None:
    """A raising target fails its item (every scorer counted failed); others still run."""

    async def target(item: EvalItem) -> Any:
        if item.input == 2:
            raise RuntimeError("agent crashed")
        return item.input

    report = await run_evals(
        [{"input": i, "ground_truth": i} for i in range(5)], [exact(), const("k", 1.0)],
        target=target, keep_results=True,
    )
    assert report.failed_items == 1
    assert report.summary("exact").failed == 1
    assert report.summary("k").failed == 1
    assert report.summary("exact").scored == 4
    assert report.results is not None
    failed = report.results[2]
    assert failed.error == "target raised RuntimeError: agent crashed"
    assert all(o.status == "failed" and o.error == failed.error for o in failed.outcomes)


async def test_raising_scorer_object_and_failing_steps_are_isolated(anyio_backend: str) -> None:
    """A scorer object that raises, or a step that raises, fails only that (item, scorer)."""

    class Exploding:
        id = "exploding"

        async def run(self, **_: Any) -> Any:
            raise ValueError("boom")

    def step(ctx: Any) -> float:
        if ctx.run.input == 1:
            raise KeyError("missing")
        return 1.0

    flaky = create_scorer(id="flaky", description="raises once").generate_score(step)
    scorers: list[Any] = [Exploding(), flaky]
    report = await run_evals(
        [{"input": i, "output": i} for i in range(3)], scorers, keep_results=True
    )
    assert report.summary("exploding").failed == 3
    assert report.summary("flaky").scored == 2
    assert report.summary("flaky").failed == 1
    assert report.results is not None
    outcome = report.results[1].outcomes[1]
    assert outcome.status == "failed"
    assert outcome.run_error is not None
    assert "KeyError" in (outcome.error or "")
    assert report.results[0].outcomes[0].error == "scorer raised ValueError: boom"


async def test_failing_judge_is_recorded(anyio_backend: str) -> None:
    """A judge failure becomes a failed outcome with the judge's error, not an abort."""
    judge = ScriptedJudge([{"score": 0.5}, judge_error(401, message="bad key"), {"score": 1}])
    scorer = create_scorer(
        id="judged", description="d", judge=JudgeConfig(model=judge, instructions="judge")
    ).generate_score(
        ScorePromptStep(description="s", create_prompt=lambda c: "rate")
    )
    report = await run_evals(
        [{"input": i, "output": i} for i in range(3)], [scorer], concurrency=1,
        keep_results=True,
    )
    summary = report.summary("judged")
    assert (summary.scored, summary.failed) == (2, 1)
    assert summary.mean == 0.75
    assert report.results is not None
    assert "bad key" in (report.results[1].outcomes[0].error or "")


async def test_judge_latency_runs_concurrently_in_virtual_time(anyio_backend: str) -> None:
    """With a judge that waits on the virtual clock, all items still complete and score."""
    runtime, clock = virtual_runtime()

    async def reply(_: Any) -> Any:
        await clock.sleep(0.05)
        return {"unsupported": []}

    judge = FunctionJudge(reply)
    scorer = (
        create_scorer(id="j", description="d", judge=JudgeConfig(model=judge, instructions="i"))
        .analyze(PromptStep(description="a", create_prompt=lambda c: "x",
                            output_schema={"type": "object"}))
        .generate_score(lambda c: 1.0 - len(c.results.analyze_step_result["unsupported"]))
    )
    report = await run_evals(({"input": i, "output": i} for i in range(30)), [scorer],
                             concurrency=10, runtime=runtime)
    assert report.summary("j").scored == 30
    assert judge.calls == 30
    assert len(clock.sleeps) == 30


async def test_not_scorable_is_excluded_from_mean(anyio_backend: str) -> None:
    """Not-scorable runs are counted apart and do not drag the mean."""
    scorer = create_scorer(id="ns", description="d").generate_score(
        lambda ctx: not_scorable("no gt") if ctx.run.ground_truth is None else 0.8
    )
    report = await run_evals(
        [{"input": 1, "output": 1}, {"input": 2, "output": 2, "ground_truth": 2}], [scorer]
    )
    summary = report.summary("ns")
    assert (summary.mean, summary.scored, summary.not_scorable) == (0.8, 1, 1)


async def test_nothing_scored_means_none_and_threshold_fails(anyio_backend: str) -> None:
    """A scorer with no numeric score has mean None, and its threshold fails."""
    scorer = create_scorer(id="ns", description="d").generate_score(lambda _: not_scorable())
    report = await run_evals([{"input": 1, "output": 1}], [scorer], thresholds={"ns": 0.0})
    assert report.summary("ns").mean is None
    assert report.verdict == "failed"
    assert report.failed_checks == ("threshold ns: mean n/a, needs >= 0",)


async def test_thresholds_and_gates(anyio_backend: str) -> None:
    """Min, min/max thresholds and gates decide the verdict; failures are listed."""
    data = [{"input": 1, "output": 1}]
    scorers = [const("low", 0.3), const("mid", 0.5), const("full", 1.0), const("almost", 0.99)]
    report = await run_evals(
        data, scorers,
        thresholds={"low": 0.2, "mid": Threshold(min=0.2, max=0.4)},
        gates=["full", "almost"],
    )
    assert [t.passed for t in report.thresholds] == [True, False]
    assert [(g.scorer_id, g.passed) for g in report.gates] == [("full", True), ("almost", False)]
    assert report.verdict == "failed"
    assert report.failed_checks == (
        "gate almost: mean 0.99, needs 1.0",
        "threshold mid: mean 0.5, needs 0.2..0.4",
    )
    passing = await run_evals(data, scorers, thresholds={"low": 0.3}, gates=["full"])
    assert passing.verdict == "passed"
    assert passing.to_json()["thresholdResults"][0]["passed"] is True


async def test_gate_given_as_scorer_is_run(anyio_backend: str) -> None:
    """A scorer passed only in gates is run too."""
    report = await run_evals([{"input": 1, "output": 1}], [const("a", 0.1)],
                             gates=[const("g", 1.0)])
    assert [s.scorer_id for s in report.scorers] == ["a", "g"]
    assert report.passed


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"thresholds": {"exact": 1.5}}, "thresholds", "finite number in [0, 1], got 1.5"),
        ({"thresholds": {"exact": True}}, "thresholds", "must be a number"),
        ({"thresholds": {"nope": 0.5}}, "thresholds", "unknown scorer 'nope'"),
        ({"gates": ["nope"]}, "gates", "gate 'nope' is not one of the scorers"),
        ({"concurrency": 0}, "concurrency", "concurrency must be an int >= 1, got 0"),
        ({"resume": True}, "resume", "resume=True needs the store and the batch_id"),
        ({"batch_id": ""}, "batch_id", "batch_id must be a non-empty str"),
        # nightly + item v2:q1 would be the run id of batch nightly:v2 + item q1.
        ({"batch_id": "nightly:v2"}, "batch_id", "batch_id must not contain ':' or '/'"),
        # b/trial-1 would collide with the second trial of batch b.
        ({"batch_id": "b/trial-1"}, "batch_id", "batch_id must not contain ':' or '/'"),
    ],
)
async def test_bad_arguments_raise_before_running(
    anyio_backend: str, kwargs: dict[str, Any], field: str, message: str
) -> None:
    """Misuse raises EvalConfigError naming the argument and value."""
    with pytest.raises(EvalConfigError, match=re.escape(message)) as info:
        await run_evals([{"input": 1, "output": 1}], [exact()], **kwargs)
    assert info.value.field == field


async def test_bad_scorer_lists_raise(anyio_backend: str) -> None:
    """A lone scorer, duplicate ids, or no scorers are refused with a clear message."""
    with pytest.raises(EvalConfigError, match="wrap a single scorer in a list"):
        await run_evals([], exact())  # type: ignore[arg-type]
    with pytest.raises(EvalConfigError, match="share the id 'exact'"):
        await run_evals([], [exact(), exact()])
    with pytest.raises(EvalConfigError, match="at least one scorer"):
        await run_evals([], [])
    with pytest.raises(EvalConfigError, match="data must be an iterable"):
        await run_evals({"input": 1}, [exact()])  # type: ignore[arg-type]


def test_threshold_validation() -> None:
    """Threshold bounds must be in [0, 1], at least one given, min <= max."""
    with pytest.raises(ValueError, match=r"Threshold.min must be a finite number in \[0, 1\]"):
        Threshold(min=-0.1)
    with pytest.raises(ValueError, match="needs min, max or both"):
        Threshold()
    with pytest.raises(ValueError, match="must not exceed max"):
        Threshold(min=0.8, max=0.2)
    assert Threshold(max=0.3).describe() == "<= 0.3"


async def test_bad_items_are_recorded_with_clear_messages(anyio_backend: str) -> None:
    """Unreadable items fail alone, with a message naming the field and value."""
    data: list[Any] = [
        {"input": 1, "output": 1},
        42,
        {"input": 2},
        {"input": 3, "output": 3, "grund_truth": 3},
        {"input": 4, "output": 4, "request_context": "token"},
        {"input": 5, "output": 5, "ground_truth": 1, "groundTruth": 2},
        InvalidItem(reason="data.jsonl:7: invalid JSON", id="line-7"),
        {"input": 6, "output": 6, "extra": {"input": "clash"}},
    ]
    report = await run_evals(data, [exact()], keep_results=True, batch_id="b")
    assert report.results is not None
    errors = [r.error for r in report.results]
    assert errors == [
        None,
        "item #1: expected a mapping or EvalItem, got int 42",
        "item #2: missing field 'output' (and no target to produce it)",
        "item #3: unknown field 'grund_truth' (accepted: input, output, ground_truth, "
        "request_context, expected_trajectory, id, extra, baseline_output; put anything else "
        "under 'extra')",
        "item #4: EvalItem.request_context must be a mapping or None, got 'token'",
        "item #5: field 'ground_truth' given twice (snake_case and camelCase)",
        "data.jsonl:7: invalid JSON",
        "item #7: EvalItem.extra must not contain 'input': it is a field of the run; "
        "set it on the item instead",
    ]
    assert report.results[6].run_id == "b:line-7"
    assert report.failed_items == 7
    assert report.summary("exact").failed == 7


def test_item_from_mapping_accepts_camel_case_and_int_ids() -> None:
    """Mastra's camelCase keys and integer ids are accepted."""
    item = item_from_mapping({
        "input": "q", "output": "a", "groundTruth": "g", "requestContext": {"u": 1},
        "expectedTrajectory": ["t"], "id": 3, "extra": {"k": 1},
    })
    assert (item.ground_truth, item.request_context, item.expected_trajectory, item.id) == (
        "g", {"u": 1}, ["t"], "3",
    )


async def test_extra_keys_reach_the_scorer(anyio_backend: str) -> None:
    """An item's extra keys are the run's extra keys."""
    scorer = create_scorer(id="kw", description="d").generate_score(
        lambda ctx: float(ctx.run.extra["want"] in ctx.run.output)
    )
    report = await run_evals([{"input": 1, "output": "abc", "extra": {"want": "b"}}], [scorer])
    assert report.summary("kw").mean == 1.0


async def test_async_callback_and_store_rows(anyio_backend: str) -> None:
    """An async on_item_complete is awaited; every (item, scorer) gets one stored row."""
    store = InMemoryScoreStore()
    seen: list[str] = []

    async def on_item(result: ItemResult) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(result.run_id)

    report = await run_evals(
        [{"input": i, "output": i, "ground_truth": i, "id": f"i{i}",
          "request_context": {"Authorization": "Bearer t", "user": "u"}} for i in range(6)],
        [exact(), const("k", 0.5)], store=store, batch_id="b", on_item_complete=on_item,
        target=None,
    )
    assert sorted(seen) == [f"b:i{i}" for i in range(6)]
    assert len(store.rows) == 12
    row = store.rows[("b:i0", "exact")]
    assert row.id == row_id("b:i0", "exact")
    assert row.request_context == {"Authorization": "[REDACTED]", "user": "u"}
    assert row.status == "scored"
    assert row.dataset_item_id == "i0"
    assert row.scorer["id"] == "exact"
    assert row.source == "TEST"
    assert row.metadata is not None
    assert row.metadata["itemIndex"] == 0
    assert report.batch_id == "b"


async def test_resume_skips_stored_pairs_and_reruns_failures(anyio_backend: str) -> None:
    """Resume skips final pairs (target too), re-runs failed ones, and reports the whole batch."""
    store = InMemoryScoreStore()
    calls: list[int] = []
    broken = {1}

    async def target(item: EvalItem) -> Any:
        calls.append(item.input)
        if item.input in broken:
            raise RuntimeError("flaky")
        return item.input

    data = [{"input": i, "ground_truth": i} for i in range(4)]
    first = await run_evals(data, [exact()], target=target, store=store, batch_id="b")
    assert first.summary("exact").failed == 1
    broken.clear()
    calls.clear()
    second = await run_evals(data, [exact()], target=target, store=store, batch_id="b",
                             resume=True, keep_results=True)
    assert calls == [1]
    summary = second.summary("exact")
    assert (summary.scored, summary.failed, summary.mean) == (4, 0, 1.0)
    assert second.results is not None
    assert [o.resumed for r in second.results for o in r.outcomes] == [True, False, True, True]
    assert len(store.rows) == 4


async def test_store_failure_aborts_with_store_error(anyio_backend: str) -> None:
    """A store that cannot save aborts the batch with its StoreError (not a group)."""
    class Broken:
        """A store whose every save fails."""

        async def save(self, rows: Sequence[ScoreRow], /) -> None:
            raise StoreError("disk full", store="mem", operation="save")

        async def completed(self, batch_id: str, /) -> dict[tuple[str, str], CompletedScore]:
            return {}

        async def list_run(self, batch_id: str, /) -> list[ScoreRow]:
            return []

        async def has_batch(self, batch_id: str, /) -> bool:
            return False

    with pytest.raises(StoreError, match="disk full"):
        await run_evals(({"input": i, "output": i} for i in range(100)), [exact()],
                        store=Broken())


async def test_iterator_error_propagates(anyio_backend: str) -> None:
    """An exception raised by the dataset itself is not an item: it propagates as is."""

    def items() -> Iterator[dict[str, Any]]:
        yield {"input": 1, "output": 1}
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        await run_evals(items(), [exact()])


async def test_errors_outside_any_item_stop_the_batch_as_themselves(anyio_backend: str) -> None:
    """The async dataset or on_item_complete raising: the very exception, not a group."""
    gone = OSError("stream closed")
    hook_error = ValueError("hook failed")

    async def items() -> AsyncIterator[dict[str, Any]]:
        yield {"input": 1, "output": 1}
        raise gone

    def hook(result: ItemResult) -> None:
        raise hook_error

    with pytest.raises(OSError, match="stream closed") as dataset_info:
        await run_evals(items(), [exact()], concurrency=3)
    assert dataset_info.value is gone
    store = InMemoryScoreStore()
    with pytest.raises(ValueError, match="hook failed") as hook_info:
        await run_evals(({"input": i, "output": i} for i in range(50)), [exact()],
                        on_item_complete=hook, store=store, batch_id="b")
    assert hook_info.value is hook_error


def test_redaction_rules() -> None:
    """Credential-like keys are redacted at any depth; look-alike words are kept."""
    context = {
        "apiKey": "k", "X-API-KEY": "k", "access_token": "t", "password": "p",
        "client_secret": "s", "Cookie": "c", "nested": [{"refreshToken": "r", "ok": 1}],
        "max_tokens": 5, "tokenizer": "bpe", "author": "me", "header": "Bearer abc",
        "user": "u",
    }
    assert redact_secrets(context) == {
        "apiKey": "[REDACTED]", "X-API-KEY": "[REDACTED]", "access_token": "[REDACTED]",
        "password": "[REDACTED]", "client_secret": "[REDACTED]", "Cookie": "[REDACTED]",
        "nested": [{"refreshToken": "[REDACTED]", "ok": 1}], "max_tokens": 5,
        "tokenizer": "bpe", "author": "me", "header": "[REDACTED]", "user": "u",
    }


# --------------------------------------------------------------------------- properties

OUTCOMES = st.one_of(
    st.floats(min_value=0, max_value=1, allow_nan=False),
    st.just("not_scorable"),
    st.just("fail"),
)


def _scripted(scorer_id: str) -> Scorer[Any, Any]:
    def step(ctx: Any) -> Any:
        value = ctx.run.extra["plan"][scorer_id]
        if value == "fail":
            raise RuntimeError("planned failure")
        if value == "not_scorable":
            return not_scorable("planned")
        return value

    return create_scorer(id=scorer_id, description="scripted").generate_score(step)


@settings(max_examples=40)
@given(
    plans=st.lists(st.fixed_dictionaries({"a": OUTCOMES, "b": OUTCOMES}), max_size=30),
    concurrency=st.integers(min_value=1, max_value=6),
    threshold=st.floats(min_value=0, max_value=1, allow_nan=False),
)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_report_arithmetic(
    backend: str, plans: list[Mapping[str, Any]], concurrency: int, threshold: float
) -> None:
    """Counts, means and verdicts equal what the plan implies, at any concurrency."""
    data = [{"input": i, "output": i, "extra": {"plan": plan}} for i, plan in enumerate(plans)]

    async def go() -> Any:
        return await run_evals(data, [_scripted("a"), _scripted("b")], concurrency=concurrency,
                               thresholds={"a": threshold}, keep_results=True)

    report = anyio.run(go, backend=backend)
    assert report.total_items == len(plans)
    for sid in ("a", "b"):
        values = [p[sid] for p in plans]
        scores = [v for v in values if isinstance(v, float)]
        summary = report.summary(sid)
        assert summary.scored == len(scores)
        assert summary.not_scorable == values.count("not_scorable")
        assert summary.failed == values.count("fail")
        if scores:
            assert summary.mean == float(sum(map(Fraction, scores), Fraction(0)) / len(scores))
        else:
            assert summary.mean is None
    a_scores = [p["a"] for p in plans if isinstance(p["a"], float)]
    a_mean = report.summary("a").mean
    any_failed = any(v == "fail" for p in plans for v in p.values())  # max_failures is 0
    assert report.passed == (bool(a_scores) and a_mean is not None and a_mean >= threshold
                             and not any_failed)
    assert report.results is not None
    assert [r.index for r in report.results] == list(range(len(plans)))


# --------------------------------------------------------------------------- exact means

# Scores whose float sum depends on the order of additions (1e16 + 1.0 == 1e16, 0.1 + 0.2 …).
order_sensitive_scores = st.one_of(
    st.sampled_from([1e16, -1e16, 1.0, 0.1, 0.2, 0.3, 1e-300, 2.0**-1074, 1e308, -1e308]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
)


def _exact_mean(scores: Sequence[float]) -> float:
    return float(sum(map(Fraction, scores), Fraction(0)) / len(scores))


def _scores_scorer(scores: Sequence[float]) -> Scorer[Any, Any]:
    return create_scorer(id="s", description="score from a table").generate_score(
        lambda ctx: scores[ctx.run.input]
    )


@settings(max_examples=60)
@given(scores=st.lists(order_sensitive_scores, min_size=1, max_size=10), data=st.data())
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_completion_order_never_changes_the_report(
    backend: str, scores: list[float], data: st.DataObject
) -> None:
    """Items completing in any order give the same report, bit for bit, and its mean is the
    exact mean of the scores rounded once."""
    delays = data.draw(st.permutations(range(len(scores))), label="delays")

    async def target(item: EvalItem) -> Any:
        for _ in range(3 * delays[item.input]):
            await anyio.lowlevel.checkpoint()
        return item.input

    async def go() -> tuple[Any, Any, list[int]]:
        runtime, _ = virtual_runtime()
        items = [{"input": i} for i in range(len(scores))]
        scorer = _scores_scorer(scores)
        order: list[int] = []
        in_order = await run_evals(items, [scorer], target=lambda item: item.input,
                                   concurrency=1, batch_id="b", runtime=runtime)
        shuffled = await run_evals(items, [scorer], target=target, concurrency=len(scores),
                                   batch_id="b", runtime=runtime,
                                   on_item_complete=lambda r: order.append(r.index))
        return in_order, shuffled, order

    in_order, shuffled, order = anyio.run(go, backend=backend)
    assert sorted(order) == list(range(len(scores)))
    assert shuffled == in_order
    assert shuffled.summary("s").mean == _exact_mean(scores)


async def test_a_resumed_batch_reports_what_an_uninterrupted_one_does(
    anyio_backend: str,
) -> None:
    """Scores read back on resume and scores computed now sum exactly: the resumed report
    equals the uninterrupted one, bit for bit."""
    scores = [1e16, 1.0, -1e16, 1.0, 0.1, 0.2, 0.3, 1.0] * 4
    broken = {i for i in range(len(scores)) if i % 3 == 0}

    def step(ctx: Any) -> float:
        if ctx.run.input in broken:
            raise RuntimeError("down for now")
        return scores[ctx.run.input]

    flaky = create_scorer(id="s", description="fails first").generate_score(step)
    items = [{"input": i, "output": i, "id": str(i)} for i in range(len(scores))]
    store = InMemoryScoreStore()
    runtime, _ = virtual_runtime()
    first = await run_evals(items, [flaky], store=store, batch_id="b", runtime=runtime,
                            concurrency=4)
    assert first.summary("s").failed == len(broken)
    broken.clear()
    resumed = await run_evals(reversed(items), [flaky], store=store, batch_id="b",
                              resume=True, runtime=runtime, concurrency=3)
    whole = await run_evals(items, [_scores_scorer(scores)], batch_id="b", runtime=runtime)
    assert resumed.scorers == whole.scorers
    assert resumed.summary("s").mean == _exact_mean(scores)


@pytest.mark.parametrize("later_id", ["#0", "x"])
async def test_a_later_duplicate_id_never_takes_a_trial_run_id(
    anyio_backend: str, later_id: str
) -> None:
    """With trials, every trial of the first item keeps its run id, however slow it is.

    The second item's id repeats the first's run id (``#0`` is the position id of an id-less
    first item); it fails as a duplicate in every trial, never storing its rows under the
    first item's trial run ids.
    """
    async def slow(ctx: Any) -> float:
        if ctx.run.input == "slow":
            for _ in range(20):
                await anyio.lowlevel.checkpoint()
        return 1.0

    scorer = create_scorer(id="s", description="d").generate_score(slow)
    first: dict[str, Any] = {"input": "slow", "output": "a"}
    if later_id == "x":
        first["id"] = "x"
    store = InMemoryScoreStore()
    report = await run_evals([first, {"input": "fast", "output": "b", "id": later_id}],
                             [scorer], store=store, batch_id="b", trials=2, concurrency=4)
    rows = await store.list_run("b")
    assert sorted((r.run_id, r.input) for r in rows) == [
        (f"b/trial-1:{later_id}", "slow"), (f"b:{later_id}", "slow"),
    ]
    assert report.failed_items == 2
