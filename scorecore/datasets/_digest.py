"""Content digests of dataset items and of a dataset version: the one rule for "same content".

An item's digest is the SHA-256 of its canonical JSON (keys sorted, no insignificant white
space, non-ASCII kept as is), so two items are the same item exactly when their digests are
equal, whatever order their keys were written in. A version's digest is the SHA-256 of its
items' ``(id, digest)`` pairs in id order, so the same items give the same version whatever
order the file lists them in, and any added, removed or changed item gives another.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping

__all__ = ["item_digest", "sorted_version_digest", "version_digest"]


def canonical_json(value: object) -> str:
    """``value`` as canonical JSON text (the text a digest is taken of).

    Raises:
        TypeError: ``value`` holds something JSON cannot say (a set, bytes, an object).
        ValueError: ``value`` holds a NaN or an infinity (not JSON).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def item_digest(item: Mapping[str, object]) -> str:
    """The SHA-256 (hex) of ``item``'s canonical JSON.

    >>> item_digest({"b": 1, "a": "x"}) == item_digest({"a": "x", "b": 1})
    True
    """
    return text_digest(canonical_json(item))


def text_digest(text: str) -> str:
    """The SHA-256 (hex) of canonical JSON text already made (what :func:`item_digest` takes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def version_digest(digests: Mapping[str, str]) -> str:
    """The SHA-256 (hex) of a version whose items have ``digests`` (item id → item digest).

    >>> version_digest({"a": "1", "b": "2"}) == version_digest({"b": "2", "a": "1"})
    True
    """
    return sorted_version_digest((item_id, digests[item_id]) for item_id in sorted(digests))


def sorted_version_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """:func:`version_digest` of ``(id, digest)`` pairs already in id order (code point order,
    as ``sorted`` gives), read once: a store streams a version's pairs in id order instead of
    holding them all.

    Raises:
        ValueError: the pairs are not in strictly increasing id order.

    >>> sorted_version_digest([("a", "1"), ("b", "2")]) == version_digest({"b": "2", "a": "1"})
    True
    """
    sha = hashlib.sha256()
    last: str | None = None
    for item_id, digest in pairs:
        if last is not None and item_id <= last:
            raise ValueError(f"item ids out of order: {item_id!r} after {last!r}")
        last = item_id
        # JSON-quoting the id keeps a newline or tab inside an id from forging another pair.
        sha.update(f"{json.dumps(item_id)}\t{digest}\n".encode("utf-8", "surrogatepass"))
    return sha.hexdigest()
