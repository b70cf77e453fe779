"""What the rows of one item share, converted, cleaned and redacted once: :class:`RowMemo`.

Every scorer's row of an item holds the same input, output and context, and every row of a
scorer the same scorer JSON; converting, cleaning and redacting them again for each row cost
most of what a stored row cost. The memo keeps each result by the object's identity and its
column, so each row still gets the same value and the same notes as if it had been walked alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias, final

from scorecore.evals._persistence._sanitize import Path, Sanitizer

# internal: used by scorecore.evals._rows._row.score_row and ItemRows
__all__: list[str] = []

# (the object itself, what was made of it, the notes taken while making it, if any)
_Entry: TypeAlias = tuple[object, Any, Sanitizer | None]


@final
class RowMemo:
    """Values the rows of one item (or of one row builder) share, each made once.

    Entries are keyed by the object's identity and what was made of it, and hold the object
    itself: its id is never reused while the entry lives, and a hit is checked with ``is``.
    Values given by the user (the item's data, the results) are kept only until
    :meth:`next_item`: they may be changed between items. ``lasting`` entries are for values
    the builder made itself and never changes (the scorer JSON).
    """

    __slots__ = ("_item", "_lasting")

    def __init__(self) -> None:
        self._item: dict[tuple[int, Path, bool], _Entry] = {}
        self._lasting: dict[tuple[int, Path, bool], _Entry] = {}

    def next_item(self) -> None:
        """Forget the entries of the item done (its values are the user's)."""
        self._item.clear()

    def once(self, value: object, what: str, make: Callable[..., Any], *args: Any) -> Any:
        """``make(*args)``, made once per ``value`` object and ``what`` (until
        :meth:`next_item`); an exception is raised each time (nothing kept)."""
        key = (id(value), what, False)
        # Inline rather than a shared lookup method: this runs for several columns of every row.
        hit = self._item.get(key) or self._lasting.get(key)
        if hit is not None and hit[0] is value:
            return hit[1]
        made = make(*args)
        self._item[key] = (value, made, None)
        return made

    def clean(
        self,
        value: object,
        path: Path,
        clean: Sanitizer,
        *,
        depth: int = 0,
        redact: Callable[[Any], Any] | None = None,
        lasting: bool = False,
    ) -> Any:
        """``value`` as ``clean.value(value, path, depth)`` makes it, then ``redact``-ed; its
        notes are added to ``clean`` each time, as if it were walked again.

        ``path`` must decide ``depth`` and ``redact``: the same object at the same path is
        cleaned and redacted alike.
        """
        if value is None:
            return None
        if type(value) is str:  # cleaned in one scan: nothing worth keeping
            text = clean.text(value, path)
            return text if redact is None else redact(text)
        key = (id(value), path, True)  # never one of once()'s entries
        hit = self._item.get(key) or self._lasting.get(key)
        if hit is None or hit[0] is not value:
            own = Sanitizer()
            made = own.value(value, path, depth)
            if redact is not None:
                made = redact(made)  # after cleaning: redaction recurses, cleaning bounds depth
            hit = (value, made, own if own.changed else None)
            (self._lasting if lasting else self._item)[key] = hit
        if hit[2] is not None:
            clean.take(hit[2])
        return hit[1]
