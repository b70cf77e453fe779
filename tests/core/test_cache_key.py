"""The cache key law: equal requests share a key in any process, any field change changes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st

from scorecore._core._cache import SchemaKey, request_key
from scorecore._core._output_schema import TypedSchema
from scorecore.judge import JudgeMessage, JudgeRequest, ModelSettings
from scorecore.judge.economics import cache_key

_text = st.text(max_size=40)
_json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)
_messages = st.lists(
    st.builds(JudgeMessage, role=st.sampled_from(["system", "user"]), content=st.text()),
    max_size=4,
)
_settings = st.builds(
    ModelSettings,
    temperature=st.none() | st.floats(0, 2),
    top_p=st.none() | st.floats(0, 1),
    max_output_tokens=st.none() | st.integers(1, 10_000),
    seed=st.none() | st.integers(),
    extra=st.dictionaries(_text, _json, max_size=3),
)
_requests = st.builds(
    JudgeRequest,
    messages=_messages,
    output_schema=st.none() | st.dictionaries(_text, _json, max_size=4),
    native_schema=st.booleans(),
    settings=_settings,
)


def _reordered(value: Any) -> Any:
    """The same value with every mapping built in reverse key order."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


def _key(
    request: JudgeRequest, *, provider: str = "p", model_id: str = "m", trial: int = 0
) -> str:
    return cache_key(request, provider=provider, model_id=model_id, trial=trial)


@given(_requests)
def test_equal_requests_share_a_key_whatever_the_mapping_order(request: JudgeRequest) -> None:
    """A request rebuilt with every dict in another order has the same key."""
    rebuilt = attrs.evolve(
        request,
        output_schema=_reordered(request.output_schema),
        settings=attrs.evolve(request.settings, extra=_reordered(dict(request.settings.extra))),
    )
    assert _key(rebuilt) == _key(request)
    assert len(_key(request)) == 64


@given(_requests, st.data())
def test_any_field_change_changes_the_key(request: JudgeRequest, data: st.DataObject) -> None:
    """Changing the provider, model, trial, a message, the schema, its routing or a setting."""
    field = data.draw(st.sampled_from([
        "provider", "model_id", "trial", "messages", "output_schema", "native_schema",
        "temperature", "top_p", "max_output_tokens", "seed", "extra",
    ]))
    base = _key(request)
    if field in ("provider", "model_id"):
        other = data.draw(_text.filter(lambda t: t not in {"p", "m"}))
        changed_key = _key(request, provider=other) if field == "provider" else _key(
            request, model_id=other)
        assert changed_key != base
        return
    if field == "trial":
        assert _key(request, trial=data.draw(st.integers(1, 10**6))) != base
        return
    changed: JudgeRequest
    if field == "messages":
        extra = data.draw(st.builds(JudgeMessage, role=st.just("user"), content=st.text()))
        changed = attrs.evolve(request, messages=(*request.messages, extra))
    elif field == "output_schema":
        schema = data.draw(st.dictionaries(_text, _json, max_size=4).filter(
            lambda s: s != request.output_schema))
        changed = attrs.evolve(request, output_schema=schema)
    elif field == "native_schema":
        changed = attrs.evolve(request, native_schema=not request.native_schema)
    else:
        old = getattr(request.settings, field)
        strategy = {
            "temperature": st.floats(0, 2), "top_p": st.floats(0, 1),
            "max_output_tokens": st.integers(1, 10_000), "seed": st.integers(),
            "extra": st.dictionaries(_text, _json, min_size=1, max_size=3),
        }[field]
        new: Any = data.draw(strategy.filter(lambda v: v != old))
        changed = attrs.evolve(request, settings=attrs.evolve(request.settings, **{field: new}))
    assert _key(changed) != base


def test_values_that_look_alike_get_different_keys() -> None:
    """1, 1.0, True and "1" in a schema, and a split between messages, are all told apart."""
    def req(schema: Any, *contents: str) -> JudgeRequest:
        return JudgeRequest(
            messages=[JudgeMessage(role="user", content=c) for c in contents],
            output_schema={"x": schema},
        )

    keys = {_key(req(v, "a")) for v in (1, 1.0, True, "1", [1], {"1": 1}, None)}
    assert len(keys) == 7
    assert _key(req(1, "ab", "c")) != _key(req(1, "a", "bc"))


