"""A judge's reply as a cache entry, and back: the JSON text every cache backend stores.

``encode`` writes a reply as one JSON object (its text, usage, finish reason, model id, how
the schema was held, and log-probabilities when it has them); ``decode`` reads any entry back,
or ``None`` for one it cannot trust (damaged, or not written by scorecore); ``plain_row`` is
``decode``'s fast path for the common entry, which a warm re-run reads tens of thousands of
times; a :class:`RowReader` reads the rows of a file cache faster still.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from scorecore.judge import JudgeResponse, JudgeUsage, StructuredOutputMode
from scorecore.judge.economics import reply_with_text, stored_reply
from scorecore_adapters._logprobs import from_row, to_row

__all__: list[str] = []  # internal: the judge caches'

_Json = Any  # a value as json reads it

_USAGE_FIELDS = tuple(f.name for f in attrs.fields(JudgeUsage))
_MODES: Mapping[str, StructuredOutputMode] = {
    mode: mode for mode in StructuredOutputMode.__args__  # type: ignore[attr-defined]
}


def encode(response: JudgeResponse) -> str:
    row: dict[str, object] = {
        "text": response.text,
        "usage": {name: getattr(response.usage, name) for name in _USAGE_FIELDS},
        "finish_reason": response.finish_reason,
        "model_id": response.model_id,
        "structured_output": response.structured_output,
    }
    if response.logprobs is not None:  # absent otherwise: a row reads as it always did
        row["logprobs"] = to_row(response.logprobs)
    return json.dumps(row, ensure_ascii=False)


# The JSON reader json.loads ends in: a row written by encode is one JSON object with
# nothing around it, read without json.loads' layers (anything else goes through json.loads).
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed


def load(data: Any) -> Any:
    if type(data) is str:
        try:
            raw, end = _scan(data, 0)
        except StopIteration:
            pass
        else:
            if end == len(data):
                return raw
    return json.loads(data) if isinstance(data, str | bytes) else data


# PostgreSQL's jsonb refuses U+0000 (as "\u0000" or raw), which a reply's text or model id may
# hold: such a row is stored as encode's JSON text inside a one-key object, which jsonb takes
# (the escape's backslash is then an escaped character) and decode unwraps.
WRAPPED = "encodedReply"
NUL_ESCAPE = "\\u0000"


_USAGE_KEYS = frozenset(_USAGE_FIELDS)
_ROW_KEYS = frozenset(("text", "usage", "finish_reason", "model_id", "structured_output"))


def plain_row(raw: object) -> JudgeResponse | None:
    """The reply of a row as :func:`encode` writes one without log-probabilities (what a
    warm re-run reads back tens of thousands of times), or ``None`` for any other row, which
    :func:`decode` then reads its own way. Every check :func:`decode` makes, made on exact
    types by ``stored_reply``, which builds the reply without ``JudgeResponse``'s keyword
    call."""
    if type(raw) is not dict or raw.keys() != _ROW_KEYS:
        return None
    usage = raw["usage"]
    if type(usage) is not dict or usage.keys() != _USAGE_KEYS:
        return None
    return stored_reply(
        text=raw["text"], input_tokens=usage["input_tokens"],
        output_tokens=usage["output_tokens"], total_tokens=usage["total_tokens"],
        reasoning_tokens=usage["reasoning_tokens"],
        cached_input_tokens=usage["cached_input_tokens"], finish_reason=raw["finish_reason"],
        model_id=raw["model_id"], structured_output=raw["structured_output"],
    )


def decode(data: Any) -> JudgeResponse | None:
    """The stored reply, or ``None`` for anything not written by :func:`encode`."""
    try:
        raw = load(data)
        plain = plain_row(raw)
        if plain is not None:
            return plain
        if isinstance(raw, dict) and raw.keys() == {WRAPPED}:
            raw = json.loads(raw[WRAPPED])
        usage = raw["usage"]
        counts = {name: usage.get(name) for name in _USAGE_FIELDS}
        for v in counts.values():
            if v is not None and (type(v) is bool or not isinstance(v, int)):
                return None
        finish, model_id = raw.get("finish_reason"), raw.get("model_id")
        if not (finish is None or isinstance(finish, str)) or not (
            model_id is None or isinstance(model_id, str)
        ):
            return None
        # Written before modes were recorded, or by a newer scorecore with a mode this one
        # does not know: the reply is still good, its mode unknown.
        mode = raw.get("structured_output")
        known = _MODES.get(mode) if isinstance(mode, str) else None
        logprobs = raw.get("logprobs")
        return JudgeResponse(
            text=raw["text"], usage=JudgeUsage(**counts), finish_reason=finish,
            model_id=model_id, structured_output=known,
            logprobs=None if logprobs is None else from_row(logprobs),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


# How encode starts every row (json.dumps' separators, "text" the first key), and the reader of
# the JSON string that follows, as the JSON scanner reads it (strict: no raw control character).
_TEXT_FIRST = '{"text": "'
_scanstring: Callable[[str, int], tuple[str, int]] = (
    json.decoder.scanstring)  # type: ignore[attr-defined]  # typeshed lists it not
_RESTS_SIZE = 256


def _unique_keys(pairs: list[tuple[str, _Json]]) -> dict[str, _Json]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # a second "text" would replace the one read ahead of it
        raise ValueError("a key is repeated")
    return obj


_read_unique: Any = json.JSONDecoder(object_pairs_hook=_unique_keys).decode


class RowReader:
    """Reads the rows of one cache as :func:`decode` does, faster for the rows :func:`encode`
    writes: the JSON string of ``text`` is read on its own and the rest of the row (the
    usage, finish reason, model id and mode: the same in most rows of a cache) is read once
    per distinct text and kept.

    Reading ``'{"text": ""'`` followed by a row's rest gives that row's reply but for its
    text, because a JSON value is read the same whatever string stands before it — once the
    rest holds no second ``"text"`` (a repeated key is refused when the rest is first read).
    """

    __slots__ = ("_other", "_rests")

    def __init__(self) -> None:
        self._rests: dict[str, JudgeResponse] = {}
        # Rests read once and found not plain_row's (a row written before modes were
        # recorded, say): decode reads such rows at once, without a second reading here.
        self._other: set[str] = set()

    def read(self, data: str) -> JudgeResponse | None:
        """The reply of a row :func:`encode` wrote without log-probabilities, or ``None`` for
        any other row (which :func:`decode` then reads)."""
        if not data.startswith(_TEXT_FIRST):
            return None
        try:
            text, end = _scanstring(data, len(_TEXT_FIRST))
        except ValueError:
            return None
        rest = data[end:]
        shape = self._rests.get(rest)
        if shape is None:
            # A row with log-probabilities is not plain_row's (and its rest is its own): not
            # read twice here, decode reads it.
            if '"logprobs"' in rest or rest in self._other:
                return None
            shape = self._learn(rest)
            if shape is None:
                return None
        return reply_with_text(shape, text)

    def _learn(self, rest: str) -> JudgeResponse | None:
        try:
            shape = plain_row(_read_unique(f'{_TEXT_FIRST}"{rest}'))
        except ValueError:
            shape = None
        if shape is None:
            if len(self._other) >= _RESTS_SIZE:
                self._other.clear()
            self._other.add(rest)
            return None
        if len(self._rests) >= _RESTS_SIZE:
            self._rests.clear()
        self._rests[rest] = shape
        return shape
