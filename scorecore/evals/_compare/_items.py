"""Which items two batches share: the same id and the same content (equal item digests).

Pure: it takes each batch's ``item id -> content digest`` (the ledger or a dataset version
gives them) and says which items are the same, which were added or removed, and which kept
their id but changed their content (a change, not the same item: its scores are not paired).
"""

from __future__ import annotations

from collections.abc import Mapping

from scorecore.evals._compare._values import ItemMatch

__all__: list[str] = []  # match_items is reached through compare(base_items=, new_items=)


def match_items(base: Mapping[str, str], new: Mapping[str, str]) -> ItemMatch:
    """The items of ``base`` and ``new`` (item id → content digest) matched by id and content.

    >>> m = match_items({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"})
    >>> m.same, m.changed, m.removed, m.added
    (('a',), ('b',), ('c',), ('d',))
    """
    common = base.keys() & new.keys()
    return ItemMatch(
        same=tuple(sorted(k for k in common if base[k] == new[k])),
        changed=tuple(sorted(k for k in common if base[k] != new[k])),
        removed=tuple(sorted(base.keys() - new.keys())),
        added=tuple(sorted(new.keys() - base.keys())),
    )
