"""Naming a version (``NAME``, ``NAME@v3``, ``NAME@<hash prefix>``), what a batch ran on, diffs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, Final, final

import attrs

from scorecore._core._reprs import short_repr
from scorecore.datasets._digest import version_digest
from scorecore.datasets._items import DatasetError, DatasetItem
from scorecore.datasets._sample import SampleSpec
from scorecore.validators import is_int

__all__ = ["DatasetDiff", "DatasetRef", "DatasetSpec", "DatasetVersion", "version_of"]

MIN_PREFIX: Final = 4
"""The shortest hash prefix that names a version (shorter ones would name too many)."""

_NUMBER = re.compile(r"v([1-9][0-9]{0,17})")
_HEX = re.compile(r"[0-9a-f]+")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}")


def check_name(value: object) -> str:
    """``value`` if it can name a dataset: letters, digits, ``_``, ``.`` and ``-``, starting
    with a letter or digit (no ``@``, which separates the version).

    Raises:
        ValueError: naming the value.
    """
    if not isinstance(value, str) or _NAME.fullmatch(value) is None:
        raise ValueError(f"a dataset name is letters, digits, '_', '.' and '-' (at most 200, "
                         f"starting with a letter or digit), got {short_repr(value)}")
    return value


def _name(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        check_name(value)


def _version(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or len(value) != 64 or _HEX.fullmatch(value) is None:
        raise ValueError(f"a version is a SHA-256 in lower-case hex, got {short_repr(value)}")


def _number(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not is_int(value) or value < 1):
        raise ValueError(f"a version number is an int >= 1 or None, got {short_repr(value)}")


@final
@attrs.frozen(kw_only=True)
class DatasetSpec:
    """Which version a command names: ``NAME`` (the latest), ``NAME@v3`` (the third added
    under that name) or ``NAME@3f2a9c`` (the version whose hash starts so; 4 hex digits at
    least).

    >>> DatasetSpec.parse("qa@v3")
    DatasetSpec(name='qa', number=3, prefix=None)
    >>> DatasetSpec.parse("qa@3F2A9C").prefix, DatasetSpec.parse("qa").number
    ('3f2a9c', None)
    >>> DatasetSpec.parse("qa@latest")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'qa@latest': after '@' give v<N> (a version number) or 4 or more hex digits ...
    """

    name: str = attrs.field(validator=_name)
    number: int | None = None
    prefix: str | None = None

    @classmethod
    def parse(cls, text: str) -> DatasetSpec:
        """Read ``NAME[@v<N>|@<hash prefix>]``.

        Raises:
            ValueError: naming the text and what it should look like.
        """
        name, at, selector = text.partition("@")
        try:
            check_name(name)
        except ValueError as exc:
            raise ValueError(f"{text!r}: {exc}") from None
        if not at:
            return cls(name=name)
        number = _NUMBER.fullmatch(selector)
        if number is not None:
            return cls(name=name, number=int(number[1]))
        prefix = selector.lower()
        if len(prefix) >= MIN_PREFIX and len(prefix) <= 64 and _HEX.fullmatch(prefix):
            return cls(name=name, prefix=prefix)
        raise ValueError(f"{text!r}: after '@' give v<N> (a version number) or {MIN_PREFIX} or "
                         f"more hex digits of the version's hash")

    def __str__(self) -> str:
        if self.number is not None:
            return f"{self.name}@v{self.number}"
        return self.name if self.prefix is None else f"{self.name}@{self.prefix}"


@final
@attrs.frozen(kw_only=True)
class DatasetRef:
    """What a batch ran on: a dataset version, and how it was sampled.

    Attributes:
        name: the dataset's name; ``None`` for a file recorded without one (``eval --data``).
        version: the version's digest (SHA-256 hex of its items' ids and contents).
        number: the version's number under its name (``3`` for ``NAME@v3``), else ``None``.
        sample: how the items were sampled from the version, or ``None`` for all of them.

    >>> ref = DatasetRef(name="qa", version="3f2a" + "0" * 60, number=3)
    >>> str(ref)
    'qa@v3 (3f2a00000000)'
    >>> DatasetRef.from_json(ref.to_json()) == ref
    True
    """

    name: str | None = attrs.field(validator=_name)
    version: str = attrs.field(validator=_version)
    number: int | None = attrs.field(default=None, validator=_number)
    sample: SampleSpec | None = None

    def __str__(self) -> str:
        named = "" if self.name is None else (
            self.name if self.number is None else f"{self.name}@v{self.number}")
        sampled = "" if self.sample is None else f", {self.sample}"
        return f"{named} ({self.version[:12]}{sampled})" if named else (
            f"unnamed version {self.version[:12]}{sampled}")

    def to_json(self) -> dict[str, Any]:
        """The reference as JSON (what a batch's record keeps)."""
        return {"name": self.name, "version": self.version, "number": self.number,
                "sample": None if self.sample is None else self.sample.to_json()}

    @classmethod
    def from_json(cls, data: Any) -> DatasetRef:
        """The inverse of :meth:`to_json`.

        Raises:
            ValueError: ``data`` is not such a reference (naming the field).
        """
        if not isinstance(data, dict):
            raise ValueError(  # noqa: TRY004 - a bad record is one error, whatever its type
                f"a dataset reference is an object, got {short_repr(data)}")
        sample = data.get("sample")
        return cls(name=data.get("name"), version=data.get("version", ""),
                   number=data.get("number"),
                   sample=None if sample is None else SampleSpec.from_json(sample))


@final
@attrs.frozen(kw_only=True)
class DatasetVersion:
    """A stored version: its reference, its size, and when it was stored.

    Attributes:
        ref: the name (if any), version digest and number.
        items: how many items it holds.
        created_at: when it was stored (under this name, for a named one).
    """

    ref: DatasetRef
    items: int
    created_at: datetime | None = None


@final
@attrs.frozen(kw_only=True)
class DatasetDiff:
    """What changed from one version to another, by item id (each tuple in id order).

    Attributes:
        added: ids only the new version has.
        removed: ids only the old version has.
        changed: ids both have, with different contents.
        same: how many ids both have with the same content.

    >>> d = DatasetDiff.of([("a", "1"), ("b", "2"), ("c", "3")],
    ...                    [("b", "2"), ("c", "9"), ("d", "4")])
    >>> d.added, d.removed, d.changed, d.same
    (('d',), ('a',), ('c',), 1)
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    same: int = 0

    @classmethod
    def of(cls, old: Iterable[tuple[str, str]], new: Iterable[tuple[str, str]]) -> DatasetDiff:
        """The diff of two versions' ``(id, item digest)`` pairs, each in id order (read once,
        side by side: what a store streams).

        Raises:
            ValueError: the pairs are not in increasing id order.
        """
        added: list[str] = []
        removed: list[str] = []
        changed: list[str] = []
        same = 0
        left, right = _ordered(old), _ordered(new)
        a, b = next(left, None), next(right, None)
        while a is not None or b is not None:
            if b is None or (a is not None and a[0] < b[0]):
                removed.append(a[0])  # type: ignore[index]  # a is set when b is behind
                a = next(left, None)
            elif a is None or b[0] < a[0]:
                added.append(b[0])
                b = next(right, None)
            else:
                if a[1] == b[1]:
                    same += 1
                else:
                    changed.append(a[0])
                a, b = next(left, None), next(right, None)
        return cls(added=tuple(added), removed=tuple(removed), changed=tuple(changed),
                   same=same)


def _ordered(pairs: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    last: str | None = None
    for pair in pairs:
        if last is not None and pair[0] <= last:
            raise ValueError(f"item ids out of order: {pair[0]!r} after {last!r}")
        last = pair[0]
        yield pair


def version_of(items: Iterable[DatasetItem], *, source: str) -> tuple[str, dict[str, str]]:
    """The version digest of ``items`` and their digests by id, in memory (a store does the
    same while it streams; use this for items that fit in memory).

    Raises:
        DatasetError: two items share an id (naming both lines).

    >>> version, digests = version_of([DatasetItem(id="a", fields={"input": 1})], source="x")
    >>> len(version), list(digests)
    (64, ['a'])
    """
    digests: dict[str, str] = {}
    lines: dict[str, int | None] = {}
    for item in items:
        if item.id in digests:
            first = lines[item.id]
            raise DatasetError(
                f"duplicate id {item.id!r}" + ("" if first is None else
                                               f", first at line {first}"),
                source=source, line=item.line, field="id")
        digests[item.id] = item.digest
        lines[item.id] = item.line
    return version_digest(digests), digests
