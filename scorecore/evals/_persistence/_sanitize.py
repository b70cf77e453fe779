"""Values every score store can keep, and a note of each piece of data that could not be kept.

A stored row holds whatever a dataset, a target, a step or a judge produced, but the stores
accept less than Python does: PostgreSQL refuses the NUL character in ``text`` and ``jsonb``;
UTF-8 has no lone surrogates (``"\\ud800"`` is valid JSON, yet cannot be encoded); JSON encoders
and parsers recurse, so a list nested thousands deep overflows the stack; and ``str()`` of an
int longer than 4,300 digits raises. :class:`Sanitizer` turns any value into JSON that every
store accepts, replacing what cannot be kept and noting each replacement with its path:

- NUL characters and lone surrogates → U+FFFD;
- containers nested deeper than :data:`MAX_DEPTH` → a placeholder string;
- ints of more than 4,300 digits (Python's limit for int ↔ text) → a placeholder string naming
  their size;
- objects whose ``str()`` raises → a placeholder string;
- mapping keys that collide once made text (``{1: …, "1": …}``) → the later value is dropped.

Plain JSON conversions lose nothing worth a note and are made silently, as before: tuples and
sets become lists, non-finite floats and unknown objects their ``str()``, keys their ``str()``.

>>> clean = Sanitizer()
>>> clean.value({"text": "a\\x00b", "n": 10**5000, "ok": [1, 2.5, None]}, "input")
{'text': 'a�b', 'n': '<int of 5,001 digits>', 'ok': [1, 2.5, None]}
>>> clean.report()
[{'path': 'input.text', 'what': 'NUL character replaced by U+FFFD'}, \
{'path': 'input.n', 'what': 'int of 5,001 digits stored as text'}]
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Mapping
from typing import Any, Final, TypeAlias, final

from scorecore._core._reprs import short_repr
from scorecore.validators import is_int

# internal: used to build stored rows (scorecore.evals._rows._row.storable_row)
__all__: list[str] = []

MAX_DEPTH: Final = 200
"""The deepest nesting of containers kept; deeper subtrees become a placeholder string.

