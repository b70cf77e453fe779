"""Hypothesis strategies for property-testing scorers: agent runs, traces and judge replies.

Needs hypothesis (``pip install 'scorecore[testing]'``). Each function returns a strategy:

- :func:`tool_invocations`, :func:`agent_messages`, :func:`agent_inputs`,
  :func:`agent_outputs`: the values a ``type="agent"`` scorer receives (Mastra's message shape,
  with text, tool-invocation, reasoning and other parts);
- :func:`mastra_traces`: Mastra trace JSON (an ``agent_run`` root, its ``model_generation``
  and ``tool_call`` children) that :func:`scorecore.traces.trace_to_agent_run` turns into an
  agent run;
- :func:`judge_replies`: judge reply texts whose JSON a JSON schema, or a prompt step's
  output type, accepts, or with ``valid=False`` rejects; :func:`malformed_replies`: reply
  texts that are not JSON at all.

>>> from hypothesis import given, settings
>>> from scorecore import create_scorer
>>> scorer = create_scorer(id="turns", description="d", type="agent").generate_score(
...     lambda ctx: 1.0 if ctx.run.output else 0.0)
>>> @settings(max_examples=20)
... @given(agent_inputs(), agent_outputs())
... def test_scores_are_in_range(agent_input, agent_output):
...     result = scorer.run_sync(input=agent_input, output=agent_output)
...     assert 0 <= result.unwrap().score <= 1
>>> test_scores_are_in_range()
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "scorecore_adapters.strategies needs hypothesis: pip install 'scorecore[testing]'"
    ) from exc
from jsonschema import Draft202012Validator

from scorecore import AgentInput, AgentOutput, PromptStep, ScorePromptStep, ScorerDefinitionError
from scorecore.agent import (
    AgentMessage,
    GenericPart,
    MessageContent,
    MessagePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)
from scorecore.validators import misuse
from scorecore_adapters._schema_strategies import values_for_schema

__all__ = [
    "agent_inputs",
    "agent_messages",
    "agent_outputs",
    "json_values",
    "judge_replies",
    "malformed_replies",
    "mastra_traces",
    "tool_invocations",
]

_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)
_ROLES = ("user", "assistant", "system", "signal")
_EPOCH = datetime(2020, 1, 1, tzinfo=UTC)


def _texts() -> st.SearchStrategy[str]:
    # Any Unicode hypothesis draws (emoji, RTL, combining marks, NUL …) but no lone surrogate,
    # which no JSON encoder writes and no store keeps.
    return st.text(max_size=40)


def json_values(*, max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value: ``None``, bools, ints (within ±2**53), finite floats, text, and lists and
    string-keyed objects of them."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**53), 2**53),
        st.floats(allow_nan=False, allow_infinity=False), _texts(),
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_texts(), inner, max_size=4),
        max_leaves=max_leaves,
    )


def tool_invocations() -> st.SearchStrategy[ToolInvocation]:
    """Tool calls in every state (``partial-call``, ``call``, ``result``, ``output-error``)."""
    return st.builds(
        ToolInvocation,
        tool_call_id=_NAMES,
        tool_name=_NAMES,
        args=json_values(),
        result=json_values(),
        state=st.sampled_from(["partial-call", "call", "result", "output-error"]),
        is_error=st.none() | st.booleans(),
        error_text=st.none() | _texts(),
        tool_id=st.none() | _NAMES,
    )


def _parts() -> st.SearchStrategy[MessagePart]:
    return st.one_of(
        st.builds(TextPart, text=_texts()),
        st.builds(ToolInvocationPart, tool_invocation=tool_invocations()),
        st.builds(ReasoningPart, reasoning=_texts(),
                  details=st.tuples() | st.tuples(json_values(max_leaves=3))),
        st.builds(
            GenericPart,
            type=st.sampled_from(["data-weather", "file", "source-url", "step-start"]),
            data=st.dictionaries(_NAMES.filter(lambda k: k != "type"), json_values(max_leaves=3),
                                 max_size=2),
        ),
    )


def _datetimes() -> st.SearchStrategy[datetime]:
    return st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2100, 1, 1),
                        timezones=st.just(UTC))


def agent_messages(
    *, roles: tuple[str, ...] = _ROLES, max_parts: int = 3
) -> st.SearchStrategy[AgentMessage]:
    """Stored messages (Mastra format 2): parts of every kind, or a plain string content.

    Args:
        roles: the roles to draw from.
        max_parts: the most parts in one message.
    """
    contents = st.builds(
        MessageContent,
        parts=st.none() | st.lists(_parts(), max_size=max_parts).map(tuple),
        content=st.none() | _texts(),
        tool_invocations=st.none() | st.lists(tool_invocations(), max_size=2).map(tuple),
        reasoning=st.none() | _texts(),
        metadata=st.none() | st.dictionaries(_NAMES, json_values(max_leaves=3), max_size=2),
    )
    return st.builds(
        AgentMessage,
        role=st.sampled_from(roles),
        content=contents,
        id=_NAMES,
        created_at=st.none() | _datetimes(),
        thread_id=st.none() | _NAMES,
        resource_id=st.none() | _NAMES,
    )


def agent_inputs(*, max_messages: int = 3) -> st.SearchStrategy[AgentInput]:
    """An agent run's input: input, remembered, system and tagged system messages."""
    systems = st.builds(SystemMessage, content=_texts())
    return st.builds(
        AgentInput,
        input_messages=st.lists(agent_messages(), max_size=max_messages).map(tuple),
        remembered_messages=st.lists(agent_messages(), max_size=max_messages).map(tuple),
        system_messages=st.lists(systems, max_size=2).map(tuple),
        tagged_system_messages=st.dictionaries(
            _NAMES, st.lists(systems, max_size=2).map(tuple), max_size=2
        ),
    )


