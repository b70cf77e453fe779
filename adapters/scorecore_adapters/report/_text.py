"""Making any value safe to put into the page: escaped, bounded, valid Unicode."""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from collections.abc import Sequence
from typing import Any, Final

_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def clean(text: str) -> str:
    """``text`` without C0 controls (but tab and newlines) or lone surrogates: U+FFFD instead."""
    return _CONTROL.sub("\ufffd", text)


def esc(value: object) -> str:
    """``value`` as text to place in HTML (element text or a quoted attribute)."""
    return html.escape(clean(str(value)), quote=True)


def packed_json(value: Any) -> str:
    """``value`` as gzip-compressed JSON in base64: what the page's data block holds.

    Compression lets a 10,000-item batch keep its values in a file of a few megabytes; base64
    holds only ``A-Z a-z 0-9 + / =``, so nothing in it can end the script element. The page
    unpacks it with the browser's ``DecompressionStream``. ``mtime=0``: the same rows give the
    same file.
    """
    text = clean_json(json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                                 allow_nan=False, default=str))
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)
                            ).decode("ascii")


def clean_json(text: str) -> str:
    """JSON text with raw lone surrogates replaced (escaped pairs are left alone)."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


def number(value: float | None, *, sign: bool = False) -> str:
    """A score, mean or delta to three decimals (``-`` when there is none); a huge one in
    three significant digits (``1e+308``, not 309 digits).

    >>> number(0.5), number(-0.25, sign=True), number(1e308), number(None)
    ('0.500', '-0.250', '1e+308', '-')
    """
    if value is None:
        return "-"
    spec = ".3f" if abs(value) < 1e15 else ".3g"
    return format(value, f"+{spec}" if sign else spec)


def listed(ids: Sequence[str], limit: int, *, total: int | None = None) -> str:
    """The first ``limit`` ids, escaped, and how many there are in all when more (``total``:
    that many, of which ``ids`` are the first).

    >>> listed(["a", "<b>", "c"], 2), listed(["a"], 1, total=7)
    ('a, &lt;b&gt; … (3 in all)', 'a … (7 in all)')
    """
    total = len(ids) if total is None else total
    more = f" … ({total} in all)" if total > limit else ""
    return esc(", ".join(ids[:limit])) + more


def counted(
    what: str, ids: Sequence[str], limit: int, *, total: int | None = None
) -> list[str]:
    """``["N what: ids"]`` (listed up to ``limit``; N is ``total`` when given, of which ``ids``
    are the first), or nothing without ids: a page's note."""
    total = len(ids) if total is None else total
    return [f"{total} {what}: {listed(ids, limit, total=total)}"] if total else []


def percent(value: float | None) -> str:
    """A rate as a percentage to one decimal (``-`` when there is none)."""
    return "-" if value is None else f"{100 * value:.1f}%"
