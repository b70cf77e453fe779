"""String primitives shared by the code scorers, measured the way JavaScript measures strings.

Mastra's code scorers run on JavaScript strings: lengths, indices and bigrams count UTF-16 code
units (an emoji counts 2), ``\\s`` is JavaScript's whitespace class and ``trim`` strips it. The
helpers here reproduce that, so the scores agree with Mastra's to the last bit.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

from rapidfuzz.distance import LCSseq

JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""JavaScript's ``\\s``: unlike Python's, it has U+FEFF and lacks U+001C to U+001F and U+0085."""

JS_WHITESPACE_RUN: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}]+")


def js_trim(text: str) -> str:
    """``String.prototype.trim``: strip JavaScript whitespace from both ends."""
    return text.strip(JS_WHITESPACE)


def is_blank(text: str) -> bool:
    """Whether ``text`` is empty or only JavaScript whitespace."""
    return not js_trim(text)


def utf16_units(text: str) -> str:
    """``text`` with each astral character split into its two surrogates: one char per unit.

    >>> len(utf16_units("a😀")), len("a😀")
    (3, 2)
    """
    if text.isascii() or max(text) < "\U00010000":
        return text
    out: list[str] = []
    for char in text:
        code = ord(char)
        if code < 0x10000:
            out.append(char)
        else:
            code -= 0x10000
            out.append(chr(0xD800 + (code >> 10)))
            out.append(chr(0xDC00 + (code & 0x3FF)))
    return "".join(out)


def dice_coefficient(first: str, second: str) -> float:
    """string-similarity's ``compareTwoStrings``: the Dice coefficient of adjacent unit pairs.

    All whitespace is removed first; equal texts (two empty ones too) give 1, a text shorter
    than two UTF-16 units gives 0, otherwise ``2·|pairs(a) ∩ pairs(b)| / (|a| + |b| - 2)``
    with the pairs counted as a multiset.

    >>> dice_coefficient("night", "nacht")
    0.25
    """
    first = JS_WHITESPACE_RUN.sub("", first)
    second = JS_WHITESPACE_RUN.sub("", second)
    if first == second:
        return 1.0
    a, b = utf16_units(first), utf16_units(second)
    if len(a) < 2 or len(b) < 2:
        return 0.0
    pairs_a = Counter(a[i : i + 2] for i in range(len(a) - 1))
    pairs_b = Counter(b[i : i + 2] for i in range(len(b) - 1))
    # Counter's & is the multiset intersection string-similarity computes by decrementing.
    shared = (pairs_a & pairs_b).total()
    return (2.0 * shared) / (len(a) + len(b) - 2)


def lcs_ratio(first: str, second: str) -> float:
    """Mastra's textual-difference ratio: ``2·LCS / (|a| + |b|)`` over UTF-16 units.

    Equal texts give 1 and an empty one 0. This is not ``difflib.SequenceMatcher.ratio()``,
    which matches blocks rather than a longest common subsequence.

    >>> round(lcs_ratio("dormitory", "dirty room"), 4)
    0.4211
    """
    if first == second:
        return 1.0
    if not first or not second:
        return 0.0
    a, b = utf16_units(first), utf16_units(second)
    # rapidfuzz's bit-parallel LCS gives the classic DP's length without its quadratic table.
    common = LCSseq.similarity(a, b)
    return (2.0 * common) / (len(a) + len(b))
