"""Hypothesis strategies for the library's values (shared by every test module)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import attrs
from hypothesis import strategies as st

from scorecore import (
    AgentInput,
    BudgetExhausted,
    ExampleEcho,
    InputMismatch,
    InvalidScore,
    InvalidStepValue,
    JudgeExecution,
    JudgeFailed,
    JudgeOutputInvalid,
    NotScorable,
    PrepareRunFailed,
    ProcessorAborted,
    ScoreResult,
    ScorerRun,
    StepFailed,
    StepRaised,
)
from scorecore.agent import (
    AgentMessage,
    GenericPart,
    MessageContent,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)
from scorecore.evals import ItemResult
from scorecore.evals.results import ScorerOutcome
from scorecore.judge import JudgeError, JudgeUsage
from scorecore.scorers import MemberFailure, PairwiseResult, PanelFailed, PanelMember, PanelResult

STEPS = ("preprocess", "analyze", "generate_score", "generate_reason")

text = st.text(max_size=12)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=10)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    text,
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(text, inner, max_size=3),
    ),
    max_leaves=6,
)
"""Any JSON value (no NaN: it is never equal to itself)."""

finite_scores = st.floats(allow_nan=False, allow_infinity=False)

# Keys of Mastra's result object: an extra run key with one of these names would be ambiguous.
_RESERVED = frozenset({
    "input", "output", "runId", "groundTruth", "requestContext", "expectedTrajectory",
    "score", "notScorable", "generateScorePrompt", "reason", "generateReasonPrompt",
    "preprocessStepResult", "preprocessPrompt", "analyzeStepResult", "analyzePrompt", "judge",
})
extra_keys = names.filter(lambda k: k not in _RESERVED)

datetimes = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1),
    timezones=st.one_of(st.none(), st.just(UTC)),
)

tool_invocations = st.builds(
    ToolInvocation,
    tool_call_id=names,
    tool_name=names,
    args=json_values,
    result=json_values,
    state=st.sampled_from(["partial-call", "call", "result", "output-error"]),
    is_error=st.none() | st.booleans(),
    error_text=st.none() | text,
    tool_id=st.none() | names,
)

generic_parts = st.builds(
    GenericPart,
    type=names.filter(lambda t: t not in ("text", "tool-invocation", "reasoning")),
    data=st.dictionaries(names.filter(lambda k: k != "type"), json_values, max_size=3),
)

message_parts = st.one_of(
    st.builds(TextPart, text=text),
    st.builds(ToolInvocationPart, tool_invocation=tool_invocations),
    st.builds(ReasoningPart, reasoning=text, details=st.tuples() | st.tuples(json_values)),
    generic_parts,
)

contents = st.builds(
    MessageContent,
    parts=st.none() | st.lists(message_parts, max_size=3).map(tuple),
    content=st.none() | text,
    tool_invocations=st.none() | st.lists(tool_invocations, max_size=2).map(tuple),
    reasoning=st.none() | text,
    metadata=st.none() | st.dictionaries(names, json_values, max_size=2),
)

agent_messages = st.builds(
    AgentMessage,
    role=st.sampled_from(["user", "assistant", "system", "signal"]),
    content=contents,
    id=names,
    created_at=st.none() | datetimes,
    thread_id=st.none() | names,
    resource_id=st.none() | names,
)

system_messages = st.builds(SystemMessage, content=text)

agent_inputs = st.builds(
    AgentInput,
    input_messages=st.lists(agent_messages, max_size=2).map(tuple),
    remembered_messages=st.lists(agent_messages, max_size=2).map(tuple),
    system_messages=st.lists(system_messages, max_size=2).map(tuple),
    tagged_system_messages=st.dictionaries(
        names, st.lists(system_messages, max_size=2).map(tuple), max_size=2
    ),
)
agent_outputs = st.lists(agent_messages, max_size=3).map(tuple)

judge_errors: st.SearchStrategy[JudgeError] = st.recursive(
    st.builds(
        JudgeError,
        kind=st.sampled_from(
            ["rate_limit", "server", "timeout", "network", "auth", "bad_request",
             "context_length", "crashed", "unknown"]
        ),
        message=text,
        status=st.none() | st.integers(min_value=100, max_value=599),
        headers=st.dictionaries(names, text, max_size=2),
        code=st.none() | names,
        type=st.none() | names,
        is_retryable=st.booleans(),
        exception_type=st.none() | names,
    ),
    lambda inner: st.builds(
        JudgeError, kind=st.just("unknown"), message=text, is_retryable=st.booleans(),
        cause=inner,
    ),
    max_leaves=3,
)
"""Judge errors, with cause chains."""

judge_failures = st.one_of(
    st.builds(JudgeFailed, error=judge_errors, model_calls=st.integers(1, 20),
              stop_reason=st.sampled_from(
                  ["not_retryable", "budget_spent", "processor_limit", "processor_raised",
                   "no_error_processors"])),
    st.builds(JudgeOutputInvalid, errors=st.lists(text, max_size=3).map(tuple),
              raw_output=text, attempts=st.integers(1, 2)),
    st.builds(ProcessorAborted, stage=st.sampled_from(["input", "output"]), processor=names,
              reason=text),
    st.builds(StepRaised, exception_type=names, message=text, traceback=text, where=names),
    st.builds(ExampleEcho, statements=st.lists(text, min_size=1, max_size=3).map(tuple),
              raw_output=text, attempts=st.integers(1, 2)),
)
"""Every cause a judge execution can fail with."""

run_failure_causes = st.one_of(
    judge_failures,
    st.builds(PrepareRunFailed, exception_type=names, message=text, traceback=text),
    st.builds(InputMismatch, which=st.sampled_from(["input", "output"]), expected_type=names,
              errors=st.lists(text, max_size=3).map(tuple)),
    st.builds(InvalidScore, value_repr=text, type_name=names),
    st.builds(InvalidStepValue, what=names, expected=text, value_repr=text, type_name=names),
    # A step's Failure value as stored: JSON (an exception is stored as its text).
    st.builds(StepFailed, step=st.sampled_from(STEPS), error=text | st.integers()
              | st.dictionaries(names, text, max_size=2)),
    st.builds(BudgetExhausted, limit=st.sampled_from(["max_cost_usd", "max_tokens"]),
              limit_value=finite_scores, spent=finite_scores, in_flight=finite_scores,
              needed=st.none() | finite_scores, model_id=names,
              output_tokens=st.none() | st.integers(1, 10**6), overrun=st.none() | text),
)
"""Every structured cause of a failed run (but a panel's, :data:`panel_failures`)."""

usages = st.builds(
    JudgeUsage,
    input_tokens=st.none() | st.integers(0, 10**6),
    output_tokens=st.none() | st.integers(0, 10**6),
    total_tokens=st.none() | st.integers(0, 10**6),
    reasoning_tokens=st.none() | st.integers(0, 10**6),
    cached_input_tokens=st.none() | st.integers(0, 10**6),
)


@st.composite
def judge_executions(draw: st.DrawFn) -> JudgeExecution:
    """A success or failed judge execution with arbitrary telemetry."""
    failed = draw(st.booleans())
    return JudgeExecution(
        status="failed" if failed else "success",
        prompt=draw(text),
        model_id=draw(names),
        provider=draw(names),
        attempt_count=draw(st.integers(1, 2)),
        model_call_count=draw(st.integers(1, 20)),
        duration=draw(st.floats(min_value=0, max_value=1e6)),
        output=None if failed else draw(json_values),
        usage=draw(st.none() | usages),
        finish_reason=draw(st.none() | names),
        raw_output=draw(st.none() | text),
        error=draw(judge_failures) if failed else None,
        waits=tuple(draw(st.lists(st.floats(min_value=0, max_value=100), max_size=3))),
        cost_usd=draw(st.none() | st.floats(min_value=0, max_value=1e6)),
        saved_usd=draw(st.none() | st.floats(min_value=0, max_value=1e6)),
        cache_hits=draw(st.integers(0, 50)),
        cache_misses=draw(st.integers(0, 50)),
        structured_output=draw(st.none() | st.sampled_from(
            ("json_schema", "json_object", "tool", "grammar", "prompt", "native")
        )),
    )


def scorer_runs(
    inputs: st.SearchStrategy[Any] = json_values, outputs: st.SearchStrategy[Any] = json_values
) -> st.SearchStrategy[ScorerRun[Any, Any]]:
    """Runs with a run id (as every result has) and JSON-valued fields."""
    return st.builds(
        ScorerRun,
        input=inputs,
        output=outputs,
        run_id=names,
        ground_truth=json_values,
        request_context=st.none() | st.dictionaries(names, json_values, max_size=2),
        expected_trajectory=json_values,
        extra=st.dictionaries(extra_keys, json_values, max_size=2),
    )


panel_failures = st.builds(
    PanelFailed, scored=st.integers(0, 5), min_successful=st.integers(1, 5),
    failures=st.lists(st.builds(MemberFailure, scorer_id=names, failed_step=names,
                                cause=run_failure_causes), max_size=2).map(tuple),
    not_scorable=st.lists(names, max_size=2).map(tuple),
)
"""A panel's failure, naming its failed members' causes."""

maybe_scores = st.none() | finite_scores


@st.composite
def panel_members(draw: st.DrawFn) -> PanelMember:
    """A panel member that scored, was not scorable, or failed (possibly replaced)."""
    status = draw(st.sampled_from(["scored", "not_scorable", "failed"]))
    failed = status == "failed"
    return PanelMember(
        scorer_id=draw(names), status=status, score=draw(maybe_scores), reason=draw(
            st.none() | text), vote=draw(st.none() | st.booleans()),
        replaces=draw(st.none() | names), replaced=draw(st.booleans()),
        failed_step=draw(names) if failed else None,
        cause=draw(run_failure_causes | panel_failures) if failed else None,
        judge=draw(st.dictionaries(st.sampled_from(STEPS), st.lists(
            judge_executions(), min_size=1, max_size=2).map(tuple), max_size=1)),
    )


panel_results = st.builds(
    PanelResult, aggregate=names, members=st.lists(panel_members(), max_size=3).map(tuple),
    min_successful=st.integers(1, 3), threshold=maybe_scores, score=maybe_scores,
    std_dev=maybe_scores, min=maybe_scores, max=maybe_scores,
    agreed=st.none() | st.booleans(), tie=st.booleans(),
    passes=st.none() | st.integers(0, 3), fails=st.none() | st.integers(0, 3),
)
"""A panel's result: members with every status, the aggregate and spread."""

verdicts = st.sampled_from(["output", "baseline", "tie"])
pairwise_results = st.builds(
    PairwiseResult, outcome=st.sampled_from(["win", "loss", "tie", "position_bias"]),
    forward=verdicts, swapped=st.none() | verdicts,
)
"""A pairwise judgement's result."""


@st.composite
def score_results(
    draw: st.DrawFn,
    inputs: st.SearchStrategy[Any] = json_values,
    outputs: st.SearchStrategy[Any] = json_values,
) -> ScoreResult[Any, Any]:
    """A scored or not-scorable result with arbitrary step results, prompts and telemetry."""
    scored = draw(st.booleans())
    prompt = st.none() | text
    return ScoreResult(
        run=draw(scorer_runs(inputs, outputs)),
        score=draw(finite_scores) if scored else None,
        not_scorable=None if scored else NotScorable(
            reason=draw(st.none() | text), step=draw(st.sampled_from(STEPS)),
            kind=draw(st.none() | st.just(ExampleEcho.kind)),
        ),
        reason=draw(st.none() | text),
        preprocess_step_result=draw(json_values),
        preprocess_prompt=draw(prompt),
        analyze_step_result=draw(json_values),
        analyze_prompt=draw(prompt),
        generate_score_prompt=draw(prompt),
        generate_reason_prompt=draw(prompt),
        judge=draw(st.dictionaries(
            st.sampled_from(STEPS),
            st.lists(judge_executions(), min_size=1, max_size=2).map(tuple),
            max_size=2,
        )),
        details=draw(st.none() | panel_results | pairwise_results),
    )


live_load_ops = st.lists(
    st.tuples(st.just("submit"), st.booleans()) | st.just(("finish", False)), max_size=40
)
"""Steps against a live scorer: submit a call (whose judge fails or not), or finish the oldest."""


api_keys = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40)
"""API keys as a header can carry them: printable ASCII without spaces, quotes and backslashes
included (their JSON-escaped forms differ from the raw key)."""

