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
from collections.abc import Mapping

__all__: list[str] = []  # internal: the datasets and the experiment ledger share them


def canonical_json(value: object) -> str:
    """``value`` as canonical JSON text (the text a digest is taken of).

    Raises:
        TypeError: ``value`` holds something JSON cannot say (a set, bytes, an object).
        ValueError: ``value`` holds a NaN or an infinity (not JSON).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def item_digest(item: Mapping[str, object]) -> str:
    """The SHA-256 (hex) of ``item``'s canonical JSON."""
    return hashlib.sha256(canonical_json(item).encode("utf-8", "surrogatepass")).hexdigest()


def version_digest(digests: Mapping[str, str]) -> str:
    """The SHA-256 (hex) of a version whose items have ``digests`` (item id → item digest)."""
    sha = hashlib.sha256()
    for item_id in sorted(digests):
        # JSON-quoting the id keeps a newline or tab inside an id from forging another pair.
        sha.update(f"{json.dumps(item_id)}\t{digests[item_id]}\n".encode("utf-8", "surrogatepass"))
    return sha.hexdigest()
