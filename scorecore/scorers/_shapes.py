"""What a built-in scorer reads: an agent run (Mastra's shape) or plain text.

Mastra's code scorers take agent runs only. Here the text scorers also take plain strings
(``shape=TEXT``), so an LLM completion can be scored without wrapping it in messages. Both
shapes read the same texts: the agent shape joins the messages as Mastra does.

The shape is a typed token, not a string flag: ``RunShape[In, Out]`` carries the run types, so
a factory taking ``shape: RunShape[In, Out] | None = None`` returns ``Scorer[In, Out]`` with no
overloads, and the type parameters' defaults (PEP 696) make the agent shape the type of a call
that passes no shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Generic, Literal, TypeAlias, cast, final

import attrs
from typing_extensions import TypeVar

from scorecore import (
    AgentInput,
    AgentOutput,
    NotScorable,
    Scorer,
    ScorerBuilder,
    ScorerDefinitionError,
    ScorerRun,
    StepContext,
    create_scorer,
    not_scorable,
)
from scorecore.scorers._messages import joined_text
from scorecore.scorers._strings import is_blank
from scorecore.validators import misuse

Shape: TypeAlias = Literal["agent", "text"]
"""``"agent"``: Mastra's agent run (:class:`~scorecore.AgentInput` and messages);
``"text"``: the run's input and output are plain strings."""

ShapedRun: TypeAlias = ScorerRun[Any, Any]
"""A run of the shape a built-in was built with (an agent run or plain text): its steps read
it through that shape (:func:`input_text`, :func:`output_text`), so its types are the
shape's, known when built, not here."""

ShapedContext: TypeAlias = StepContext[Any, Any, None, None]
"""What a built-in's first step receives: a :data:`ShapedRun` and no earlier results."""

ShapedBuilder: TypeAlias = ScorerBuilder[Any, Any, None, None]
"""A built-in's builder before its steps: typed by the factory's shape on return."""

ShapeIn = TypeVar("ShapeIn", default=AgentInput)
ShapeOut = TypeVar("ShapeOut", default=AgentOutput)
Found = TypeVar("Found")


@final
@attrs.frozen(repr=False)
class RunShape(Generic[ShapeIn, ShapeOut]):
    """What a built-in scorer's runs hold, as a typed token: :data:`AGENT` or :data:`TEXT`.

    Pass one as ``shape=``; the scorer's type follows it (``Scorer[In, Out]``).

    >>> from scorecore.scorers import TEXT, toxicity
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> scorer = toxicity(ScriptedJudge([{"verdicts": []}]), shape=TEXT)
    >>> TEXT, scorer.run_sync(input="", output="Happy to help.").unwrap().score
    (TEXT, 0.0)
    """

    name: Literal["agent", "text", "trajectory"]

    def __repr__(self) -> str:
        return self.name.upper()


AGENT: Final[RunShape[AgentInput, AgentOutput]] = RunShape("agent")
"""Mastra's agent runs: an :class:`~scorecore.AgentInput` and the agent's messages (the
default of every built-in scorer)."""

TEXT: Final[RunShape[str, str]] = RunShape("text")
"""Plain text runs: the output is a ``str``, the input a ``str`` (the question or source); a
scorer that does not read the input takes ``None`` too at run time."""


def shape_of(scorer_id: str, shape: object) -> Shape:
    """The shape a factory was given: ``shape`` (``AGENT`` when ``None``)."""
    if shape is None or shape == AGENT:
        return "agent"
    if shape == TEXT:
        return "text"
    raise refuse(scorer_id, "shape", "AGENT or TEXT (from scorecore.scorers)", shape)


def shown(value: object) -> str:
    """``repr(value)`` cut to 200 characters, or the type's name if it has no usable repr."""
    try:
        text = repr(value)
    # A huge int's repr raises ValueError, a user object's __repr__ anything.
    except Exception:  # noqa: BLE001 - only used to describe a bad value in an error
        return f"<{type(value).__qualname__}>"
    return text if len(text) <= 200 else f"{text[:200]}… ({len(text)} chars)"