Above what the command line accepts in a dataset line (128 levels), so what it reads is stored
as it is; far below what breaks: SQLite's JSON functions stop at 1,000 levels, Python's
``json`` and the walk here recurse once or twice per level (the interpreter allows 1,000).
"""

MAX_NOTES: Final = 20
"""Notes kept per row; the rest are counted in one last note."""

# Ints up to this many bits are always convertible to decimal text (what JSON needs);
# longer ones are kept while they have at most 4,300 digits, the default limit of str() and of
# json.loads (a lower limit set with sys.set_int_max_str_digits is honoured too).
_INT_BITS: Final = 4_000
_INT_DIGITS: Final = 4_300
_INT_BOUND: Final = 10**_INT_DIGITS

_BAD_CHARS: Final = re.compile("[\x00\ud800-\udfff]")
_SURROGATES: Final = re.compile("[\ud800-\udfff]")

Path: TypeAlias = "str | tuple[Path, str | int]"
"""Where a value sits: a column name, or (the parent's path, a key or index).

Linked rather than flat so that walking a value costs one small tuple per element whatever the
depth; it is rendered (``"input.a[0]"``) only for a note.
"""


# Rows already made storable, by identity: a store saving the row ``run_evals`` just built
# would otherwise walk all its data a second time (half the cost of a stored row). Each entry
# is a plain weak reference (no callback when the row dies, which cost as much as the mark);
# the ``is`` check in known_storable never trusts a dead entry or a reused id, and dead entries
# are swept once they are as many as the live ones were at the last sweep.
_STORABLE: dict[int, weakref.ref[object]] = {}
_SWEEP_AT = 4096


def mark_storable(value: object) -> None:
    """Note that ``value`` (a frozen row holding only what the sanitizer produced) needs no
    second pass."""
    global _STORABLE, _SWEEP_AT  # noqa: PLW0603 - the table is rebuilt when swept
    _STORABLE[id(value)] = weakref.ref(value)
    if len(_STORABLE) > _SWEEP_AT:
        _STORABLE = {key: ref for key, ref in _STORABLE.items() if ref() is not None}
        _SWEEP_AT = max(4096, 2 * len(_STORABLE))


def known_storable(value: object) -> bool:
    """Whether ``value`` itself was noted by :func:`mark_storable`."""
    ref = _STORABLE.get(id(value))
    return ref is not None and ref() is value


def is_clean_text(text: str) -> bool:
    """Whether ``text`` has no NUL character and no lone surrogate (every store keeps it)."""
    if text.isascii():
        return "\x00" not in text
    return _BAD_CHARS.search(text) is None


def is_plain_leaf(value: object) -> bool:
    """Whether ``value`` is a leaf every store keeps as it is (what :meth:`Sanitizer.value`
    returns unchanged): clean text, an int of at most 4,000 bits, a finite float, ``None``, a
    boolean."""
    if type(value) is str:
        return "\x00" not in value if value.isascii() else _BAD_CHARS.search(value) is None
    if type(value) is int:
        return value.bit_length() <= _INT_BITS
    if type(value) is float:
        return math.isfinite(value)
    return value is None or type(value) is bool


def is_encodable_text(text: str) -> bool:
    """Whether ``text`` encodes to UTF-8 (no lone surrogate; NUL characters are allowed)."""
    return text.isascii() or _SURROGATES.search(text) is None


def clean_text(text: str) -> str:
    """``text`` with NUL characters and lone surrogates replaced by U+FFFD.

    >>> clean_text("a\\x00b\\ud800")
    'a�b�'
    """
    return text if is_clean_text(text) else _BAD_CHARS.sub("\ufffd", text)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def _describe_chars(text: str) -> str:
    nul = text.count("\x00")
    surrogates = len(_BAD_CHARS.findall(text)) - nul
    parts = []
    if nul:
        parts.append("NUL character" if nul == 1 else _plural(nul, "NUL character"))
    if surrogates:
        parts.append(
            "lone surrogate" if surrogates == 1 else _plural(surrogates, "lone surrogate")
        )
    return f"{' and '.join(parts)} replaced by U+FFFD"


def render_path(path: Path) -> str:
    """``(("input", "a"), 0)`` → ``"input.a[0]"`` (keys shortened and cleaned).

    >>> render_path((("input", "a"), 0))
    'input.a[0]'
    """
    parts: list[str] = []
    while isinstance(path, tuple):
        path, part = path
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append("." + clean_text(part if len(part) <= 40 else part[:39] + "…"))
    parts.append(clean_text(path))
    return "".join(reversed(parts))


@final
class Sanitizer:
    """Turns values into JSON every store keeps, collecting a note per loss (see the module).

    One instance per row: :meth:`report` gives the notes for the row's ``metadata``.
    """

    __slots__ = ("_more", "_notes")

    def __init__(self) -> None:
        self._notes: list[dict[str, str]] = []
        self._more = 0

    @property
    def changed(self) -> bool:
        """Whether anything was lost so far."""
        return bool(self._notes)

    def note(self, path: Path, what: str) -> None:
        """Record that the value at ``path`` could not be kept as it was."""
        if len(self._notes) < MAX_NOTES:
            self._notes.append({"path": render_path(path), "what": what})
        else:
            self._more += 1

    def take(self, other: Sanitizer) -> None:
        """Add ``other``'s notes after this one's: a value cleaned once for several rows gives
        each row its notes."""
        for note in other._notes:
            if len(self._notes) < MAX_NOTES:
                self._notes.append(dict(note))
            else:
                self._more += 1
        self._more += other._more

    def report(self) -> list[dict[str, str]]:
        """The notes, ``[{"path": "input.a[0]", "what": "…"}, …]``, at most ``MAX_NOTES + 1``."""
        if not self._more:
            return list(self._notes)
        return [*self._notes, {"path": "", "what": f"{self._more:,} more not listed"}]

    def text(self, text: str, path: Path) -> str:
        """``text`` cleaned of NUL characters and lone surrogates (noted)."""
        if is_clean_text(text):
            return text
        self.note(path, _describe_chars(text))
        return _BAD_CHARS.sub("\ufffd", text)

    def value(self, value: Any, path: Path, depth: int = 0) -> Any:
        """``value`` as JSON every store keeps (dicts with str keys, lists, str, numbers)."""
        if value is None or value is True or value is False:
            return value
        kind = type(value)
        if kind is str:
            return self.text(value, path)
        if kind is int:
            return self._int(value, path)
        if kind is float:
            return value if math.isfinite(value) else str(value)
        if kind is dict or kind is list or isinstance(
            value, Mapping | list | tuple | set | frozenset
        ):
            if depth >= MAX_DEPTH:
                self.note(path, f"nested deeper than {MAX_DEPTH} levels; replaced by a "
                                "placeholder")
                return f"<{type(value).__name__} nested deeper than {MAX_DEPTH} levels>"
            try:
                return self._container(value, path, depth + 1)
            except Exception as exc:  # noqa: BLE001 - a user container's iteration may raise
                self.note(path, f"reading it raised {type(exc).__name__}; replaced by a "
                                "placeholder")
                return f"<{type(value).__name__} object (unreadable)>"
        if isinstance(value, str):
            return self.text(value, path)
        if isinstance(value, int):
            return self._int(int(value), path)
        if isinstance(value, float):
            number = float(value)
            return number if math.isfinite(number) else str(number)
        return self.text(self._str(value, path), path)

    def _int(self, value: int, path: Path) -> int | str:
        if value.bit_length() <= _INT_BITS:
            return value
        if -_INT_BOUND < value < _INT_BOUND:
            try:
                str(value)
            except ValueError:  # a lower limit set with sys.set_int_max_str_digits
                pass
            else:
                return value
        shown = short_repr(value)
        self.note(path, f"{shown.strip('<>')} stored as text")
        return shown

    def _str(self, value: object, path: Path) -> str:
        try:
            return str(value)
        except Exception as exc:  # noqa: BLE001 - str() of a user object is user code
            self.note(path, f"str() raised {type(exc).__name__}; replaced by a placeholder")
            return f"<{type(value).__name__} object (str() failed)>"

    def _container(self, value: Any, path: Path, depth: int) -> Any:
        # Plain leaves (clean text, small ints, finite floats, None, booleans) are copied in
        # place, without a call or a path each: most of a row's values are such leaves.
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            # Only a key changed to text can collide with another (or a key that a mapping
            # other than a dict gives twice).
            renamed = type(value) is not dict
            for key, item in value.items():
                if type(key) is not str or not (
                    "\x00" not in key if key.isascii() else _BAD_CHARS.search(key) is None
                ):
                    if type(key) is not str:
                        key = self._key(key, path)  # noqa: PLW2901 - the key made text
                    key = self.text(key, (path, key))  # noqa: PLW2901 - the key cleaned
                    renamed = True
                if renamed and key in out:
                    self.note((path, key), "key given twice once made text; a value dropped")
                    continue
                out[key] = item if is_plain_leaf(item) else self.value(item, (path, key), depth)
            return out
        # A loop, not a comprehension: one stack frame less per level of nesting.
        items: list[Any] = []
        append = items.append
        for index, item in enumerate(value):
            append(item if is_plain_leaf(item) else self.value(item, (path, index), depth))
        return items

    def _key(self, key: object, path: Path) -> str:
        if is_int(key) and key.bit_length() > _INT_BITS:
            kept = self._int(int(key), path)
            return kept if isinstance(kept, str) else str(kept)
        return self._str(key, path)