def agent_outputs(*, max_messages: int = 3) -> st.SearchStrategy[AgentOutput]:
    """An agent run's output: a tuple of response messages (possibly empty)."""
    return st.lists(agent_messages(), max_size=max_messages).map(tuple)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@st.composite
def mastra_traces(draw: st.DrawFn, *, max_tools: int = 4) -> dict[str, Any]:
    """Mastra trace JSON that scores as an agent run.

    An ``agent_run`` root span (its input a string or a ``messages`` list; its output
    ``{"text": ...}``), a ``model_generation`` child whose input holds system and earlier
    messages, up to ``max_tools`` ``tool_call`` children with JSON input and output, and
    sometimes an unrelated span; spans in any order, timestamps as ISO 8601 with ``Z``.
    """
    trace_id = draw(_NAMES)
    start = _EPOCH + timedelta(seconds=draw(st.integers(0, 10**8)))
    messages = st.lists(
        st.fixed_dictionaries({"role": st.sampled_from(_ROLES), "content": _texts()}),
        max_size=3,
    )
    # One id per span: the root, the model generation, the tools and one unrelated span.
    ids = iter(draw(st.lists(_NAMES, min_size=3 + max_tools, max_size=3 + max_tools,
                             unique=True)))

    def span(span_type: str, offset: int, parent: str | None, **more: Any) -> dict[str, Any]:
        at = start + timedelta(milliseconds=offset)
        return {
            "traceId": trace_id, "spanId": next(ids), "parentSpanId": parent,
            "spanType": span_type, "startedAt": _iso(at),
            "endedAt": _iso(at + timedelta(milliseconds=draw(st.integers(0, 5_000)))), **more,
        }

    root = span("agent_run", 0, None, name="agent", entityType="agent",
                input=draw(_texts() | messages.map(lambda m: {"messages": m})),
                output={"text": draw(_texts())})
    root_id = root["spanId"]
    spans = [root, span("model_generation", 1, root_id,
                        input={"messages": draw(messages)}, output={"text": draw(_texts())})]
    for index in range(draw(st.integers(0, max_tools))):
        name = draw(_NAMES)
        spans.append(span("tool_call", 2 + index, root_id, entityType="tool", entityId=name,
                          entityName=name, input=draw(json_values(max_leaves=4)),
                          output=draw(json_values(max_leaves=4))))
    if draw(st.booleans()):
        spans.append(span("generic", 100, root_id, name=draw(_NAMES)))
    return {"traceId": trace_id, "spans": draw(st.permutations(spans))}


def _schema_of(schema: Any) -> Mapping[str, Any]:
    if isinstance(schema, Mapping):
        return schema
    if isinstance(schema, PromptStep | ScorePromptStep):
        found = schema.output_schema
    else:
        try:  # an output type: the schema a prompt step would send for it
            found = PromptStep(description="", create_prompt=str, output_type=schema).output_schema
        except ScorerDefinitionError as exc:
            raise misuse("judge_replies(schema)", schema,
                         f"is not an output type scorecore can describe ({exc})") from exc
    if isinstance(found, Mapping):
        return found
    raise misuse("judge_replies(schema)", schema,
                 "must be a JSON schema (a mapping), an output type (an attrs class, dataclass, "
                 "TypedDict …) or a prompt step with an output_type or output_schema")


