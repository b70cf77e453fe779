"""The prompt step's warm path: a cache filled by an earlier release still answers every step
with what the asking run got, keys written in parts are the previous release's, and the values
built without their checks equal those the checked constructors build."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from scorecore import (
    JudgeConfig,
    PromptStep,
    Runtime,
    ScorePromptStep,
    StepJudge,
    create_scorer,
)
from scorecore._core._cache import SchemaKey, request_key
from scorecore._core._invoke import _message, _request  # the judge loop's constructors
from scorecore._core._slot_init import fast_replace
from scorecore.judge import (
    JudgeMessage,
    JudgeRequest,
    JudgeResponse,
    JudgeUsage,
    ModelSettings,
)
from scorecore.judge.economics import JudgeMeter
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import virtual_runtime
from tests.core.test_cache_key import _previous_key  # the previous release's key

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


@pytest.mark.anyio
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


_SETTINGS = [ModelSettings(), ModelSettings(max_output_tokens=1024),
             ModelSettings(temperature=0.0, seed=7), ModelSettings(temperature=0, top_p=1.0),
             ModelSettings(extra={"top_k": 3})]
_asks = st.tuples(
    st.sampled_from(range(len(_SETTINGS))), st.sampled_from(["p", "q"]),
    st.sampled_from(["m", "n"]), st.integers(0, 2), st.sampled_from([None, "http://h"]),
    st.booleans(), st.text(max_size=5),
)


@given(st.lists(_asks, min_size=1, max_size=12))
def test_one_step_s_requests_in_a_row_keep_the_previous_release_s_keys(asks: list[Any]) -> None:
    """A step's schema key serves many requests (the same settings objects again and again,
    other models, trials and routings): each gets the key one json.dumps of it gives."""
    schema = SchemaKey(CLAIMS)
    system = JudgeMessage(role="system", content="Grade it.")
    for index, provider, model_id, trial, identity, native, prompt in asks:
        request = JudgeRequest(messages=(system, JudgeMessage(role="user", content=prompt)),
                               output_schema=CLAIMS, native_schema=native,
                               settings=_SETTINGS[index])
        assert request_key(request, provider=provider, model_id=model_id, trial=trial,
                           identity=identity, schema=schema) == _previous_key(
            request, provider=provider, model_id=model_id, trial=trial, identity=identity)


def test_settings_whose_extra_changes_between_requests_change_the_key() -> None:
    """``extra`` is a mapping a caller may still change: a key is never kept for it."""
    extra: dict[str, Any] = {}
    settings = ModelSettings(extra=extra)
    schema = SchemaKey(CLAIMS)
    request = JudgeRequest(messages=(JudgeMessage(role="user", content="q"),),
                           output_schema=CLAIMS, settings=settings)
    before = request_key(request, provider="p", model_id="m", trial=0, identity=None,
                         schema=schema)
    assert before == _previous_key(request, provider="p", model_id="m")
    extra["top_k"] = 3
    after = request_key(request, provider="p", model_id="m", trial=0, identity=None,
                        schema=schema)
    assert after == _previous_key(request, provider="p", model_id="m") != before


@attrs.frozen
class _Checked:
    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    value: Any = None
    count: int = 0


@given(st.text(), st.integers(), st.integers() | st.text() | st.none())
def test_fast_replace_builds_what_evolve_builds(name: str, count: int, value: Any) -> None:
    """The copy with one field replaced equals, and reprs as, ``attrs.evolve``'s."""
    original = _Checked(name=name, count=count)
    copied = fast_replace(_Checked, "value")(original, value)
    assert copied == attrs.evolve(original, value=value)
    assert repr(copied) == repr(attrs.evolve(original, value=value))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        copied.__setattr__("value", 1)


@attrs.frozen
class _Converted:
    value: Any = None
    count: int = attrs.field(default=0, converter=int)


@pytest.mark.parametrize(("cls", "field", "why"), [
    (_Checked, "name", "checked by __init__"),
    (_Converted, "value", "converted by __init__"),
    (_Checked, "missing", "no such field"),
])
def test_fast_replace_refuses_what_it_would_not_copy_alike(
    cls: type, field: str, why: str
) -> None:
    """A new value a validator would check, or a converter ``evolve`` would run again: refused
    when the function is made, naming the class and the field."""
    with pytest.raises(TypeError, match=why) as caught:
        fast_replace(cls, field)
    assert cls.__qualname__ in str(caught.value)
    assert repr(field) in str(caught.value)


@given(st.sampled_from(["system", "user"]), st.text(), st.booleans())
def test_the_judge_loop_s_messages_and_requests_are_what_init_builds(
    role: Any, content: str, native: bool
) -> None:
    """The judge loop builds its messages and requests without running their checks again:
    the values equal, and repr as, what the checked constructors build, and stay frozen."""
    message = _message(role, content)
    assert message == JudgeMessage(role=role, content=content)
    assert repr(message) == repr(JudgeMessage(role=role, content=content))
    settings = ModelSettings(max_output_tokens=64)
    request = _request((message,), CLAIMS, native, settings, "analyze", None)
    checked = JudgeRequest(messages=[message], output_schema=CLAIMS, native_schema=native,
                           settings=settings, step="analyze")
    assert request == checked
    assert type(request.messages) is tuple
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        message.__setattr__("content", "changed")


_routings = st.sampled_from(["native", "inline", "system"])


@given(st.lists(st.tuples(_asks, _routings, st.text(min_size=1, max_size=8)), min_size=1,
                max_size=8))
def test_a_key_written_from_the_prompt_is_the_key_of_the_request_sent(asks: list[Any]) -> None:
    """The judge loop keys a cached step from its prompt alone (the request is built only when
    the judge is asked): for any prompt, instructions, routing, settings, model and trial, the
    key is the previous release's key of the request the loop would send."""
    from scorecore._core._cache import prompt_key, prompt_key_parts  # noqa: PLC0415
    from scorecore._core._invoke import _messages  # noqa: PLC0415
    from scorecore._core._output_schema import compile_schema  # noqa: PLC0415

    schema = compile_schema(CLAIMS)
    for (index, provider, model_id, trial, identity, native, prompt), routing, system in asks:
        sent = routing == "native" and native
        messages = _messages(system, schema, "native" if sent else routing, prompt)
        request = JudgeRequest(messages=messages, output_schema=CLAIMS, native_schema=sent,
                               settings=_SETTINGS[index])
        parts = prompt_key_parts(
            _SETTINGS[index], provider, model_id, trial, identity, sent, schema.key, system,
            schema.system_note if routing == "system" else "",
            schema.inline_note if routing == "inline" else "")
        if _SETTINGS[index].extra:  # another path: the request is built and keyed whole
            assert parts is None
            continue
        assert parts is not None
        assert prompt_key(parts, prompt) == _previous_key(
            request, provider=provider, model_id=model_id, trial=trial, identity=identity)
