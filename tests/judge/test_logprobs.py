"""Token log-probabilities: the values, the request setting, the cache key and the cache rows."""

from __future__ import annotations

import json
import math
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore import ScorerDefinitionError
from scorecore.judge import JudgeMessage, JudgeRequest, JudgeResponse, ModelSettings, TokenLogprob
from scorecore.judge.economics import cache_key
from scorecore_adapters.cache import MemoryJudgeCache, SqliteJudgeCache
from scorecore_adapters.testing import verdict_reply

_logprob = st.floats(max_value=0.0, allow_nan=False) | st.just(-math.inf)
_token = st.text(max_size=6)
_token_logprobs = st.builds(
    TokenLogprob, token=_token, logprob=_logprob,
    top=st.lists(st.tuples(_token, _logprob), max_size=4),
)
_logprob_responses = st.builds(
    JudgeResponse, text=st.text(max_size=20),
    logprobs=st.none() | st.lists(_token_logprobs, max_size=5).map(tuple),
)


def _request(**kwargs: Any) -> JudgeRequest:
    return JudgeRequest(
        messages=[JudgeMessage(role="user", content="Is 2+2=4?")],
        settings=ModelSettings(max_output_tokens=8, seed=3), output_schema={"type": "object"},
        **kwargs,
    )


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"token": "a", "logprob": 0.5}, "TokenLogprob.logprob"),
    ({"token": "a", "logprob": math.nan}, "TokenLogprob.logprob"),
    ({"token": "a", "logprob": True}, "TokenLogprob.logprob"),
    ({"token": "a", "logprob": -1.0, "top": [(1, -1.0)]}, "TokenLogprob.top"),
    ({"token": "a", "logprob": -1.0, "top": [("b", 2.0)]}, "TokenLogprob.top"),
])
def test_a_wrong_token_logprob_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    """A probability above 1, NaN, a bool or a non-text alternative is refused, naming it."""
    with pytest.raises(ScorerDefinitionError) as raised:
        TokenLogprob(**kwargs)
    assert raised.value.field == field


@pytest.mark.parametrize("value", [-1, 21, True, 2.0])
def test_a_wrong_top_logprobs_names_the_field(value: object) -> None:
    """A request asks for 0 to 20 alternatives per token, or none at all."""
    with pytest.raises(ScorerDefinitionError) as raised:
        _request(top_logprobs=value)
    assert raised.value.field == "JudgeRequest.top_logprobs"


def test_a_response_holds_a_tuple_of_token_logprobs() -> None:
    """Anything but a tuple of TokenLogprob (or None) is refused, naming the field."""
    with pytest.raises(ScorerDefinitionError, match=r"JudgeResponse\.logprobs"):
        JudgeResponse(text="x", logprobs=[TokenLogprob(token="x", logprob=0.0)])  # type: ignore[arg-type]


def test_asking_for_logprobs_is_another_cache_entry_and_not_asking_keeps_the_old_key() -> None:
    """The key of a request asking for none is the one written before the setting existed;
    each number of alternatives has its own key."""
    # The key this request had before JudgeRequest.top_logprobs existed: caches stay warm.
    before = "e6fc5ef58c2bdbdbc7559c98f0fd482c7b09d67f08baa84727f0718fda6b129c"
    keys = [cache_key(_request(top_logprobs=n), provider="openai", model_id="gpt-4o-mini")
            for n in (None, 0, 5, 20)]
    assert keys[0] == before
    assert len(set(keys)) == 4


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(response=_logprob_responses)
@pytest.mark.anyio
async def test_the_cache_replays_logprobs_exactly(
    anyio_backend: str, tmp_path: Path, response: JudgeResponse
) -> None:
    """Every token, log-probability (-inf included) and alternative reads back as it was put,
    from memory and from a file."""
    key = uuid.uuid4().hex
    memory = MemoryJudgeCache()
    await memory.put(key, response)
    assert await memory.get(key) == response
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        await cache.put(key, response)
        assert await cache.get(key) == response
        assert cache.errors == 0


@pytest.mark.anyio
async def test_a_row_written_before_logprobs_still_reads(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A cache row in the earlier format is a hit without log-probabilities; a row whose
    log-probabilities are damaged is a counted miss."""
    old = ('{"text": "{\\"score\\": 4}", "usage": {"input_tokens": null, "output_tokens": 3, '
           '"total_tokens": null, "reasoning_tokens": null, "cached_input_tokens": null}, '
           '"finish_reason": "stop", "model_id": null, "structured_output": "json_schema"}')
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        await cache.put("old", JudgeResponse(text="x"))
        await cache.put("bad", JudgeResponse(text="x"))
    with closing(sqlite3.connect(tmp_path / "c.db")) as db, db:
        db.execute("UPDATE scorecore_judge_cache SET response = ? WHERE key = 'old'", (old,))
        damaged = {**json.loads(old), "logprobs": [["4", 0.5, []]]}
        db.execute("UPDATE scorecore_judge_cache SET response = ? WHERE key = 'bad'",
                   (json.dumps(damaged),))
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        got = await cache.get("old")
        assert got is not None
        assert (got.text, got.logprobs, got.usage.output_tokens) == ('{"score": 4}', None, 3)
        assert await cache.get("bad") is None
        assert cache.errors == 1


def test_verdict_reply_puts_the_probabilities_on_the_verdict_token() -> None:
    """The fake reply's verdict token carries the given probabilities, likeliest first."""
    reply = verdict_reply("Verdict: no.", {"yes": 0.3, "no": 0.6}, chosen="no")
    assert reply.text == "Verdict: no."
    assert reply.logprobs is not None
    assert [t.token for t in reply.logprobs] == ["Verdict: ", "no", "."]
    verdict = reply.logprobs[1]
    assert [(t, round(math.exp(lp), 6)) for t, lp in verdict.top] == [("no", 0.6), ("yes", 0.3)]
    with pytest.raises(ScorerDefinitionError, match=r"verdict_reply\.chosen"):
        verdict_reply("Verdict: maybe", {"yes": 0.3, "no": 0.6})
