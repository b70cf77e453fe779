"""Pass/fail checks on the text the agent answered."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scorecore import NotScorable, Scorer
from scorecore.scorers._shapes import (
    RunShape,
    Shape,
    ShapedContext,
    ShapeIn,
    ShapeOut,
    check_text,
    output_text,
    refuse,
    shape_of,
    start,
)
from scorecore.scorers._strings import dice_coefficient
from scorecore.validators import check_fraction

__all__ = ["equals", "excludes", "includes", "matches", "similarity"]


def _text_check(
    *, id: str, name: str, description: str, runs: Shape, separator: str, target: str,
    passes: Callable[[str], bool], measure: Callable[[str], float] | None = None,
) -> Scorer[Any, Any]:
    def preprocess(ctx: ShapedContext) -> dict[str, Any] | NotScorable:
        text = output_text(ctx.run, runs, separator=separator, assistant_only=True)
        if isinstance(text, NotScorable):
            return text
        verdict: dict[str, Any] = {"output": text, "target": target, "passed": passes(text)}
        if measure is not None:
            verdict["similarity"] = measure(text)
        return verdict

    return (
        start(id=id, name=name, description=description, shape=runs, reads_input=False)
        .preprocess(preprocess)
        .generate_score(lambda ctx: 1.0 if ctx.results.preprocess_step_result["passed"] else 0.0)
    )


def _folded(text: str, ignore_case: bool) -> str:
    return text.lower() if ignore_case else text


def includes(
    expected: str, *, ignore_case: bool = True,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "check-includes"
) -> Scorer[ShapeIn, ShapeOut]:
    """1 if the answer contains ``expected``, else 0.

    The answer is the assistant messages' texts joined with a space (a phrase may span two
    messages), or the ``str`` output for ``shape=TEXT``; case is ignored by default.

    >>> from scorecore.scorers import TEXT
    >>> check = includes("sunny", shape=TEXT)
    >>> check.run_sync(input="", output="It is Sunny today").unwrap().score
    1.0
    """
    runs = shape_of(id, shape)
    target = _folded(check_text(id, "expected", expected), ignore_case)
    return _text_check(
        id=id, name="Includes Check", description=f"Checks that the output includes {expected!r}",
        runs=runs, separator=" ", target=target,
        passes=lambda text: target in _folded(text, ignore_case),
    )


def excludes(
    unwanted: str, *, ignore_case: bool = True,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "check-excludes"
) -> Scorer[ShapeIn, ShapeOut]:
    """1 if the answer does not contain ``unwanted``, else 0 (see :func:`includes`).

    >>> from scorecore.scorers import TEXT
    >>> check = excludes("error", shape=TEXT)
    >>> check.run_sync(input="", output="An ERROR occurred").unwrap().score
    0.0
    """
    runs = shape_of(id, shape)
    target = _folded(check_text(id, "unwanted", unwanted), ignore_case)
    return _text_check(
        id=id, name="Excludes Check",
        description=f"Checks that the output does not include {unwanted!r}",
        runs=runs, separator=" ", target=target,
        passes=lambda text: target not in _folded(text, ignore_case),
    )


def equals(
    expected: str, *, ignore_case: bool = True,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "check-equals"
) -> Scorer[ShapeIn, ShapeOut]:
    """1 if the answer equals ``expected``, else 0; nothing is trimmed.

    The answer is the assistant messages' texts joined with no separator, or the ``str``
    output for ``shape=TEXT``; case is ignored by default.

    >>> from scorecore.scorers import TEXT
    >>> check = equals("Paris", shape=TEXT)
    >>> check.run_sync(input="", output="paris").unwrap().score
    1.0
    """
    runs = shape_of(id, shape)
    target = _folded(check_text(id, "expected", expected, allow_empty=True), ignore_case)
    return _text_check(
        id=id, name="Equals Check", description=f"Checks that the output equals {expected!r}",
        runs=runs, separator="", target=target,
        passes=lambda text: _folded(text, ignore_case) == target,
    )


def matches(
    pattern: str | re.Pattern[str], *, exact: bool = False,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "check-matches",
) -> Scorer[ShapeIn, ShapeOut]:
    """1 if the answer matches the regular expression ``pattern``, else 0.

    ``pattern`` is a Python regular expression (a string or a compiled ``re.Pattern``; give
    flags with ``re.compile``). It is searched anywhere in the answer, or must match the whole
    answer when ``exact``. The answer is the assistant messages' texts joined with no
    separator, or the ``str`` output for ``shape=TEXT``.

    >>> from scorecore.scorers import TEXT
    >>> check = matches(r"cat|dog", exact=True, shape=TEXT)
    >>> check.run_sync(input="", output="hotdog").unwrap().score
    0.0
    """
    runs = shape_of(id, shape)
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise refuse(id, "pattern", "a str or a str pattern", pattern)
        compiled: re.Pattern[str] = pattern
    else:
        try:
            compiled = re.compile(check_text(id, "pattern", pattern, allow_empty=True))
        except re.error as exc:
            raise refuse(id, "pattern", f"a valid regular expression ({exc})", pattern) from exc
    test = compiled.fullmatch if exact else compiled.search
    return _text_check(
        id=id, name="Matches Check",
        description=f"Checks that the output matches /{compiled.pattern}/",
        runs=runs, separator="", target=compiled.pattern,
        passes=lambda text: test(text) is not None,
    )


def similarity(
    expected: str, *, threshold: float = 0.7, ignore_case: bool = True,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "check-similarity",
) -> Scorer[ShapeIn, ShapeOut]:
    """1 if the answer's Dice similarity to ``expected`` reaches ``threshold``, else 0.

    The similarity is :func:`scorecore.scorers.content_similarity`'s (character pairs,
    whitespace ignored). The answer is the assistant messages' texts joined with a space, or
    the ``str`` output for ``shape=TEXT``; case is ignored by default.

    >>> from scorecore.scorers import TEXT
    >>> check = similarity("Sunny, 72°F", shape=TEXT)
    >>> check.run_sync(input="", output="sunny 72°F").unwrap().score
    1.0
    """
    runs = shape_of(id, shape)
    target = _folded(check_text(id, "expected", expected, allow_empty=True), ignore_case)
    minimum = check_fraction("threshold", threshold, scorer_id=id)

    def measure(text: str) -> float:
        return dice_coefficient(_folded(text, ignore_case), target)

    return _text_check(
        id=id, name="Similarity Check",
        description=f"Checks that the output is similar to {expected!r} (≥ {threshold})",
        runs=runs, separator=" ", target=target,
        passes=lambda text: measure(text) >= minimum, measure=measure,
    )
