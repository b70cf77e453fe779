"""The judge cache port and the key a judge request is cached under.

A :class:`JudgeCache` maps a key to a judge reply. The key (:func:`cache_key`) is a SHA-256 of
the canonical request — provider, model id, the model's cache identity (its endpoint), settings
(with the output cap the call is sent with), messages, output schema and how the schema is
conveyed — and a *trial* index, so ``run_evals(..., trials=3)`` asks the judge three times
instead of reading one reply back twice.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Mapping
from typing import Final, Protocol, TypeAlias, final

import attrs

from scorecore._core._judge import JudgeRequest, JudgeResponse, ModelSettings

__all__ = ["JudgeCache", "cache_key"]

_KEY_VERSION = b"scorecore-judge-cache/1\x00"


class JudgeCache(Protocol):
    """Where judge replies are kept between runs (a file, a database, memory).

    Contract: ``get(key)`` returns the reply stored under ``key`` or ``None`` (a miss, or an
    entry that cannot be read back); ``put(key, response)`` stores it, replacing any earlier
    entry. Storage problems should not raise: a raising cache is treated by the core as a miss
    (``get``) or as a dropped entry (``put``), and the run goes on. The core only ``put``\\ s
    replies that passed the step's output processors and schema, never errors.
    """

    async def get(self, key: str, /) -> JudgeResponse | None: ...

    async def put(self, key: str, response: JudgeResponse, /) -> None: ...


class _Raw:
    """Bytes already encoded (a mapping key), written as they are."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def _token(tag: bytes, data: bytes) -> bytes:
    return tag + len(data).to_bytes(8, "big") + data


def _feed(out: list[bytes], value: object) -> None:
    """Append a canonical, type-tagged encoding of ``value`` to ``out`` (iteratively)."""
    # Every token is tagged and length-prefixed, so {"a": "bc"} and {"ab": "c"}, 1 and "1",
    # 1 and 1.0 and True never collide; mappings are sorted by their keys' encodings, so the
    # order a dict was built in does not matter.
    stack: list[object] = [value]
    push = stack.append
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(_token(b"s", item.encode("utf-8", "surrogatepass")))
        elif isinstance(item, _Raw):
            out.append(item.data)
        elif isinstance(item, Mapping):
            entries = sorted(((_key(k), v) for k, v in item.items()), key=_first)
            out.append(b"m" + len(entries).to_bytes(8, "big"))
            for key, val in reversed(entries):
                push(val)
                push(_Raw(key))
        elif isinstance(item, list | tuple):
            out.append(b"l" + len(item).to_bytes(8, "big"))
            stack.extend(reversed(item))
        elif item is None:
            out.append(b"N")
        elif isinstance(item, bool):
            out.append(b"T" if item else b"F")
        elif isinstance(item, int):
            # str() refuses ints past 4,300 digits; hex() does not, and stays one-to-one.
            text = str(item) if item.bit_length() < 14_000 else hex(item)
            out.append(_token(b"i", text.encode()))
        elif isinstance(item, float):
            out.append(_token(b"f", struct.pack(">d", item) if not math.isnan(item) else b"nan"))
        elif isinstance(item, bytes):
            out.append(_token(b"y", item))
        elif isinstance(item, set | frozenset):
            members = sorted(_encoded(m) for m in item)
            out.append(b"e" + len(members).to_bytes(8, "big"))
            out.extend(members)
        else:
            # Something no JSON schema or provider body holds: its type and repr, best effort.
            out.append(_token(b"o", f"{type(item).__qualname__}:{item!r}".encode(
                errors="replace")))


def _key(key: object) -> bytes:
    """A mapping key's encoding: a str key as its token, any other as a tagged digest."""
    if isinstance(key, str):
        return _token(b"s", key.encode("utf-8", "surrogatepass"))
    return b"h" + _encoded(key)


_JSON_DEPTH = 200  # json.dumps recurses; deeper values take the iterative path