def test_timeout_and_step_are_left_out_of_the_key() -> None:
    """How long to wait and which step asks do not change what the judge answers."""
    request = JudgeRequest(messages=[JudgeMessage(role="user", content="q")])
    other = attrs.evolve(request, settings=ModelSettings(timeout=3.0), step="analyze")
    assert _key(other) == _key(request)


def test_huge_deep_and_odd_values_have_a_key() -> None:
    """A 5,000-digit int, 3,000-deep nesting and lone surrogates are hashed, not refused."""
    deep: Any = "leaf"
    for _ in range(3_000):
        deep = {"k": [deep]}
    request = JudgeRequest(
        messages=[JudgeMessage(role="user", content="\ud800 odd \x00")],
        output_schema={"big": 10**5_000, "deep": deep},
    )
    assert _key(request) == _key(attrs.evolve(request))
    assert _key(request) != _key(attrs.evolve(request, output_schema={"big": 10**5_000 + 1,
                                                                       "deep": deep}))


_SCRIPT = """
import json, sys
from scorecore.judge import JudgeMessage, JudgeRequest, ModelSettings
from scorecore.judge.economics import cache_key
spec = json.loads(sys.argv[1])
request = JudgeRequest(
    messages=[JudgeMessage(role=r, content=c) for r, c in spec["messages"]],
    output_schema=spec["schema"], native_schema=True,
    settings=ModelSettings(temperature=0.0, extra=spec["extra"]),
)
print(cache_key(request, provider="openai", model_id="gpt-4o-mini", trial=2))
"""


def test_the_key_is_the_same_in_other_processes_and_hash_seeds() -> None:
    """String hashing is randomised per process; the key must not depend on it."""
    spec = {
        "messages": [["system", "Grade it."], ["user", "Ünïcode ✓ answer"]],
        "schema": {"type": "object", "properties": {"score": {"type": "number"}},
                   "required": ["score"]},
        "extra": {"b": {"y": 1, "x": [1, 2]}, "a": None},
    }
    keys = set()
    for seed in ("0", "1", "12345", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run(  # noqa: S603 - our own interpreter and script
            [sys.executable, "-c", _SCRIPT, json.dumps(spec)],
            capture_output=True, text=True, env=env, check=True, timeout=60,
        )
        keys.add(out.stdout.strip())
    request = JudgeRequest(
        messages=[JudgeMessage(role=r, content=c) for r, c in spec["messages"]],  # type: ignore[arg-type]
        output_schema=spec["schema"], native_schema=True,  # type: ignore[arg-type]
        settings=ModelSettings(temperature=0.0, extra=spec["extra"]),  # type: ignore[arg-type]
    )
    assert keys == {cache_key(request, provider="openai", model_id="gpt-4o-mini", trial=2)}


_mixed = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.integers(-3, 3) | st.booleans() | _text, inner, max_size=4),
    max_leaves=15,
)


@given(st.dictionaries(st.integers(-3, 3) | _text, _mixed, min_size=1, max_size=4))
def test_non_str_keys_hash_canonically_and_apart_from_their_str_form(schema: Any) -> None:
    """Int or bool keys (no JSON has them) take the exact path: order-free, and never equal
    to the same mapping with the keys written as strings."""
    def req(s: Any) -> JudgeRequest:
        return JudgeRequest(messages=[JudgeMessage(role="user", content="q")], output_schema=s)

    assert _key(req(_reordered(schema))) == _key(req(schema))
    as_text = {str(k): v for k, v in schema.items()}
    if as_text != schema:
        assert _key(req(as_text)) != _key(req(schema))


def test_a_json_schema_and_an_int_keyed_one_each_keep_their_key() -> None:
    """The fast (JSON) path and the exact path are each stable, and never collide."""
    plain = JudgeRequest(messages=[JudgeMessage(role="user", content="q")],
                         output_schema={"type": "object"})
    odd = JudgeRequest(messages=[JudgeMessage(role="user", content="q")],
                       output_schema={1: "one"})
    assert _key(plain) == _key(attrs.evolve(plain))
    assert _key(odd) == _key(attrs.evolve(odd))
    assert _key(plain) != _key(odd)