url_passwords = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20)
"""Passwords written (percent-encoded) into a base URL's userinfo: any Unicode text."""


not_collections = st.one_of(
    st.text(max_size=30),
    st.binary(max_size=30),
    st.binary(max_size=30).map(bytearray),
    st.dictionaries(st.text(max_size=8), json_scalars, max_size=4),
    st.dictionaries(st.text(max_size=8), json_scalars, max_size=4).map(MappingProxyType),
)
"""Values a declared list/set/tuple field must refuse: text, bytes and mappings (which iterate
as characters, byte values and keys)."""


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


HUGE: dict[str, Any] = {
    "2 MB str": "x" * 2_000_000,
    "2 MB odd Unicode": "\ud800\u0000\u202e\U0001f642e\u0301" * 400_000,
    "2 MB bytes": b"\xff" * 2_000_000,
    "int of 5,001 digits": 10**5000,
    "list nested 100,000 deep": _nested(100_000),
    "list of 20,000 ints": list(range(20_000)),
    "dict with a 2 MB key": {"k" * 2_000_000: 1},
    "dict with 10,000 int keys": dict.fromkeys(range(10_000), "v"),
}

huge_values = st.sampled_from(sorted(HUGE))
"""Names of values (in ``HUGE``) too big or too deep to print whole in a message; a test looks
the value up, so hypothesis never prints a 2 MB argument."""


