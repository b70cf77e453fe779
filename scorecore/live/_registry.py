"""A registry of named scorers (Mastra's ``new Mastra({scorers})`` / ``addScorer`` …).

Exceptions added here hang off :class:`~scorecore.ScorecoreError`::

    ScorecoreError
    └── ScorerNotFoundError (also KeyError)   get / get_by_id / remove found nothing
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, Literal, final

from scorecore._core._errors import ScorecoreError
from scorecore._core._scorer import Scorer

__all__ = ["Registry", "ScorerNotFoundError"]

AnyScorer = Scorer[Any, Any, Any, Any]
"""Any scorer at all: live scoring takes scorers of every input and output type."""


class ScorerNotFoundError(ScorecoreError, KeyError):
    """No registered scorer matches what was asked for.

    Attributes:
        requested: the key, id or name asked for.
        lookup: ``"key"`` (:meth:`Registry.get`), ``"id"`` (:meth:`Registry.get_by_id`) or
            ``"key_or_id"`` (:meth:`Registry.remove`).
        available: what was registered, as the lookup sees it (keys, or ids and names).
    """

    def __init__(
        self,
        *,
        requested: str,
        lookup: Literal["key", "id", "key_or_id"],
        available: tuple[str, ...],
    ) -> None:
        self.requested = requested
        self.lookup = lookup
        self.available = available
        super().__init__(self._message())

    def _message(self) -> str:
        what = {"key": "key", "id": "id or name", "key_or_id": "key, id or name"}[self.lookup]
        message = f"no scorer registered with {what} {self.requested!r}"
        if not self.available:
            return f"{message}; the registry is empty"
        close = difflib.get_close_matches(self.requested, self.available, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        listed = ", ".join(repr(a) for a in self.available)
        return f"{message}{hint} (registered: {listed})"

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; show the message as written instead.
        return self._message()

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only constructors need help to pickle.
        return (_rebuild, (self.requested, self.lookup, self.available))


def _rebuild(
    requested: str, lookup: Literal["key", "id", "key_or_id"], available: tuple[str, ...]
) -> ScorerNotFoundError:
    return ScorerNotFoundError(requested=requested, lookup=lookup, available=available)


def _check_scorer(value: object, where: str) -> AnyScorer:
    if not isinstance(value, Scorer):
        raise TypeError(
            f"{where} needs a Scorer (a scorer with a generate_score step), got {value!r:.200}"
        )
    return value


def _check_key(value: object, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: key must be a non-empty str, got {value!r}")
    return value


@final
class Registry:
    """Named scorers: add them once, then find them by key, id or name.

    Like Mastra, adding under a key that is already taken does nothing (unless
    ``replace=True``), so registering the same scorers twice is harmless.

    Args:
        scorers: initial scorers by key, added in order.

    Raises:
        TypeError: a value is not a :class:`~scorecore.Scorer`.
        ValueError: a key is empty.

    >>> from scorecore import create_scorer
    >>> exact = create_scorer(id="exact", description="d").generate_score(lambda ctx: 1.0)
    >>> registry = Registry(scorers={"exactness": exact})
    >>> registry.get("exactness") is registry.get_by_id("exact")
    True
    >>> registry.get("exact")
    Traceback (most recent call last):
    ...
    scorecore.live._registry.ScorerNotFoundError: no scorer registered with key 'exact'; did you mean 'exactness'? (registered: 'exactness')
    """  # noqa: E501 - a doctest's expected traceback line cannot be wrapped

    __slots__ = ("_scorers",)

    def __init__(self, scorers: Mapping[str, AnyScorer] | None = None) -> None:
        self._scorers: dict[str, AnyScorer] = {}
        for key, scorer in (scorers or {}).items():
            self.add(scorer, key)

    def add(self, scorer: AnyScorer, key: str | None = None, *, replace: bool = False) -> bool:
        """Register ``scorer`` under ``key`` (default: its id).

        Returns:
            ``True`` if it was registered, ``False`` if the key was taken and ``replace`` is
            false (the existing scorer stays, as in Mastra).

        >>> from scorecore import create_scorer
        >>> a = create_scorer(id="a", description="d").generate_score(lambda ctx: 1.0)
        >>> registry = Registry()
        >>> registry.add(a), registry.add(a), registry.add(a, replace=True)
        (True, False, True)
        """
        checked = _check_scorer(scorer, "Registry.add")
        where = f"Registry.add({checked.id!r})"
        name = checked.id if key is None else _check_key(key, where)
        if name in self._scorers and not replace:
            return False
        self._scorers[name] = checked
        return True

    def get(self, key: str) -> AnyScorer:
        """The scorer registered under ``key``.

        Raises:
            ScorerNotFoundError: no scorer has that key; the message lists the keys.
        """
        try:
            return self._scorers[key]
        except KeyError:
            raise ScorerNotFoundError(
                requested=key, lookup="key", available=tuple(self._scorers)
            ) from None

    def get_by_id(self, id_or_name: str) -> AnyScorer:
        """The first registered scorer whose ``id`` or ``name`` is ``id_or_name``.

        Raises:
            ScorerNotFoundError: none matches; the message lists ids and names.
        """
        found = self._find(id_or_name)
        if found is None:
            raise ScorerNotFoundError(
                requested=id_or_name, lookup="id", available=self._ids_and_names()
            )
        return found[1]

    def list(self) -> Mapping[str, AnyScorer]:
        """Every registered scorer by key, in registration order (a read-only snapshot)."""
        return MappingProxyType(dict(self._scorers))

    def remove(self, key_or_id: str) -> AnyScorer:
        """Unregister and return the scorer with this key, or else this id or name.

        Raises:
            ScorerNotFoundError: nothing matches; the message lists keys, ids and names.
        """
        if key_or_id in self._scorers:
            return self._scorers.pop(key_or_id)
        found = self._find(key_or_id)
        if found is None:
            available = tuple(dict.fromkeys((*self._scorers, *self._ids_and_names())))
            raise ScorerNotFoundError(
                requested=key_or_id, lookup="key_or_id", available=available
            )
        del self._scorers[found[0]]
        return found[1]

    def _find(self, id_or_name: str) -> tuple[str, AnyScorer] | None:
        for key, scorer in self._scorers.items():
            if id_or_name in (scorer.id, scorer.name):
                return key, scorer
        return None

    def _ids_and_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(
            n for s in self._scorers.values() for n in (s.id, s.name)
        ))

    def __contains__(self, key: object) -> bool:
        return key in self._scorers

    def __len__(self) -> int:
        return len(self._scorers)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._scorers))

    def __repr__(self) -> str:
        return f"Registry({', '.join(repr(k) for k in self._scorers)})"