def _previous_key(
    request: JudgeRequest, *, provider: str, model_id: str, trial: int = 0,
    identity: str | None = None,
) -> str:
    """cache_key as the previous release wrote it: one walk and one json.dumps of it all."""
    import hashlib  # noqa: PLC0415 - the reference needs it alone

    from scorecore._core._cache import _KEY_VERSION, _feed, _plain_json  # noqa: PLC0415

    settings = request.settings
    canonical = {
        "provider": provider, "model_id": model_id, "trial": trial,
        "messages": [(m.role, m.content) for m in request.messages],
        "output_schema": request.output_schema, "native_schema": request.native_schema,
        **({} if identity is None else {"identity": identity}),
        "settings": {"temperature": settings.temperature, "top_p": settings.top_p,
                     "max_output_tokens": settings.max_output_tokens, "seed": settings.seed,
                     "extra": settings.extra},
    }
    if _plain_json(canonical):
        text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), allow_nan=True)
        return hashlib.sha256(_KEY_VERSION + b"J" + text.encode()).hexdigest()
    out = [_KEY_VERSION]
    _feed(out, canonical)
    return hashlib.sha256(b"".join(out)).hexdigest()


_odd_schema = st.dictionaries(st.integers(-3, 3) | _text, _mixed, max_size=3)


@given(
    _requests, st.none() | _text, st.integers(0, 3) | st.just(2**50_000),
    st.none() | _odd_schema | st.builds(
        lambda s: TypedSchema(s, output_type=dict), st.dictionaries(_text, _json, max_size=3)),
)
def test_keys_are_the_previous_release_s_so_old_caches_still_hit(
    request: JudgeRequest, identity: str | None, trial: int, schema: Any,
) -> None:
    """The key of any request, written in parts (the schema's once per step), is the key the
    previous release computed in one go: a cache filled before the change still hits."""
    if schema is not None:
        request = attrs.evolve(request, output_schema=schema)
    expected = _previous_key(request, provider="p", model_id="m", trial=trial,
                             identity=identity)
    assert cache_key(request, provider="p", model_id="m", trial=trial,
                     identity=identity) == expected
    compiled = SchemaKey(request.output_schema)
    assert request_key(request, provider="p", model_id="m", trial=trial, identity=identity,
                       schema=compiled) == expected


def test_known_requests_keep_their_keys() -> None:
    """Keys written by earlier releases, pinned: the JSON path, a plain-text request, a typed
    schema, int keys and a huge seed (the exact path)."""
    short = [JudgeMessage(role="user", content="q")]
    requests = {
        "7a0f0c107ff59456a44df1a2b6bf69a773e3dfac29f750ed86d1eadde8e3e701": (JudgeRequest(
            messages=[JudgeMessage(role="system", content="Grade it."),
                      JudgeMessage(role="user", content="Ünïcode ✓ \ud800")],
            output_schema={"type": "object", "properties": {"score": {"type": "number"}},
                           "required": ["score"]},
            native_schema=True,
            settings=ModelSettings(temperature=0.0, max_output_tokens=1024,
                                   extra={"b": [1, 2.5], "a": None}),
        ), {"provider": "openai", "model_id": "gpt-4o-mini", "trial": 2, "identity": "http://h"}),
        "d475aa23c273168823b78e8bad27d52de18d954a78cd746ed81561731bfc8bb7": (
            JudgeRequest(messages=short), {}),
        "b1c66abce7d81e8f6ec6a99534bedfaf49d4ef2e92cf507d290eae01129ff434": (JudgeRequest(
            messages=short, output_schema=TypedSchema({"type": "string"}, output_type=str),
        ), {"trial": 1}),
        "d06f8830f7683b38fb4f1cb28a18a4b538181ef51bb160a864706f4c1c00bbef": (JudgeRequest(
            messages=short, output_schema={1: "one", "x": (1, 2)}), {}),
        "11a7a92a12726319491b04e1f912e1ff3e087a8e65496ab30a15c14501fe181c": (JudgeRequest(
            messages=short, output_schema={"type": "number"},
            settings=ModelSettings(seed=10**5000)), {}),
    }
    for key, (request, options) in requests.items():
        assert cache_key(request, **{"provider": "p", "model_id": "m", **options}) == key
