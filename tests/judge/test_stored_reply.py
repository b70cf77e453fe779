"""stored_reply: a cache's reply built from its stored fields, as JudgeResponse builds it, or
refused when a field holds what no reply does."""

from __future__ import annotations

import pickle
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.judge import JudgeResponse, JudgeUsage, TokenLogprob
from scorecore.judge.economics import reply_with_text, stored_reply

_MODES = ["json_schema", "json_object", "tool", "grammar", "prompt", "native"]
_COUNTS = ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens",
           "cached_input_tokens")
# Neither None, nor an int nor a str: wrong for every field.
_ODD = st.sampled_from([True, False, 1.5, b"x", [1], {"a": 1}, -0.0])


def _fields(good: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Every field a reply holds (``good``), or the same with one field of a wrong type."""
    count = st.none() | st.integers(min_value=-5, max_value=10**12)
    text_or_none = st.none() | st.text(max_size=5)
    valid = st.fixed_dictionaries({
        "text": st.text(max_size=20),
        **dict.fromkeys(_COUNTS, count),
        "finish_reason": text_or_none,
        "model_id": text_or_none,
        "structured_output": st.none() | st.sampled_from([*_MODES, "telepathy"]),
    })
    if good:
        return valid
    # A count given as a str, a text (or name, or mode) as an int, or a value wrong for all.
    wrong = st.sampled_from(["text", *_COUNTS, "finish_reason", "model_id",
                             "structured_output"]).flatmap(lambda name: st.tuples(
                                 st.just(name), _ODD | st.just("12" if name in _COUNTS else 12)))
    return st.tuples(valid, wrong).map(lambda drawn: {**drawn[0], drawn[1][0]: drawn[1][1]})


@given(_fields(good=True))
def test_a_reply_is_what_judge_response_builds(fields: dict[str, Any]) -> None:
    """The law: the same value (equal, same repr and hash, frozen, pickles), an unknown mode
    read as none."""
    reply = stored_reply(**fields)
    mode = fields["structured_output"]
    expected = JudgeResponse(
        text=fields["text"], usage=JudgeUsage(**{name: fields[name] for name in _COUNTS}),
        finish_reason=fields["finish_reason"], model_id=fields["model_id"],
        structured_output=mode if mode in _MODES else None,
    )
    assert type(reply) is JudgeResponse
    assert type(reply.usage) is JudgeUsage
    assert reply == expected
    assert repr(reply) == repr(expected)
    assert hash(reply) == hash(expected)
    assert pickle.loads(pickle.dumps(reply)) == expected  # noqa: S301 - our own bytes
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        reply.text = "edited"  # type: ignore[misc]


@given(_fields(good=False))
def test_a_field_of_the_wrong_type_is_refused(fields: dict[str, Any]) -> None:
    """A text that is not a str, a count that is not an int (a bool or a float), a finish
    reason, model id or mode that is neither None nor a str: no reply."""
    assert stored_reply(**fields) is None


@given(_fields(good=True), st.text(max_size=20), st.booleans())
def test_a_reply_with_another_text_is_what_evolve_builds(
    fields: dict[str, Any], text: str, logprobs: bool
) -> None:
    """reply_with_text: the value attrs.evolve builds (every other field kept, log-probabilities
    too), frozen; the reply it started from is unchanged."""
    reply = stored_reply(**fields)
    assert reply is not None
    if logprobs:
        reply = attrs.evolve(reply, logprobs=(TokenLogprob(token="a", logprob=-0.5),))
    copied = reply_with_text(reply, text)
    assert copied is not None
    expected = attrs.evolve(reply, text=text)
    assert type(copied) is JudgeResponse
    assert copied == expected
    assert repr(copied) == repr(expected)
    assert reply.text == fields["text"]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        copied.text = "edited"  # type: ignore[misc]


@pytest.mark.parametrize("text", [None, 3, b"yes", ["yes"]])
def test_another_text_that_is_not_a_str_is_refused(text: object) -> None:
    """A text that is not a str gives no reply (as JudgeResponse refuses it)."""
    assert reply_with_text(JudgeResponse(text="yes"), text) is None