def _other_types(value: Any) -> Iterator[Any]:
    others: tuple[Any, ...] = (None, True, 7, 0.5, "text", [], {})  # fresh [] and {} per call
    for other in others:
        if type(other) is not type(value):
            yield other


def _mutations(value: Any) -> list[Any]:
    """Values close to ``value`` that a schema accepting ``value`` may well reject."""
    found: list[Any] = list(_other_types(value))
    if isinstance(value, dict):
        for key in value:
            found.append({k: v for k, v in value.items() if k != key})
            found.extend({**value, key: other} for other in _other_types(value[key]))
        found.append({**value, "unexpected_key": 1})
    elif isinstance(value, list):
        found.append([*value, None])
        if value:
            found.append(value[1:])
            found.extend([other, *value[1:]] for other in _other_types(value[0]))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        found.extend([value - 1e9, value + 1e9, -value - 1])
    elif isinstance(value, str):
        found.extend(["", value * 50, value + "!"])
    return found


def judge_replies(schema: Any, *, valid: bool = True) -> st.SearchStrategy[str]:
    """Judge reply texts: JSON that ``schema`` accepts, or with ``valid=False`` rejects.

    Replies are texts, as a judge sends them (non-ASCII characters unescaped), so a
    :class:`~scorecore_adapters.testing.ScriptedJudge` passes them on as they are (a bare JSON
    string value would otherwise be taken for raw text). Valid replies are what a prompt step
    with that schema takes (``json.loads(reply)`` is its result, structured into its
    ``output_type`` when it has one); invalid ones end the step with a ``JudgeOutputInvalid``
    cause.

    Args:
        schema: a JSON schema (draft 2020-12); an output type (``judge_replies(Verdict)``: the
            schema a ``PromptStep(output_type=Verdict)`` sends); or a
            ``PromptStep``/``ScorePromptStep`` with an ``output_type`` or ``output_schema``.
        valid: whether the replies satisfy the schema.

    Invalid replies are near misses (a required key dropped, a value of the wrong type, an
    extra key, a number out of range) and other JSON values, each checked against the schema
    with ``Draft202012Validator``; a schema that accepts every JSON value (``{}``) has none,
    and hypothesis reports the strategy as unsatisfiable.

    Raises:
        ScorerDefinitionError: ``schema`` is none of these (or an output type scorecore
            cannot describe, such as ``datetime``).

    >>> import json
    >>> from hypothesis import given
    >>> from jsonschema import Draft202012Validator
    >>> schema = {"type": "object", "properties": {"score": {"type": "number"}},
    ...           "required": ["score"]}
    >>> accepts = Draft202012Validator(schema).is_valid
    >>> @given(judge_replies(schema), judge_replies(schema, valid=False))
    ... def test_replies(good, bad):
    ...     assert accepts(json.loads(good)) and not accepts(json.loads(bad))
    >>> test_replies()
    """
    resolved = _schema_of(schema)
    validator = Draft202012Validator(resolved)
    accepted = values_for_schema(resolved).filter(validator.is_valid)
    if valid:
        return accepted.map(_reply_text)
    near = accepted.flatmap(lambda value: st.sampled_from(_mutations(value)))
    return st.one_of(near, json_values(max_leaves=4)).filter(
        lambda value: not validator.is_valid(value)
    ).map(_reply_text)


def _reply_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _not_json(text: str) -> bool:
    if "```" in text:  # a fenced block is read as JSON by the core: leave fences out
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def malformed_replies() -> st.SearchStrategy[str]:
    """Reply texts that are not JSON: prose, JSON cut short, single quotes, trailing commas.

    >>> from hypothesis import given
    >>> import json
    >>> @given(malformed_replies())
    ... def test_not_json(text):
    ...     try:
    ...         json.loads(text)
    ...     except ValueError:
    ...         return
    ...     raise AssertionError(text)
    >>> test_not_json()
    """
    cut = json_values(max_leaves=6).map(json.dumps).flatmap(
        lambda text: st.integers(0, max(len(text) - 1, 0)).map(lambda n: text[:n])
    )
    quoted = st.dictionaries(_NAMES, _NAMES, min_size=1, max_size=3).map(
        lambda d: "{" + ", ".join(f"'{k}': '{v}'" for k, v in d.items()) + "}"
    )
    trailing = st.lists(st.integers(), min_size=1, max_size=4).map(
        lambda xs: "[" + ", ".join(map(str, xs)) + ",]"
    )
    scores = st.floats(0, 1).map(lambda s: f"I'd give it {s:.2f} out of 1.")
    return st.one_of(cut, quoted, trailing, scores, _texts()).filter(_not_json)