def refuse(scorer_id: str, field: str, wanted: str, value: object) -> ScorerDefinitionError:
    """The error for a bad factory argument: the scorer, the field, what it needs, the value."""
    return misuse(field, value, f"must be {wanted}", scorer_id=scorer_id)




def check_text(scorer_id: str, field: str, value: object, *, allow_empty: bool = False) -> str:
    """``value`` if it is a ``str`` (non-empty unless allowed), else a ScorerDefinitionError."""
    if not isinstance(value, str) or (not allow_empty and not value):
        raise refuse(scorer_id, field, "a str" if allow_empty else "a non-empty str", value)
    return value


def start(
    *, id: str, name: str, description: str, shape: Shape, reads_input: bool
) -> ShapedBuilder:
    """A builder for ``shape``: ``type="agent"``, or ``str`` output (and input if it is read)."""
    if shape == "agent":
        return create_scorer(id=id, name=name, description=description, type="agent")
    if reads_input:
        return create_scorer(id=id, name=name, description=description,
                             input_type=str, output_type=str)
    return create_scorer(id=id, name=name, description=description, output_type=str)


def input_text(run: ShapedRun, shape: Shape) -> str | NotScorable:
    """The input's text (the agent's input messages joined with ``", "``), or not scorable
    when there is none: a reference that is missing cannot be compared with."""
    if shape == "text":
        text = cast(str, run.input)
        where = "run.input is blank"
    else:
        agent_input = cast(AgentInput, run.input)
        text = joined_text(agent_input.input_messages, ", ")
        where = ("run.input has no input messages" if not agent_input.input_messages
                 else "run.input.input_messages hold no text")
    if is_blank(text):
        return not_scorable(f"no input text: {where}")
    return text


def input_and_output(run: ShapedRun, shape: Shape) -> tuple[str, str] | NotScorable:
    """The input's text and the output's text (:func:`input_text`, :func:`output_text`); not
    scorable without either."""
    source = input_text(run, shape)
    if isinstance(source, NotScorable):
        return source
    answer = output_text(run, shape)
    return answer if isinstance(answer, NotScorable) else (source, answer)


def compare_texts(
    *, id: str, name: str, description: str, shape: Shape,
    compare: Callable[[str, str], Found | NotScorable], score: Callable[[Found], float],
) -> Scorer[Any, Any]:
    """A scorer of the output's text against the input's: its preprocess result is
    ``compare(input text, output text)`` (not scorable without either, see
    :func:`input_and_output`), its score ``score`` of that result."""
    def preprocess(ctx: ShapedContext) -> Found | NotScorable:
        texts = input_and_output(ctx.run, shape)
        return texts if isinstance(texts, NotScorable) else compare(*texts)

    def scored(ctx: StepContext[Any, Any, Found, None]) -> float:
        return score(ctx.results.preprocess_step_result)

    return (start(id=id, name=name, description=description, shape=shape, reads_input=True)
            .preprocess(preprocess).generate_score(scored))


def no_output_messages(run: ShapedRun, shape: Shape) -> NotScorable | None:
    """Not scorable when an agent run's output has no messages at all (nothing was answered)."""
    if shape == "agent" and not run.output:
        return not_scorable("no output: run.output has no messages")
    return None


def output_text(
    run: ShapedRun, shape: Shape, *, separator: str = ", ",
    assistant_only: bool = False,
) -> str | NotScorable:
    """The output's text: the string itself, or the messages' texts joined with ``separator``
    (only ``assistant`` messages if ``assistant_only``); not scorable without any message."""
    missing = no_output_messages(run, shape)
    if missing is not None:
        return missing
    if shape == "text":
        return cast(str, run.output)
    messages = run.output
    if assistant_only:
        messages = [m for m in messages if m.role == "assistant"]
    return joined_text(messages, separator)
