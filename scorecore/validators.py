"""Small validators for options: numbers that are not bools, counts, and the misuse error.

The one home of these checks for the kernel, its layers and the adapters (and for anyone
writing a judge model, a store or a processor who wants the same errors): a wrong option raises
a :class:`~scorecore.ScorerDefinitionError` naming the field and the value.

>>> from scorecore.validators import check_count, is_int, is_number, misuse
>>> is_int(3), is_int(True), is_number(0.5), is_number(None)
(True, False, True, False)
>>> check_count("MyJudge.max_retries", 2, minimum=0)
2
>>> raise misuse("MyJudge.timeout", -1, "must be a number > 0")
Traceback (most recent call last):
...
scorecore.ScorerDefinitionError: MyJudge.timeout must be a number > 0, got -1
"""

from scorecore._core._checks import check_count, is_int, is_number, misuse

__all__ = ["check_count", "is_int", "is_number", "misuse"]
