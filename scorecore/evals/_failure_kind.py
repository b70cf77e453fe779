"""The short kind of a failed run's cause, as stored rows keep it (``metadata["cause"]``)."""

from __future__ import annotations

import re
from typing import Final

from scorecore._core._causes import JudgeFailed, RunFailureCause, StepRaised

__all__ = ["failure_kind"]

_CAMEL: Final = re.compile(r"(?<=[a-z])(?=[A-Z])")


def failure_kind(cause: RunFailureCause) -> str:
    """A short, stable class of failure for ``cause``, for grouping failures.

    A judge error by its kind (``"judge network"``, ``"judge server"`` …), a raising step by
    its exception type (``"raised KeyError"``), any other cause by its class name in words
    (``JudgeOutputInvalid`` gives ``"judge output invalid"``, so a cause added later gets a
    readable kind too). Rows of failed runs store it in ``metadata["cause"]["kind"]``.

    >>> from scorecore import InvalidScore, StepRaised
    >>> failure_kind(StepRaised(exception_type="KeyError", message="'x'"))
    'raised KeyError'
    >>> failure_kind(InvalidScore(value_repr="'high'", type_name="str"))
    'invalid score'
    """
    if isinstance(cause, JudgeFailed):
        return f"judge {cause.error.kind}"
    if isinstance(cause, StepRaised):
        return f"raised {cause.exception_type}"
    return _CAMEL.sub(" ", type(cause).__name__).lower()