def _plain_json(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is dicts with str keys, lists, tuples, str, float, None and ints
    small enough for ``str()`` — what ``json.dumps`` encodes one-to-one (``depth``: how deep
    ``value`` sits in the canonical request)."""
    stack: list[tuple[object, int]] = [(value, depth)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str | float | None):
            continue
        if depth > _JSON_DEPTH:
            return False
        if isinstance(item, int):
            if item.bit_length() >= 14_000:
                return False
        elif type(item) is dict:
            for key, val in item.items():
                if not isinstance(key, str):
                    return False
                stack.append((val, depth + 1))
        elif type(item) is list or type(item) is tuple:
            stack.extend((v, depth + 1) for v in item)
        else:
            return False
    return True


def _first(entry: tuple[bytes, object]) -> bytes:
    return entry[0]


def _encoded(value: object) -> bytes:
    out: list[bytes] = []
    _feed(out, value)
    return hashlib.sha256(b"".join(out)).digest()


def canonical_digest(label: str, value: object) -> str:
    """SHA-256 (hex) of ``label`` and a canonical encoding of ``value`` (internal)."""
    out = [label.encode(), b"\x00"]
    _feed(out, value)
    return hashlib.sha256(b"".join(out)).hexdigest()


# The JSON path's encoder: one instance, as json.dumps(canonical, sort_keys=True,
# separators=(",", ":"), allow_nan=True) writes every part.
_ENCODE: Final = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=True).encode


_PartsKey: TypeAlias = tuple[int, str, str, int, "str | None", bool]
_PromptKey: TypeAlias = tuple[int, str, str, int, "str | None", bool, str, str, str]
_PARTS_SIZE: Final = 64


@final
class SchemaKey:
    """An output schema's part of every cache key, written once (internal).

    ``json`` is the schema as the JSON path writes it (``None`` when the schema is not plain
    JSON, see :func:`_plain_json`); ``exact`` its encoding on the exact path. A key built with
    it is the key :func:`cache_key` gives the request carrying that schema.
    """

    __slots__ = ("exact", "json", "parts", "prompts")

    def __init__(self, schema: object) -> None:
        # The schema is the value of the canonical request's "output_schema": depth 1.
        self.json: str | None = _ENCODE(schema) if _plain_json(schema, 1) else None
        out: list[bytes] = []
        _feed(out, schema)
        self.exact: bytes = b"".join(out)
        # The key's text around the messages, per settings and model (see _parts): every
        # request of a step differs from the step's others in its messages only.
        self.parts: dict[_PartsKey, tuple[ModelSettings, str, str]] = {}
        # The key's hashed text before a step's prompt and its text after it (see
        # prompt_key_parts), per settings, model, system message and schema note.
        self.prompts: dict[_PromptKey, tuple[ModelSettings, PromptKeyParts]] = {}


NO_SCHEMA_KEY: Final = SchemaKey(None)
"""The schema part of a plain-text request's key."""


_esc: Final = json.encoder.encode_basestring_ascii  # how json.dumps writes a str


def _scalar(value: object) -> str:
    """A value :func:`_plain_scalar` accepts, as json.dumps(..., allow_nan=True) writes it."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is str:
        return _esc(value)
    if type(value) is int:
        return int.__repr__(value)
    number = float(value)  # type: ignore[arg-type]
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return float.__repr__(number)


def _small_int(value: object) -> bool:
    return type(value) is int and value.bit_length() < 14_000


def _plain_scalar(value: object) -> bool:
    """A setting or name the JSON path writes as it is (no walk needed)."""
    return (value is None or type(value) is str or type(value) is float
            or type(value) is bool or _small_int(value))


def cache_key(
    request: JudgeRequest, *, provider: str, model_id: str, trial: int = 0,
    identity: str | None = None,
) -> str:
    """The cache key of a judge request for one model and trial: 64 hex characters.

    Equal requests give equal keys in any process (the order a mapping was built in does not
    matter); a change to the provider, the model id, the trial, the model's ``identity``, any
    message, the output schema, how the schema is conveyed (``native_schema``) or any model
    setting changes it. Two settings are left out on purpose: ``timeout`` (how long to wait
    does not change the reply) and the asking ``step`` (the same request from two steps has
    the same answer). A request asking for log-probabilities (``top_logprobs``) has a key of
    its own; one asking for none has the key it had before the setting existed.

    ``identity`` is the judge model's ``cache_identity`` (see :class:`JudgeModel`): where the
    answers come from besides the provider and model id — an HTTP judge's base URL and the
    headers that change the reply, a local model's file — so two endpoints serving one model
    id never share entries. ``None`` (a model without one) gives the key it always had.

    >>> from scorecore.judge import JudgeMessage, JudgeRequest
    >>> request = JudgeRequest(messages=[JudgeMessage(role="user", content="Is 2+2=4?")])
    >>> key = cache_key(request, provider="openai", model_id="gpt-4o-mini")
    >>> len(key), key == cache_key(request, provider="openai", model_id="gpt-4o-mini", trial=1)
    (64, False)
    """
    return request_key(request, provider=provider, model_id=model_id, trial=trial,
                       identity=identity, schema=SchemaKey(request.output_schema))


def request_key(
    request: JudgeRequest, *, provider: str, model_id: str, trial: int,
    identity: str | None, schema: SchemaKey,
) -> str:
    """:func:`cache_key` with the request's output schema already written (internal: the judge
    loop writes each step's schema once, when the step is added)."""
    if request.top_logprobs is not None:
        # A reply with log-probabilities is another entry than the same reply without them;
        # a request asking for none keeps the key it always had (caches written before stay
        # warm).
        plain = request_key(attrs.evolve(request, top_logprobs=None), provider=provider,
                            model_id=model_id, trial=trial, identity=identity, schema=schema)
        asked = f"top_logprobs={request.top_logprobs}\x00{plain}".encode()
        return hashlib.sha256(_KEY_VERSION + b"L" + asked).hexdigest()
    settings = request.settings
    extra = settings.extra
    native = request.native_schema
    if (
        schema.json is not None and type(extra) is dict and not extra
        # Compared by value in the memo below: exact types only, so that equal is identical
        # (1 == 1.0 == True would otherwise share a text they do not write alike).
        and type(provider) is str and type(model_id) is str and type(trial) is int
        and (identity is None or type(identity) is str) and type(native) is bool
    ):
        parts = _parts(settings, (id(settings), provider, model_id, trial, identity, native),
                       schema.parts, schema.json)
        if parts is not None:
            head, tail = parts
            text = f"{head}{_messages_text(request)}{tail}"
            return hashlib.sha256(_KEY_VERSION + b"J" + text.encode()).hexdigest()
    settings_part = {
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "max_output_tokens": settings.max_output_tokens,
        "seed": settings.seed,
        "extra": extra,
    }
    if (
        schema.json is not None
        # What every request of a run is, checked without a walk (messages are str pairs:
        # JudgeMessage checks them): written here as json.dumps would write it.
        and type(provider) is str and type(model_id) is str and _small_int(trial)
        and (identity is None or type(identity) is str) and _plain_scalar(native)
        and _plain_scalar(settings.temperature) and _plain_scalar(settings.top_p)
        and _plain_scalar(settings.max_output_tokens) and _plain_scalar(settings.seed)
        and type(extra) is dict and (not extra or _plain_json(extra, 2))
    ):
        head, tail = _around_messages(
            settings, (id(settings), provider, model_id, trial, identity, native), schema.json)
        text = f"{head}{_messages_text(request)}{tail}"
        return hashlib.sha256(_KEY_VERSION + b"J" + text.encode()).hexdigest()
    messages = [(m.role, m.content) for m in request.messages]
    rest = {"provider": provider, "model_id": model_id, "trial": trial, "messages": messages,
            "native_schema": native, "identity": identity, "settings": settings_part}
    if schema.json is not None and _plain_json(rest):
        # JSON with sorted keys is canonical when every key is a str (json.dumps would turn
        # 1 and "1" into the same key, so those take the exact path). The text is what one
        # json.dumps of the whole request writes: the keys in order, the schema's part
        # written when the step was added.
        head_part: dict[str, object] = {"messages": messages, "model_id": model_id,
                                        "native_schema": native}
        if identity is not None:
            head_part["identity"] = identity
        tail_part = {"provider": provider, "settings": settings_part, "trial": trial}
        text = (f'{_ENCODE(head_part)[:-1]},"output_schema":{schema.json},'
                f'{_ENCODE(tail_part)[1:]}')
        return hashlib.sha256(_KEY_VERSION + b"J" + text.encode()).hexdigest()
    # The exact path (the schema's encoding written once, byte for byte what it adds).
    if identity is None:
        del rest["identity"]
    canonical = {**rest, "output_schema": _Raw(schema.exact)}
    out = [_KEY_VERSION]
    _feed(out, canonical)
    return hashlib.sha256(b"".join(out)).hexdigest()


def _messages_text(request: JudgeRequest) -> str:
    """The messages as json.dumps writes ``[(role, content), ...]`` inside the list's brackets
    (messages are str pairs: JudgeMessage checks them)."""
    return ",".join([f"[{_esc(m.role)},{_esc(m.content)}]" for m in request.messages])


def _around_messages(
    settings: ModelSettings, model: tuple[int, str, str, int, str | None, object],
    schema_json: str,
) -> tuple[str, str]:
    """The JSON path's key text before and after the messages, as json.dumps of the whole
    canonical request writes it (the caller checked every part is written as it is);
    ``model`` is the settings' id, provider, model id, trial, identity and ``native_schema``."""
    _, provider, model_id, trial, identity, native = model
    extra = settings.extra
    head = (f'{{{"" if identity is None else f""""identity":{_esc(identity)},"""}'
            f'"messages":[')
    tail = (
        f'],"model_id":{_esc(model_id)},'
        f'"native_schema":{_scalar(native)},"output_schema":{schema_json},'
        f'"provider":{_esc(provider)},'
        f'"settings":{{"extra":{_ENCODE(extra) if extra else "{}"},'
        f'"max_output_tokens":{_scalar(settings.max_output_tokens)},'
        f'"seed":{_scalar(settings.seed)},"temperature":{_scalar(settings.temperature)},'
        f'"top_p":{_scalar(settings.top_p)}}},"trial":{int.__repr__(trial)}}}'
    )
    return head, tail


def _parts(
    settings: ModelSettings, memo_key: _PartsKey,
    memo: dict[_PartsKey, tuple[ModelSettings, str, str]], schema_json: str,
) -> tuple[str, str] | None:
    """:func:`_around_messages` for settings without ``extra``, kept in ``memo`` (the step's
    schema key's ``parts``); ``None``: the settings take another path.

    Every execution of a step sends the same settings object (``with_default_cap`` keeps the
    capped copy) for the same model and trial, so the text around the messages is written
    once. The settings are frozen and kept with the entry (their id is not reused while it
    stands); an ``extra`` is a mutable mapping, so settings with one are never kept.
    """
    kept = memo.get(memo_key)
    if kept is not None and kept[0] is settings:
        return kept[1], kept[2]
    if not (_small_int(memo_key[3]) and _plain_scalar(settings.temperature)
            and _plain_scalar(settings.top_p) and _plain_scalar(settings.max_output_tokens)
            and _plain_scalar(settings.seed)):
        return None
    head, tail = _around_messages(settings, memo_key, schema_json)
    if len(memo) >= _PARTS_SIZE:
        memo.clear()
    memo[memo_key] = (settings, head, tail)
    return head, tail


@final
class PromptKeyParts:
    """A step's cache key around its prompt, written once (internal: the judge loop's).

    ``head`` is the SHA-256 state of the key's text up to the user message's content (the
    version, the settings' and model's part, the system message); ``tail`` the text after the
    prompt (the rest of the user message, then the settings' and model's part). The key of a
    request whose user message is the prompt with the step's schema note added is
    :func:`prompt_key` of them.
    """

    __slots__ = ("head", "tail")

    def __init__(self, head: hashlib._Hash, tail: str) -> None:
        self.head = head
        self.tail = tail


def prompt_key_parts(  # noqa: PLR0917 - the key's parts, each one of the request's
    settings: ModelSettings, provider: str, model_id: str, trial: int,
    identity: str | None, native: bool, schema: SchemaKey, system: str, system_note: str,
    note: str,
) -> PromptKeyParts | None:
    """The parts of :func:`request_key` for a request of two messages, ``system`` followed by
    ``system_note`` and the prompt followed by ``note``, kept in ``schema.prompts``; ``None``
    when such a request's key takes another path than the JSON path of settings without
    ``extra`` (then the request is built and keyed with :func:`request_key`).

    Every run of a step sends the same system message and note with the same settings
    object, model and trial: the text around the prompt is written (and its head hashed)
    once, and a run only escapes and hashes its prompt.
    """
    if not (
        schema.json is not None and type(settings.extra) is dict and not settings.extra
        and type(provider) is str and type(model_id) is str and type(trial) is int
        and (identity is None or type(identity) is str) and type(native) is bool
    ):
        return None
    memo_key = (id(settings), provider, model_id, trial, identity, native, system, system_note,
                note)
    kept = schema.prompts.get(memo_key)
    if kept is not None and kept[0] is settings:
        return kept[1]
    around = _parts(settings, memo_key[:6], schema.parts, schema.json)
    if around is None:
        return None
    head, tail = around
    # json's escaping is one character at a time: esc(prompt + note) is esc(prompt) without
    # its closing quote followed by esc(note) without its opening one.
    before = f'{head}[{_esc("system")},{_esc(system + system_note)}],[{_esc("user")},'
    after = f"{_esc(note)[1:]}]{tail}"
    parts = PromptKeyParts(hashlib.sha256(_KEY_VERSION + b"J" + before.encode()), after)
    if len(schema.prompts) >= _PARTS_SIZE:
        schema.prompts.clear()
    schema.prompts[memo_key] = (settings, parts)
    return parts


def prompt_key(parts: PromptKeyParts, prompt: str) -> str:
    """:func:`request_key` of the request ``parts`` were written for, with ``prompt``."""
    digest = parts.head.copy()
    digest.update(f"{_esc(prompt)[:-1]}{parts.tail}".encode())
    return digest.hexdigest()