# --------------------------------------------------------------------------- JSONL dataset lines

jsonl_odd_text = st.text(
    st.one_of(
        st.characters(),
        st.characters(categories=["Cs"]),  # lone surrogates: JSON may escape them ("\ud800")
        st.sampled_from("\x00\r\x0b\x1c\x85\u2028\ufeff\u202e"),
    ),
    max_size=12,
)
"""Text with odd Unicode: lone surrogates, NUL, CR, separators, BOM, bidi overrides."""

_jsonl_values: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), jsonl_odd_text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(jsonl_odd_text, inner, max_size=3)
    ),
    max_leaves=8,
)


def _has_char(value: Any, low: str, high: str) -> bool:
    if isinstance(value, str):
        return any(low <= c <= high for c in value)
    if isinstance(value, dict):
        return any(_has_char(k, low, high) or _has_char(v, low, high) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_char(v, low, high) for v in value)
    return False


class JsonlLine:
    """A generated dataset line; its repr is a short label, so a failure prints no 100 kB.

    ``malformed``: whether ``scorecore eval`` must call the line malformed (``None``: either
    answer is right, e.g. for arbitrary bytes).
    """

    __slots__ = ("label", "malformed", "raw")

    def __init__(self, raw: bytes, malformed: bool | None, label: str) -> None:
        self.raw = raw
        self.malformed = malformed
        self.label = label

    def __repr__(self) -> str:
        return f"JsonlLine({self.label}, malformed={self.malformed})"


