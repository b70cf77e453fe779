"""tone: sentiment agreement with a reference, or sentiment stability across sentences.

Sentiment is the npm package ``sentiment`` 5.0.2's, ported: its tokenizer, its negation rule
and its word list (AFINN-165 plus 767 emoji, ``data/``), so the comparatives equal Mastra's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Final, TypedDict

from scorecore import NotScorable, Scorer, ScorerDefinitionError, not_scorable
from scorecore.scorers._shapes import (
    RunShape,
    ShapedContext,
    ShapeIn,
    ShapeOut,
    check_text,
    output_text,
    shape_of,
    start,
)
from scorecore.scorers._strings import JS_WHITESPACE, is_blank, js_trim

__all__ = ["tone"]

_PUNCTUATION: Final = re.compile(r"[.,/#!?$%^&*;:{}=_`\"~()]")
_WHITESPACE_RUN: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}]{{2,}}")
_SENTENCE: Final = re.compile(r"[^.!?]+[.!?]+")
_NEGATORS: Final = frozenset({
    "cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't",
    "isnt", "isn't",
})


@cache
def _labels() -> Mapping[str, int]:
    data = files("scorecore.scorers") / "data"
    labels: dict[str, int] = json.loads((data / "afinn_165_en.json").read_text("utf-8"))
    labels.update(json.loads((data / "emoji_sentiment.json").read_text("utf-8")))
    return labels


def comparative(text: str) -> float:
    """``sentiment``'s comparative score: the sum of the tokens' valences over the token count.

    Tokens: lowercase, newlines and ``. , / # ! ? $ % ^ & * ; : { } = _ ` " ~ ( )`` become
    spaces, runs of two or more whitespace characters one space, then trim and split on spaces.
    A token after a negator (not, don't, isn't …) counts negated. An empty text is one empty
    token, so it scores 0.

    >>> comparative("I love it"), comparative("I do not love it")
    (1.0, -0.6)
    """
    cleaned = _PUNCTUATION.sub(" ", text.lower().replace("\n", " "))
    tokens = js_trim(_WHITESPACE_RUN.sub(" ", cleaned)).split(" ")
    labels = _labels()
    score = 0
    for index, token in enumerate(tokens):
        value = labels.get(token)
        if value is None:
            continue
        score += -value if index > 0 and tokens[index - 1] in _NEGATORS else value
    return score / len(tokens)


def sentences(text: str) -> list[str]:
    """``text`` cut after each run of ``. ! ?``; trailing text without one is a sentence too.

    >>> sentences("Great! Really great. and then")
    ['Great!', ' Really great.', ' and then']
    """
    found = _SENTENCE.findall(text)
    # Mastra drops what follows the last terminator unless no terminator exists at all;
    # here an unterminated last sentence still counts.
    consumed = sum(len(s) for s in found)
    rest = text[consumed:] if found else text
    if not found or not is_blank(rest):
        found.append(rest)
    return found


def _mean_and_variance(values: list[float]) -> tuple[float, float]:
    # Summed left to right like JavaScript's reduce (Python 3.12's sum() compensates).
    total = 0.0
    for value in values:
        total += value
    mean = total / len(values)
    spread = 0.0
    for value in values:
        spread += (value - mean) * (value - mean)
    return mean, spread / len(values)


class _Tone(TypedDict, total=False):
    score: float
    response_sentiment: float
    reference_sentiment: float
    difference: float
    avg_sentiment: float
    sentiment_variance: float


def tone(
    *, reference_tone: str | None = None,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "tone-scorer"
) -> Scorer[ShapeIn, ShapeOut]:
    """The output's tone (0 to 1): closeness to a reference tone, or steadiness across sentences.

    With ``reference_tone``: ``max(0, 1 - |comparative(output) - comparative(reference)|)``.
    Without: ``max(0, 1 - variance)`` of the sentences' comparatives (population variance),
    so a steady tone scores 1 and swings from praise to insult score lower. See
    ``comparative`` and ``sentences``.

    Args:
        reference_tone: a text whose sentiment the output should match (not blank).
        shape: ``AGENT`` (default): every output message's text, joined with ``", "``;
            ``TEXT``: a plain ``str`` output. The input is not read.
        id: the scorer's id (Mastra's ``tone-scorer`` by default).

    Not scorable when the output has no text (Mastra scores that 1).

    >>> from scorecore.scorers import TEXT
    >>> scorer = tone(reference_tone="This is wonderful!", shape=TEXT)
    >>> scorer.run_sync(input="", output="Good work.").unwrap().score
    0.8333333333333333
    """
    runs = shape_of(id, shape)
    reference = None
    if reference_tone is not None:
        if is_blank(check_text(id, "reference_tone", reference_tone)):
            raise ScorerDefinitionError(
                f"scorer {id!r}: reference_tone is blank; give a text with the tone to match, "
                f"or leave it out to score the output's steadiness",
                scorer_id=id, field="reference_tone", value=reference_tone,
            )
        reference = comparative(reference_tone)

    def preprocess(ctx: ShapedContext) -> _Tone | NotScorable:
        answer = output_text(ctx.run, runs)
        if isinstance(answer, NotScorable):
            return answer
        if is_blank(answer):
            return not_scorable("no output text: the output is blank")
        if reference is not None:
            response = comparative(answer)
            difference = abs(response - reference)
            return {"score": max(0.0, 1 - difference), "response_sentiment": response,
                    "reference_sentiment": reference, "difference": difference}
        mean, variance = _mean_and_variance([comparative(s) for s in sentences(answer)])
        return {"score": max(0.0, 1 - variance), "avg_sentiment": mean,
                "sentiment_variance": variance}

    return (
        start(id=id, name="Tone Scorer", shape=runs, reads_input=False,
              description="The output's tone: agreement with a reference or steadiness")
        .preprocess(preprocess)
        .generate_score(lambda ctx: ctx.results.preprocess_step_result["score"])
    )
