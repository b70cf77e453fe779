"""What a stored row takes from a result: each kept field as JSON, and the run's context.

Read field by field through the kernel's table of result fields (``RESULT_FIELDS``), whose keys
are also the columns' names, so no row goes through Mastra's JSON and back.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, Final

from scorecore._core._convert import converter
from scorecore._core._mastra_json import RESULT_FIELDS
from scorecore._core._values import ScoreResult
from scorecore.evals._persistence._sanitize import Sanitizer
from scorecore.evals._rows._memo import RowMemo

# internal: used by scorecore.evals._rows._row.RowBuilder and ItemRows
__all__: list[str] = []

# Result fields with a column of their own that a row takes from the result. The run id, score
# and reason come from the outcome instead (a failed run has neither), and the request context
# from the item or call, redacted.
_SET_BY_ROW = frozenset({"run_id", "score", "reason", "request_context"})
FROM_RESULT = tuple(f for f in RESULT_FIELDS if f.stored == "column" and f.name not in _SET_BY_ROW)
TO_METADATA = tuple(f for f in RESULT_FIELDS if f.stored == "metadata")
_TO_CONTEXT = tuple(f for f in RESULT_FIELDS if f.stored == "context")
CONTEXT_NAMES: Final = tuple(f.name for f in _TO_CONTEXT)
"""The run's attributes :func:`context_of` reads."""
_RESULT_JSON = (*FROM_RESULT, *TO_METADATA)
_PLAIN = (dict, list, tuple, str, int, float, bool)


def context_of(source: object, extra: Mapping[str, Any]) -> dict[str, Any]:
    """A row's ``additionalContext``: the run's context fields set on ``source``, then ``extra``.

    ``source`` is the run (``ScorerRun``) or the dataset item (:class:`EvalItem`): both have the
    run's attributes.
    """
    context: dict[str, Any] = {}
    for field in _TO_CONTEXT:
        value = getattr(source, field.name)
        if value is not None:
            context[field.key] = value
    context.update(extra)
    return context


# A value whose JSON is itself (what the converter gives back unchanged).
_SCALARS = (str, int, float, bool)


# Per result field a row keeps, the run's first: (attribute, dropped when empty?, its JSON is
# the value itself when a scalar?, how it is made JSON, its key) — read once, not per row.
_ON_RUN = tuple(f for f in _RESULT_JSON if f.on_run)
_ON_RESULT = tuple(f for f in _RESULT_JSON if not f.on_run)
_RESULT_SPECS: Final = tuple(
    (f.name, f.optional, f.encode is converter.unstructure, f.encode, f.key)
    for f in (*_ON_RUN, *_ON_RESULT)
)
# Their values, in the same order, in one C call each (most are None: skipped unpacked).
_RUN_VALUES: Final = operator.attrgetter(*(f.name for f in _ON_RUN))
_RESULT_VALUES: Final = operator.attrgetter(*(f.name for f in _ON_RESULT))


def result_json(
    result: ScoreResult[Any, Any], clean: Sanitizer, memo: RowMemo
) -> dict[str, Any]:
    """The JSON of each result field a row keeps, by attribute name.

    Converting walks the user's values (their hooks run, and a value nested thousands deep
    exhausts the stack): a field that fails keeps its raw value, which the sanitizer then
    renders as far as it can, and the failure is noted, instead of losing the row. A value
    the rows of an item share (the run's input and output) is converted once.
    """
    data: dict[str, Any] = {}
    values = (*_RUN_VALUES(result.run), *_RESULT_VALUES(result))
    for spec, value in zip(_RESULT_SPECS, values, strict=True):
        if value is None:
            continue
        name, optional, plain, encode, key = spec
        if optional and not value:
            continue
        if plain and type(value) in _SCALARS:
            data[name] = value
            continue
        try:
            data[name] = memo.once(value, name, encode, value)
        except Exception as exc:  # noqa: BLE001 - user values (see above)
            data[name] = value
            if not isinstance(value, _PLAIN):  # plain data loses nothing in the sanitizer
                clean.note(key, f"converting it to JSON raised {type(exc).__name__}; "
                                "stored as its text")
    return data


SAME: Final = object()


def given_input(given: Any, stored: Any, memo: RowMemo) -> Any:
    """``given`` as JSON when it is not what the row's ``input`` column stores, else ``SAME``
    (converted once per item)."""
    if given is None or given is stored:
        return SAME
    try:
        as_json = memo.once(given, "givenInput", converter.unstructure, given)
        same = bool(as_json == stored)
    # The item's input is user data: its hooks or __eq__ may fail; the column then stands.
    except Exception:  # noqa: BLE001 - see above
        return SAME
    return SAME if same else as_json
