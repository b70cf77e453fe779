"""Seeded, stratified samples: the same seed picks the same items, whatever their order.

Each item gets a rank, the SHA-256 of the seed and its id; a sample takes the lowest ranks.
No random generator is involved, so a sample is reproduced from the version, the size, the
field and the seed alone, on any machine, and reading the items in another order (a store
streams them by id, a file in its own order) picks the same ones.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, final

import attrs

from scorecore._core._reprs import short_repr
from scorecore.datasets._digest import canonical_json
from scorecore.validators import is_int

__all__ = ["SampleSpec", "sample_ids", "split_ids", "stratum_of"]

MISSING = "(missing)"
"""The stratum of an item without the field."""


def _size(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if not is_int(value) or value < 1:
        raise ValueError(f"a sample's size is a whole number >= 1, got {short_repr(value)}")


def _seed(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if not is_int(value) or value < 0:
        raise ValueError(f"a sample's seed is a whole number >= 0, got {short_repr(value)}")


def _field(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value or
                              "" in value.split(".")):
        raise ValueError(f"a stratification field is a name or a dotted path such as "
                         f"extra.category, got {short_repr(value)}")


@final
@attrs.frozen(kw_only=True)
class SampleSpec:
    """How a sample is drawn: its size, the field it is stratified by, and its seed.

    Attributes:
        size: how many items (all of them when the version holds no more).
        stratify: the field whose values are the strata (see :func:`stratum_of`), or
            ``None`` for a simple sample.
        seed: the seed; the same seed gives the same items.

    >>> str(SampleSpec(size=200, stratify="category", seed=1))
    'sample 200 by category, seed 1'
    """

    size: int = attrs.field(validator=_size)
    stratify: str | None = attrs.field(default=None, validator=_field)
    seed: int = attrs.field(default=0, validator=_seed)

    def __str__(self) -> str:
        by = "" if self.stratify is None else f" by {self.stratify}"
        return f"sample {self.size}{by}, seed {self.seed}"

    def to_json(self) -> dict[str, Any]:
        """The spec as JSON (``size``, ``stratify``, ``seed``)."""
        return {"size": self.size, "stratify": self.stratify, "seed": self.seed}

    @classmethod
    def from_json(cls, data: Any) -> SampleSpec:
        """The inverse of :meth:`to_json`.

        Raises:
            ValueError: naming the field at fault.
        """
        if not isinstance(data, dict) or set(data) - {"size", "stratify", "seed"}:
            raise ValueError(f"a sample spec is an object of size, stratify and seed, got "
                             f"{short_repr(data)}")
        return cls(size=data.get("size", 0), stratify=data.get("stratify"),
                   seed=data.get("seed", 0))


def stratum_of(fields: Mapping[str, Any], field: str) -> str:
    """The stratum of an item: the value at ``field``, as canonical JSON text.

    ``field`` is a dotted path from the item's fields (``extra.category``); a bare name that
    is not one of the item's fields is looked up in its ``extra`` (where an item keeps its
    metadata), so ``category`` reads ``extra.category``. An item without the field is in the
    stratum ``"(missing)"``.

    >>> stratum_of({"input": "q", "extra": {"category": "math"}}, "category")
    '"math"'
    >>> stratum_of({"input": "q"}, "category")
    '(missing)'
    """
    parts = field.split(".")
    if parts[0] not in fields and isinstance(fields.get("extra"), Mapping):
        parts = ["extra", *parts]
    value: Any = fields
    for part in parts:
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    return canonical_json(value)


def _rank(seed: int, item_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\x00{item_id}".encode("utf-8", "surrogatepass")).digest()


def allocate(counts: Mapping[str, int], size: int) -> dict[str, int]:
    """How many items each stratum gives to a sample of ``size``: proportional to its count,
    rounded down, then the seats left over go one each to the strata with the largest
    remainders (ties: the stratum whose value sorts first).

    >>> allocate({"a": 5, "b": 3, "c": 2}, 5)
    {'a': 3, 'b': 1, 'c': 1}
    """
    total = sum(counts.values())
    if size >= total:
        return dict(counts)
    quotas = {s: size * n // total for s, n in counts.items()}
    left = size - sum(quotas.values())
    # remainder of stratum s: (size * n) mod total, compared exactly in integers
    order = sorted(counts, key=lambda s: (-(size * counts[s] % total), s))
    for stratum in order[:left]:
        quotas[stratum] += 1
    return quotas


def sample_ids(keys: Iterable[tuple[str, str]], spec: SampleSpec) -> frozenset[str]:
    """The ids a sample takes, from each item's ``(id, stratum)`` (read once).

    Each stratum gives its share (proportional, largest remainders), its items of lowest rank
    (the SHA-256 of the seed and the id). Memory holds, per stratum, at most ``spec.size`` ids.

    >>> keys = [(f"q{i}", "a" if i < 6 else "b") for i in range(10)]
    >>> picked = sample_ids(keys, SampleSpec(size=5, stratify="topic", seed=1))
    >>> len(picked), sum(1 for i in picked if int(i[1:]) < 6)
    (5, 3)
    >>> picked == sample_ids(list(reversed(keys)), SampleSpec(size=5, stratify="topic", seed=1))
    True
    """
    counts: dict[str, int] = {}
    kept: dict[str, list[tuple[bytes, str]]] = {}
    for item_id, stratum in keys:
        counts[stratum] = counts.get(stratum, 0) + 1
        heap = kept.setdefault(stratum, [])
        # a max-heap of the lowest ranks (negated bytes do not exist: invert them)
        entry = (bytes(255 - b for b in _rank(spec.seed, item_id)), item_id)
        if len(heap) < spec.size:
            heapq.heappush(heap, entry)
        elif entry > heap[0]:
            heapq.heapreplace(heap, entry)
    chosen: set[str] = set()
    for stratum, quota in allocate(counts, spec.size).items():
        lowest = heapq.nlargest(quota, kept[stratum])
        chosen.update(item_id for _, item_id in lowest)
    return frozenset(chosen)


def _apportion(total: int, shares: Mapping[str, Fraction]) -> dict[str, int]:
    """``total`` seats among parts by their shares (which sum to 1): rounded down, then the
    largest remainders (ties: the part named first)."""
    seats = {part: int(total * share) for part, share in shares.items()}
    order = sorted(shares, key=lambda p: (-(total * shares[p] - seats[p]), list(shares).index(p)))
    for part in order[:total - sum(seats.values())]:
        seats[part] += 1
    return seats


def split_ids(keys: Iterable[tuple[str, str]], fractions: Mapping[str, float], *,
              seed: int = 0) -> dict[str, frozenset[str]]:
    """The ids of each part of a seeded split, from each item's ``(id, stratum)``.

    Within each stratum, items are ordered by rank (the SHA-256 of the seed and the id, as
    :func:`sample_ids` ranks them) and the parts take their shares of it in the order given:
    ``{"train": 0.8, "test": 0.2}`` gives each stratum's lowest 80 % of ranks to ``train``.
    A stratum's share of a part is rounded down, the items left over go to the parts with the
    largest remainders. Every item lands in exactly one part; memory holds every id.

    Raises:
        ValueError: no parts, a fraction outside (0, 1], or fractions not summing to 1.

    >>> keys = [(f"q{i}", "a" if i < 6 else "b") for i in range(10)]
    >>> parts = split_ids(keys, {"train": 0.5, "test": 0.5}, seed=1)
    >>> sorted(len(p) for p in parts.values())
    [5, 5]
    >>> parts["train"] | parts["test"] == {k for k, _ in keys}
    True
    """
    shares = {part: Fraction(str(f)) for part, f in fractions.items()}
    if not shares or any(not 0 < s <= 1 for s in shares.values()) or sum(shares.values()) != 1:
        raise ValueError(f"a split's fractions are in (0, 1] and sum to 1, got "
                         f"{dict(fractions)!r}")
    strata: dict[str, list[tuple[bytes, str]]] = {}
    for item_id, stratum in keys:
        strata.setdefault(stratum, []).append((_rank(seed, item_id), item_id))
    parts: dict[str, set[str]] = {part: set() for part in shares}
    for ranked in strata.values():
        ranked.sort()
        start = 0
        for part, seats in _apportion(len(ranked), shares).items():
            parts[part].update(item_id for _, item_id in ranked[start:start + seats])
            start += seats
    return {part: frozenset(ids) for part, ids in parts.items()}
