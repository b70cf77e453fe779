"""content_similarity (Dice on character pairs) and textual_difference (the LCS ratio)."""

from __future__ import annotations

from collections import Counter
from typing import TypedDict

from scorecore import Scorer
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, compare_texts, shape_of
from scorecore.scorers._strings import (
    JS_WHITESPACE_RUN,
    dice_coefficient,
    js_trim,
    lcs_ratio,
    utf16_units,
)

__all__ = ["content_similarity", "textual_difference"]


class _Processed(TypedDict):
    processed_input: str
    processed_output: str


def content_similarity(
    *, ignore_case: bool = True, ignore_whitespace: bool = True,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "content-similarity-scorer",
) -> Scorer[ShapeIn, ShapeOut]:
    """How alike the output's characters are to the input's (0 to 1): the Dice coefficient.

    The texts are compared as string-similarity's ``compareTwoStrings`` does: all whitespace
    removed, then ``2·|pairs(a) ∩ pairs(b)| / (|a| + |b| - 2)`` over the multisets of adjacent
    UTF-16 unit pairs; equal texts score 1, a text shorter than two units 0.

    Args:
        ignore_case: lowercase both texts first.
        ignore_whitespace: collapse whitespace runs and trim (kept for Mastra parity: the
            comparison removes all whitespace anyway, so it never changes the score).
        shape: ``AGENT`` (default): the input messages' texts against the output messages'
            texts, each joined with ``", "``; ``TEXT``: a plain ``str`` input and output.
        id: the scorer's id (Mastra's ``content-similarity-scorer`` by default).

    Not scorable when the input has no text or an agent run's output has no messages.

    >>> from scorecore.scorers import TEXT
    >>> scorer = content_similarity(shape=TEXT)
    >>> scorer.run_sync(input="Hello world", output="hello  World!").unwrap().score
    0.9473684210526315
    """
    runs = shape_of(id, shape)

    def process(text: str) -> str:
        if ignore_case:
            text = text.lower()
        if ignore_whitespace:
            text = js_trim(JS_WHITESPACE_RUN.sub(" ", text))
        return text

    def processed(source: str, answer: str) -> _Processed:
        return {"processed_input": process(source), "processed_output": process(answer)}

    def score(texts: _Processed) -> float:
        return dice_coefficient(texts["processed_input"], texts["processed_output"])

    return compare_texts(
        id=id, name="Content Similarity Scorer", shape=runs, compare=processed, score=score,
        description="Character-pair (Dice) similarity between the input and the output")


class _Difference(TypedDict):
    ratio: float
    confidence: float
    changes: int
    length_diff: float


def _count_changes(first: str, second: str) -> int:
    # Mastra's word-level change count: informational, never part of the score.
    def words(text: str) -> list[str]:
        return [w for w in JS_WHITESPACE_RUN.split(text) if w]

    if js_trim(JS_WHITESPACE_RUN.sub(" ", first)) == js_trim(JS_WHITESPACE_RUN.sub(" ", second)):
        return 0 if first == second else (abs(len(words(first)) - len(words(second))) or 1)
    a, b = words(first), words(second)
    if not a or not b:
        return len(a) + len(b)
    # Mastra pairs each word with the first unused equal word: as many pairs as the two word
    # multisets share, counted here without its quadratic scan.
    matched = (Counter(a) & Counter(b)).total()
    return max(len(a), len(b)) - matched


def textual_difference(
    *,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "textual-difference-scorer"
) -> Scorer[ShapeIn, ShapeOut]:
    """How little the output differs from the input (0 to 1): ``2·LCS / (|a| + |b|)``.

    LCS is the longest common subsequence of UTF-16 units (computed with rapidfuzz). Equal
    texts score 1; an empty output 0. The preprocess result also has Mastra's informational
    ``confidence`` (1 - relative length difference), ``changes`` (a word count heuristic) and
    ``length_diff``.

    Args:
        shape: ``AGENT`` (default): the input messages' texts against the output messages'
            texts, each joined with ``", "``; ``TEXT``: a plain ``str`` input and output.
        id: the scorer's id (Mastra's ``textual-difference-scorer`` by default).

    Not scorable when the input has no text or an agent run's output has no messages.

    >>> from scorecore.scorers import TEXT
    >>> scorer = textual_difference(shape=TEXT)
    >>> scorer.run_sync(input="dormitory", output="dirty room").unwrap().score
    0.42105263157894735
    """
    runs = shape_of(id, shape)

    def difference(source: str, answer: str) -> _Difference:
        shortest, longest = sorted((len(utf16_units(source)), len(utf16_units(answer))))
        length_diff = (longest - shortest) / longest if longest else 0.0
        return {"ratio": lcs_ratio(source, answer), "confidence": 1 - length_diff,
                "changes": _count_changes(source, answer), "length_diff": length_diff}

    return compare_texts(
        id=id, name="Textual Difference Scorer", shape=runs, compare=difference,
        score=lambda found: found["ratio"],
        description="Longest-common-subsequence ratio between the input and the output")