def _line(raw: bytes, malformed: bool | None, label: str | None = None) -> JsonlLine:
    return JsonlLine(raw, malformed, label or repr(raw)[:200])


@st.composite
def _item_lines(draw: st.DrawFn) -> JsonlLine:
    item = draw(st.fixed_dictionaries(
        {"input": _jsonl_values, "output": _jsonl_values},
        optional={"ground_truth": _jsonl_values},
    ))
    ascii_only = draw(st.booleans())
    text = json.dumps(item, ensure_ascii=ascii_only)
    # Escaped ("\ud800") a lone surrogate is valid JSON but no text: malformed. Written raw,
    # its bytes are not UTF-8 and are read as U+FFFD: a valid line. NUL is always escaped.
    surrogate = ascii_only and _has_char(item, "\ud800", "\udfff")
    return _line(text.encode("utf-8", "surrogatepass"),
                 surrogate or _has_char(item, "\x00", "\x00"))


@st.composite
def _deep_lines(draw: st.DrawFn) -> JsonlLine:
    depth = draw(st.one_of(st.integers(1, 300), st.integers(120, 136), st.just(100_000)))
    closed = depth < 100_000
    inner = "[" * depth + ("]" * depth if closed else "")
    line = '{"input": ' + inner + (', "output": 1}' if closed else "")
    label = f"input nested {depth} deep" + ("" if closed else ", unclosed")
    return _line(line.encode(), depth + 1 > 128 or not closed, label)  # the object is level 1


