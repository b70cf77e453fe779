"""completeness: how many of the input's words the output covers, after lemmatizing both.

Mastra extracts "elements" with the JavaScript NLP library compromise: every term, with verbs
turned into their infinitive ("was running" → run). No Python package reproduces compromise,
so words here are lemmatized with simplemma (a dictionary lemmatizer, pure Python, MIT): verbs
*and* nouns take their dictionary form ("stores" → store, "ran" → run, "mice" → mouse), and an
auxiliary is kept as its lemma ("was running" → be, run). The coverage rule is Mastra's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import cache
from typing import Final, TypedDict

from scorecore import NotScorable, Scorer, not_scorable
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, compare_texts, shape_of

__all__ = ["completeness"]

_WORD: Final = re.compile("[^\\W_]+(?:['\u2019][^\\W_]+)*")
_MARKS: Final = re.compile("[\u0300-\u036f]")
_NOT_ALNUM: Final = re.compile("[^a-z0-9]+")
# English clitics, as compromise expands them; "'s" (is / has / possessive) is too ambiguous
# to expand and is dropped, like the apostrophe.
_CLITICS: Final = (("n't", "not"), ("'re", "are"), ("'ve", "have"), ("'ll", "will"),
                   ("'m", "am"), ("'d", "would"), ("'s", ""))
_NEGATED_STEMS: Final = {"ca": "can", "wo": "will", "sha": "shall"}


@cache
def _lemmatizer() -> Callable[[str], str]:
    try:
        import simplemma  # noqa: PLC0415 - an optional dependency, loaded only when used
    except ImportError as exc:
        raise ModuleNotFoundError(
            "the completeness scorer needs simplemma: pip install 'scorecore[nlp]'",
            name="simplemma",
        ) from exc

    def lemma(word: str) -> str:
        return simplemma.lemmatize(word, lang="en")

    return lemma


def _normalize(text: str) -> str:
    # Mastra's normalizeString: drop combining marks after NFD, then lowercase.
    return _MARKS.sub("", unicodedata.normalize("NFD", text)).lower()


def _words(text: str) -> list[str]:
    words: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0).replace("\u2019", "'")
        lowered = word.lower()
        for clitic, expansion in _CLITICS:
            if lowered.endswith(clitic) and len(lowered) > len(clitic):
                stem = word[: -len(clitic)]
                if clitic == "n't":
                    stem = _NEGATED_STEMS.get(stem.lower(), stem)
                words.append(stem)
                if expansion:
                    words.append(expansion)
                break
        else:
            words.append(word)
    return words


def elements(text: str) -> list[str]:
    """The distinct lemmatized words of ``text``, in order of first appearance.

    Each word is lemmatized, stripped of diacritics, lowercased and split on anything outside
    ``[a-z0-9]`` (as Mastra splits compromise's terms), so non-Latin words and emoji vanish.

    >>> elements("She was running quickly to the stores.")
    ['she', 'be', 'run', 'quickly', 'to', 'the', 'store']
    >>> elements("I don't know; Café 42!")
    ['i', 'do', 'not', 'know', 'cafe', '42']
    """
    lemma = _lemmatizer()
    seen: dict[str, None] = {}
    for word in _words(text):
        for part in _NOT_ALNUM.split(_normalize(lemma(word))):
            if part:
                seen.setdefault(part, None)
    return list(seen)


def _covers(element: str, candidate: str) -> bool:
    if len(element) <= 3:
        return element == candidate
    longer, shorter = (element, candidate) if len(element) > len(candidate) else (
        candidate, element)
    return shorter in longer and len(shorter) / len(longer) > 0.6


def coverage(required: Sequence[str], offered: Sequence[str]) -> tuple[float, list[str]]:
    """Mastra's coverage: the share of ``required`` elements some ``offered`` element covers,
    and the uncovered ones.

    An element of up to 3 characters needs an equal one; a longer one is covered when the
    longer of the two contains the shorter and the shorter is more than 60 % of its length.

    >>> coverage(["store", "run", "quickly"], ["stores", "runs"])
    (0.3333333333333333, ['run', 'quickly'])
    """
    missing = [e for e in required if not any(_covers(e, o) for o in offered)]
    return (len(required) - len(missing)) / len(required), missing


class _Elements(TypedDict):
    input_elements: list[str]
    output_elements: list[str]
    missing_elements: list[str]
    score: float


def completeness(*,
    shape: RunShape[ShapeIn, ShapeOut] | None = None,
    id: str = "completeness-scorer") -> Scorer[ShapeIn, ShapeOut]:
    """How much of the input's content the output covers (0 to 1), by lemmatized words.

    Both texts are reduced to their distinct lemmatized words (``elements``); the score is
    the share of the input's words that an output word covers (``coverage``).

    Args:
        shape: ``AGENT`` (default) scores an agent run: the input messages' texts against
            the output messages' texts, each joined with ``", "`` as Mastra does; ``TEXT``
            scores a plain ``str`` input and output.
        id: the scorer's id (Mastra's ``completeness-scorer`` by default).

    Not scorable when the input has no text or no word (a punctuation-only input), or when an
    agent run's output has no messages. Needs ``pip install 'scorecore[nlp]'`` (simplemma).

    >>> from scorecore.scorers import TEXT
    >>> scorer = completeness(shape=TEXT)
    >>> result = scorer.run_sync(
    ...     input="She was running quickly to the stores.",
    ...     output="She ran quickly to the store.")
    >>> result.unwrap().score, result.unwrap().preprocess_step_result["missing_elements"]
    (0.8571428571428571, ['be'])
    """
    runs = shape_of(id, shape)
    _lemmatizer()  # a missing optional dependency is reported when the scorer is built

    def covered(source: str, answer: str) -> _Elements | NotScorable:
        required = elements(source)
        if not required:
            return not_scorable("no input words: the input text has no letters or digits")
        offered = elements(answer)
        score, missing = coverage(required, offered)
        return {"input_elements": required, "output_elements": offered,
                "missing_elements": missing, "score": score}

    return compare_texts(
        id=id, name="Completeness Scorer", shape=runs, compare=covered,
        score=lambda found: found["score"],
        description="How much of the input's content (lemmatized words) the output covers")
