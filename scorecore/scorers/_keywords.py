"""keyword_coverage: the share of the input's keywords that the output repeats.

Keywords are extracted exactly as the npm package ``keyword-extractor`` 0.0.28 does with the
options Mastra passes (English, digits removed, lowercased, duplicates removed), using the same
SMART stop list (``data/smart_stopwords_en.txt``).
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from typing import Final, TypedDict

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, compare_texts, shape_of
from scorecore.scorers._strings import JS_WHITESPACE, js_trim

__all__ = ["keyword_coverage"]

_TAG: Final = re.compile(r"<[^>]+>")
_URL: Final = re.compile(r"https?://")
_JS_WHITESPACE_CHAR: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}]")
# \A and \Z, not ^ and $: Python's $ also matches before a final newline.
_PUNCTUATION: Final = re.compile("\\.|,|;|!|\\?|\\(|\\)|:|\"|\\A'|'\\Z|“|”|‘|’")  # noqa: RUF001
_SHORT_JUNK: Final = re.compile("[_@&#]")
_ASCII_DIGITS: Final = re.compile("[0-9]+")


@cache
def _stopwords() -> frozenset[str]:
    text = (files("scorecore.scorers") / "data" / "smart_stopwords_en.txt").read_text("utf-8")
    return frozenset(text.split())


def keywords(text: str) -> list[str]:
    """The keywords of ``text``, as ``keyword-extractor`` finds them.

    Tags ``<…>`` are removed and the text split on single whitespace characters; each word
    without ``http(s)://`` loses ``. , ; ! ? ( ) : "`` and curly quotes, and a leading or
    trailing ``'``; all-digit words and words in the SMART stop list are dropped; words are
    lowercased (URLs keep their case) and kept once, in order.

    >>> keywords("Hello! The <b>Eiffel</b> tower is 330 metres tall; see https://Paris.fr")
    ['eiffel', 'tower', 'metres', 'tall', 'https://Paris.fr']
    """
    text = js_trim(_TAG.sub("", text))
    if not text:
        return []
    stop = _stopwords()
    found: dict[str, None] = {}
    for raw in _JS_WHITESPACE_CHAR.split(text):
        is_url = _URL.search(raw) is not None
        word = raw if is_url else _PUNCTUATION.sub("", raw)
        if len(word) == 1:
            word = _SHORT_JUNK.sub("", word)
        if _ASCII_DIGITS.fullmatch(word):
            continue
        if word and word.lower() not in stop:
            found.setdefault(word if is_url else word.lower(), None)
    return list(found)


class _Keywords(TypedDict):
    reference_keywords: list[str]
    response_keywords: list[str]
    matched_keywords: list[str]
    score: float


def keyword_coverage(
    *,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "keyword-coverage-scorer"
) -> Scorer[ShapeIn, ShapeOut]:
    """The share of the input's keywords that also appear in the output (0 to 1).

    Keywords come from ``keywords`` (stop words, numbers and punctuation removed); the
    score is ``|reference ∩ response| / |reference|``, unrounded.

    Args:
        shape: ``AGENT`` (default): the input messages' texts against the output messages'
            texts, each joined with ``", "``; ``TEXT``: a plain ``str`` input and output.
        id: the scorer's id (Mastra's ``keyword-coverage-scorer`` by default).

    Not scorable when the input has no keyword (Mastra scores that 1), no text, or an agent
    run's output has no messages.

    >>> from scorecore.scorers import TEXT
    >>> scorer = keyword_coverage(shape=TEXT)
    >>> result = scorer.run_sync(
    ...     input="Explain photosynthesis in plants", output="Plants turn light into sugar")
    >>> result.unwrap().score, result.unwrap().preprocess_step_result["matched_keywords"]
    (0.3333333333333333, ['plants'])
    """
    runs = shape_of(id, shape)

    def covered(source: str, answer: str) -> _Keywords | NotScorable:
        reference = keywords(source)
        if not reference:
            return not_scorable(
                "no input keywords: every word of the input is a stop word, a number or "
                "punctuation"
            )
        response = keywords(answer)
        offered = set(response)
        matched = [k for k in reference if k in offered]
        return {"reference_keywords": reference, "response_keywords": response,
                "matched_keywords": matched, "score": len(matched) / len(reference)}

    return compare_texts(
        id=id, name="Keyword Coverage Scorer", shape=runs, compare=covered,
        score=lambda found: found["score"],
        description="The share of the input's keywords that the output repeats")