@st.composite
def _number_lines(draw: st.DrawFn) -> JsonlLine:
    digits = draw(st.one_of(st.integers(1, 6000), st.integers(4290, 4310)))
    line = '{"input": ' + "9" * digits + ', "output": 1}'
    return _line(line.encode(), digits > sys.get_int_max_str_digits(),
                 f"input an integer of {digits} digits")


jsonl_lines: st.SearchStrategy[JsonlLine] = st.one_of(
    _item_lines(),
    _deep_lines(),
    _number_lines(),
    st.binary(max_size=40).map(lambda raw: _line(raw, None)),
    jsonl_odd_text.map(lambda text: _line(text.encode("utf-8", "surrogatepass"), None)),
)
"""One JSONL dataset line (possibly holding newlines): hostile items, deep nesting, long
integers, arbitrary bytes and odd text."""


class Unprintable:
    """A value whose ``repr``, ``str``, ``float``, ``len`` and ``==`` all raise."""

    def __repr__(self) -> str:
        raise RuntimeError("repr refused")

    def __str__(self) -> str:
        raise RuntimeError("str refused")

    def __float__(self) -> float:
        raise RuntimeError("float refused")

    def __len__(self) -> int:
        raise RuntimeError("len refused")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq refused")

    __hash__ = object.__hash__


class UnprintableError(Exception):
    """An exception whose ``str`` and ``repr`` raise."""

    def __str__(self) -> str:
        raise RuntimeError("str refused")

    __repr__ = __str__


class ShyInt(int):
    """An int whose ``repr``, ``str`` and ``float`` raise."""

    __repr__ = Unprintable.__repr__
    __str__ = Unprintable.__str__
    __float__ = Unprintable.__float__


