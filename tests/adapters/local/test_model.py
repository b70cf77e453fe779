"""LocalModel end to end on the bundled SmolLM2-135M model, in its worker process (``real_model``).

Few and slow-ish on purpose (the rest of the suite stays fake-judged): built-in LLM scorers
scored for real, a typed reply with nested classes, Literal and lists, the judge cache and
trials, timeouts, cancellation and concurrent calls. Skipped without llama_cpp, except under
``CI=true``, where they fail instead.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import anyio
import attrs
import pytest

from scorecore import JudgeConfig, ModelSettings, PromptStep, ScorePromptStep, create_scorer
from scorecore import scorers as builtin
from scorecore.evals import run_evals
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters.cache import MemoryJudgeCache

pytestmark = [pytest.mark.real_model, pytest.mark.anyio]

CONTEXT = [
    "The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall.",
]
ITEMS = [
    {"id": "faithful", "input": "Where is the Eiffel Tower and when was it completed?",
     "output": "The Eiffel Tower is in Paris and was completed in 1889."},
    {"id": "unfaithful", "input": "Where is the Eiffel Tower and when was it completed?",
     "output": "The Eiffel Tower is in Rome and was completed in 1950."},
]


@pytest.fixture(scope="module")
def local() -> Any:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    return LocalModel()


def _executions(report: Any) -> list[Any]:
    return [
        execution
        for item in report.results
        for outcome in item.outcomes
        for executions in (outcome.result or outcome.run_error.partial).judge.values()
        for execution in executions
    ]


# The slowest test runs on one backend (the others run on both).
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_builtin_llm_scorers_score_every_run(local: Any, anyio_backend: str) -> None:
    """faithfulness, hallucination and answer_relevancy, judged by the 135M model: no run fails
    (a weak judge, so no assertion on the scores themselves), every reply parses (constrained
    decoding), tokens reported. A reply that restates the prompt's worked example is asked
    again once, without the example; that run may then end not scorable (the judge undecided,
    or a reply that found nothing to judge), never failed, and never scored from the echo."""
    scorers = [
        builtin.faithfulness(local, context=CONTEXT, shape=builtin.TEXT),
        builtin.hallucination(local, context=CONTEXT, shape=builtin.TEXT),
        builtin.answer_relevancy(local, shape=builtin.TEXT),
    ]
    report = await run_evals(ITEMS, scorers, keep_results=True, max_failures=None)
    outcomes = [(o.scorer_id, o.status, o.error) for r in report.results for o in r.outcomes]
    assert all(status in ("scored", "not_scorable") for _, status, _ in outcomes), outcomes
    scored = [o for r in report.results for o in r.outcomes if o.status == "scored"]
    assert scored, outcomes
    for outcome in scored:
        assert outcome.score is not None
        assert 0 <= outcome.score <= 1
    executions = _executions(report)
    assert executions
    for execution in executions:
        assert execution.status == "success"
        # the grammar holds every reply to its schema: a second attempt is only the echo's
        assert execution.attempt_count in (1, 2), execution.raw_output
        assert execution.model_id == "SmolLM2-135M-Instruct.Q4_1.gguf"
        assert execution.provider == "llama.cpp"
        assert execution.structured_output == "grammar"
        assert execution.usage.input_tokens > 0
        assert execution.usage.output_tokens > 0


@attrs.frozen
class Finding:
    claim: str
    verdict: Literal["supported", "unsupported"]


@attrs.frozen
class Review:
    findings: list[Finding]
    overall: Literal["good", "bad"]
    tags: list[str]


async def test_a_typed_reply_with_nested_classes_literals_and_lists(
    local: Any, anyio_backend: str
) -> None:
    """The reply is decoded under the schema generated from Review and structured into it."""
    scorer = (
        create_scorer(id="typed", description="d", judge=JudgeConfig(
            model=local, instructions="You review answers. Reply in JSON."))
        .analyze(PromptStep(
            description="review",
            output_type=Review,
            create_prompt=lambda ctx: (
                f"Context: {CONTEXT[0]}\nAnswer: {ctx.run.output}\n"
                "List each claim of the answer with verdict supported or unsupported, "
                "an overall rating good or bad, and a few tags."),
        ))
        .generate_score(lambda ctx: 1.0 if ctx.results.analyze_step_result.overall == "good"
                        else 0.0)
    )
    result = (await scorer.run(input="q", output=ITEMS[1]["output"])).unwrap()
    review = result.analyze_step_result
    assert isinstance(review, Review)
    assert all(isinstance(f, Finding) for f in review.findings)
    assert all(f.verdict in ("supported", "unsupported") for f in review.findings)
    assert review.overall in ("good", "bad")
    assert all(isinstance(t, str) for t in review.tags)
    assert result.score in (0.0, 1.0)
    assert result.judge["analyze"][0].attempt_count == 1


async def test_the_judge_cache_answers_a_rerun_and_trials_ask_again(
    local: Any, anyio_backend: str
) -> None:
    """Second run: every reply from the cache, 0 model calls, the same scores. trials=2 asks
    the model again for the second trial (the cache key has the trial index)."""
    scorer = create_scorer(id="rate", description="d", judge=JudgeConfig(
        model=local, instructions="Rate how well the answer fits the question from 0 to 1.",
    )).generate_score(ScorePromptStep(
        description="rate", create_prompt=lambda ctx: f"Q: {ctx.run.input}\nA: {ctx.run.output}",
        calculate_score=lambda ctx: min(1.0, max(0.0, ctx.judge_output["score"])),
    ))
    cache = MemoryJudgeCache()
    first = await run_evals(ITEMS, [scorer], cache=cache, keep_results=True)
    assert first.economics is not None
    assert (first.economics.cache_hits, first.economics.cache_misses) == (0, 2)
    second = await run_evals(ITEMS, [scorer], cache=cache, keep_results=True)
    assert second.economics is not None
    assert (second.economics.cache_hits, second.economics.cache_misses) == (2, 0)
    assert sum(e.model_call_count for e in _executions(second)) == 0
    assert [o.score for r in second.results for o in r.outcomes] == \
        [o.score for r in first.results for o in r.outcomes]
    trials = await run_evals(ITEMS, [scorer], cache=cache, trials=2, keep_results=True)
    assert trials.economics is not None
    assert (trials.economics.cache_hits, trials.economics.cache_misses) == (2, 2)


def _request(content: str, **settings: Any) -> JudgeRequest:
    return JudgeRequest(
        messages=[JudgeMessage(role="user", content=content)],
        settings=ModelSettings(**settings),
    )


async def test_replies_are_deterministic_and_capped(local: Any, anyio_backend: str) -> None:
    """Greedy by default: the same request gets the same reply; max_output_tokens caps it."""
    request = _request("Write a long story about a dragon.", max_output_tokens=12)
    first = (await local.generate(request)).unwrap()
    second = (await local.generate(request)).unwrap()
    assert first.text == second.text
    assert first.usage.output_tokens <= 12
    assert first.finish_reason == "length"


async def test_a_string_that_runs_on_is_closed_so_the_reply_stays_json(
    local: Any, anyio_backend: str
) -> None:
    """A reply that counts on inside a string used to run to the output cap and end as
    unterminated JSON (a format failure: noise_sensitivity's "117 different types of grapes,
    118 …"); the grammar now closes an unbounded string at STRING_BOUND characters and the
    reply ends as JSON of the schema's shape, the fields after the string included."""
    import json  # noqa: PLC0415

    from scorecore_adapters._grammar import STRING_BOUND  # noqa: PLC0415

    schema = {"type": "object", "required": ["story", "score"],
              "properties": {"story": {"type": "string"}, "score": {"type": "number"}}}
    request = attrs.evolve(
        _request("Count from 1 to 500 inside the story field, like 1, 2, 3, ...",
                 max_output_tokens=400),
        output_schema=schema, native_schema=True, step="analyze")
    reply = (await local.generate(request)).unwrap()
    assert reply.finish_reason == "stop"
    value = json.loads(reply.text, strict=False)
    assert set(value) == {"story", "score"}
    assert len(value["story"]) == STRING_BOUND


async def test_a_timeout_is_a_timeout_error(local: Any, anyio_backend: str) -> None:
    error = (await local.generate(_request("Count to one thousand.", timeout=0.001,
                                           max_output_tokens=500))).failure()
    assert (error.kind, error.code, error.is_retryable) == ("timeout", "ETIMEDOUT", True)
    assert "no reply within 0.001 s" in error.message
    after = await local.generate(_request("Say hi.", max_output_tokens=4))
    assert after.unwrap().text  # the model is usable again


async def test_a_prompt_longer_than_the_context_is_a_context_length_error(
    anyio_backend: str,
) -> None:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    small = LocalModel(n_ctx=256)
    error = (await small.generate(_request("word " * 400))).failure()
    assert (error.kind, error.code, error.is_retryable) == (
        "context_length", "context_length_exceeded", False)
    assert "LocalModel(n_ctx=...)" in error.message


async def test_concurrent_calls_share_one_model(local: Any, anyio_backend: str) -> None:
    """Calls from many tasks (and another LocalModel of the same file) queue for the one
    loaded model and all succeed; a cancelled call stops and leaves the model usable."""
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    twin = LocalModel()
    texts: list[str] = []

    async def ask(model: Any) -> None:
        reply = await model.generate(_request("Say yes.", max_output_tokens=5))
        texts.append(reply.unwrap().text)

    async with anyio.create_task_group() as tg:
        for model in (local, twin, local, twin):
            tg.start_soon(ask, model)
    assert len(texts) == 4
    assert len(set(texts)) == 1  # same model, same greedy reply
    with anyio.move_on_after(0.05):
        await local.generate(_request("Count to one thousand.", max_output_tokens=1000))
    started = time.monotonic()
    reply = await local.generate(_request("Say yes.", max_output_tokens=5))
    assert reply.unwrap().text == texts[0]
    assert time.monotonic() - started < 10  # the cancelled generation did not run to its end


def test_two_files_of_one_name_never_share_cache_entries(tmp_path: Any) -> None:
    """Two LocalModels of one file name (one model_id) answer from different files: their
    cache identities differ, so neither reads the other's judge cache entries; the same file
    twice keeps one identity."""
    from scorecore_adapters.local import LocalModel, bundled_model_path  # noqa: PLC0415

    other = tmp_path / bundled_model_path().name
    other.write_bytes(b"GGUF" + bytes(16))  # never loaded: the identity is read at build
    bundled, copy = LocalModel(), LocalModel(other)
    assert bundled.model_id == copy.model_id
    assert bundled.cache_identity != copy.cache_identity
    assert LocalModel().cache_identity == bundled.cache_identity
    assert str(bundled.path) in bundled.cache_identity