def nested_list(depth: int, leaf: Any = None) -> Any:
    """``[[[…leaf…]]]``, ``depth`` lists deep (built without recursion)."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def nested_dict(depth: int, leaf: Any = None) -> Any:
    """``{"a": {"a": …leaf…}}``, ``depth`` dicts deep."""
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


odd_text = st.text(
    st.one_of(
        st.characters(),
        st.characters(categories=["Cs"]),  # lone surrogates
        st.sampled_from("\x00\r\n\u2028\ufeff\u202e\U0001f642"),
    ),
    max_size=10,
)
"""Short text with lone surrogates, NUL, line separators, BOM, bidi overrides, emoji."""

_DEPTHS = (600, 1_100, 12_000)
_DIGITS = (4_301, 5_000, 12_000)
_LENGTHS = (0, 1_000, 200_000)

HOSTILE_KINDS = (
    "huge_int", "negative_huge_int", "deep_list", "deep_dict", "deep_tuple", "unprintable",
    "shy_int", "set", "frozenset", "bytes", "nan", "inf", "negative_inf", "bool", "long_text",
    "surrogate_text", "nul_text", "exception_value",
)


@attrs.frozen
class Hostile:
    """A recipe for a value that breaks ``repr``/``str``/JSON; :meth:`build` makes it.

    Tests draw recipes, so a failing example prints a short recipe, never a 12,000-deep list.
    """

    kind: str
    size: int
    text: str

    def build(self) -> Any:
        """The value this recipe describes."""
        depth, digits, length = _DEPTHS[self.size], _DIGITS[self.size], _LENGTHS[self.size]
        builders: dict[str, Any] = {
            "huge_int": lambda: 10**digits - 1,
            "negative_huge_int": lambda: -(10**digits),
            "deep_list": lambda: nested_list(depth, self.text),
            "deep_dict": lambda: nested_dict(depth, self.text),
            "deep_tuple": lambda: _nested_tuple(depth),
            "unprintable": Unprintable,
            "shy_int": lambda: ShyInt(self.size),
            "set": lambda: {1, "a", None, self.text, 2.5},
            "frozenset": lambda: frozenset({self.text, 10**digits}),
            "bytes": lambda: self.text.encode("utf-8", "surrogatepass") * (length + 1),
            "nan": lambda: float("nan"),
            "inf": lambda: float("inf"),
            "negative_inf": lambda: -float("inf"),
            "bool": lambda: bool(self.size % 2),
            "long_text": lambda: (self.text or "x") * length,
            "surrogate_text": lambda: self.text + "\ud800",
            "nul_text": lambda: "\x00" + self.text,
            "exception_value": UnprintableError,
        }
        return builders[self.kind]()


def _nested_tuple(depth: int) -> Any:
    value: Any = ()
    for _ in range(depth):
        value = (value,)
    return value


hostile = st.builds(
    Hostile, kind=st.sampled_from(HOSTILE_KINDS), size=st.integers(0, 2), text=odd_text
)
"""Recipes of values hostile to printing and serialising (see :class:`Hostile`)."""

run_values: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), odd_text, hostile,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(odd_text, inner, max_size=3),
        st.dictionaries(st.integers() | st.none() | st.booleans(), inner, max_size=2),
    ),
    max_leaves=6,
)
"""Anything a run may be given: JSON-like values (NaN and odd text included), non-str keys,
tuples and :class:`Hostile` recipes at any position. Pass a drawn value through
:func:`realize` before use."""


def realize(value: Any) -> Any:
    """Build every :class:`Hostile` recipe inside ``value`` (lists, tuples, dict values)."""
    if isinstance(value, Hostile):
        return value.build()
    if isinstance(value, list):
        return [realize(v) for v in value]
    if isinstance(value, tuple):
        return tuple(realize(v) for v in value)
    if isinstance(value, dict):
        return {k: realize(v) for k, v in value.items()}
    return value


EXCEPTION_KINDS = (
    "value_error", "unprintable", "key_error_huge_int", "huge_message", "recursion_error",
    "exception_group", "odd_notes", "cause_cycle",
)


def build_exception(kind: str, text: str) -> Exception:
    """An exception of the given kind, some of which cannot be printed plainly."""
    if kind == "value_error":
        return ValueError(text)
    if kind == "unprintable":
        return UnprintableError()
    if kind == "key_error_huge_int":
        return KeyError(10**5000)  # str(KeyError) is repr(key), which raises
    if kind == "huge_message":
        return ValueError(text + "x" * 1_000_000)
    if kind == "recursion_error":
        return RecursionError("maximum recursion depth exceeded")
    if kind == "exception_group":
        return ExceptionGroup(text or "group", [UnprintableError(), ValueError(text)])
    if kind == "odd_notes":
        exc = ValueError(text)
        exc.__notes__ = [Unprintable(), text]  # type: ignore[list-item]
        return exc
    first, second = ValueError(text), TypeError(text)
    first.__cause__, second.__cause__ = second, first
    return first


exception_kinds = st.sampled_from(EXCEPTION_KINDS)
"""Kinds of exceptions a user's code may raise (see :func:`build_exception`)."""

NUMBER_TEXTS = (
    "0", "0.5", "-1e-300", "1e308", "1e400", "-1e400", "NaN", "Infinity", "-Infinity",
    "9" * 400, "9" * 4_300, "9" * 4_301, "-" + "9" * 5_000, "true", "null", '"0.5"', "[0.5]",
    "{}", "1" + "0" * 20_000,
)
"""Texts of a JSON ``score`` value: finite, overflowing, non-finite, too long to read, wrong."""

reply_texts: st.SearchStrategy[str] = st.one_of(
    st.text(),
    odd_text,
    st.sampled_from(NUMBER_TEXTS).map(lambda n: '{"score": ' + n + "}"),
    st.sampled_from(NUMBER_TEXTS),
    st.sampled_from((*_DEPTHS, 100_000)).map(lambda d: "[" * d + "]" * d),
    st.sampled_from(_DEPTHS).map(lambda d: '{"score": ' + "[" * d + "]" * d + "}"),
    st.sampled_from(_DEPTHS).map(lambda d: '{"a": ' * d + "{}" + "}" * d),
    json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.dictionaries(odd_text, json_values, max_size=3).map(
        lambda v: json.dumps(v, ensure_ascii=False)
    ),
    st.fixed_dictionaries({"claims": st.lists(odd_text, max_size=3)}).map(json.dumps),
    st.sampled_from(NUMBER_TEXTS).map(lambda n: '```json\n{"score": ' + n + "}\n```"),
)
"""What a judge may answer: arbitrary text, JSON of every shape, fenced JSON, scores that are
not finite or too long to read, replies nested up to 100,000 deep."""


REPORT_SCORERS = ("a", "b", "c")
"""The scorer ids each of :func:`item_result_lists`' items has an outcome of, in order."""
_ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=20)  # surrogates too
_ANY_SCORE = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def scorer_outcomes(draw: st.DrawFn, scorer_id: str) -> ScorerOutcome:
    """One scorer's outcome on an item: scored (any finite score), not scorable or failed."""
    status = draw(st.sampled_from(["scored", "not_scorable", "failed"]))
    return ScorerOutcome(
        scorer_id=scorer_id, status=status,
        score=draw(_ANY_SCORE) if status == "scored" else None,
        reason=draw(st.none() | _ANY_TEXT), error=draw(_ANY_TEXT) if status == "failed" else None,
        resumed=draw(st.booleans()),
    )


@st.composite
def item_result_lists(draw: st.DrawFn) -> list[ItemResult]:
    """An evaluation's item results in index order, failed items and repeats among them."""
    results = []
    for index in range(draw(st.integers(0, 12))):
        error = draw(st.none() | _ANY_TEXT)
        results.append(ItemResult(
            index=index, item_id=draw(st.none() | _ANY_TEXT), run_id=f"b:#{index}", item=None,
            error=error, duplicate_of=draw(st.none() | st.integers(0, index)) if error else None,
            outcomes=tuple(draw(scorer_outcomes(s)) for s in REPORT_SCORERS),
        ))
    return results


# What PostgreSQL's COPY text format treats specially (escapes, the NULL marker, the end-of-data
# line, delimiters), mixed with any other character a store keeps (no NUL, no lone surrogate).
_COPY_PIECES = st.sampled_from([
    "\t", "\n", "\r", "\r\n", "\\", "\\N", "\\.", "\\t", "\\\\", "\\x00", ",", '"', "'", "\x7f",
    "\x1b", "\u2028", "é", "字", "\U0001f600", " ", "",
])
copy_texts: st.SearchStrategy[str] = st.one_of(
    st.just("\\N"), st.just("\\."), st.just(""),
    st.lists(_COPY_PIECES | st.text(st.characters(codec="utf-8", exclude_characters="\x00"),
                                    max_size=3), max_size=8).map("".join),
)
"""Text that COPY's text format would mangle if escaped wrongly: tabs, newlines, backslashes,
``\\N`` alone or inside, any other non-NUL character."""
copy_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | copy_texts
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(copy_texts, inner, max_size=3),
    max_leaves=8,
)
"""JSON values whose strings (keys too) are :data:`copy_texts`."""
