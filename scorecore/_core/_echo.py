"""A prompt's worked example, declared, and the check that a reply did not restate it.

A small judge shown a worked example often answers about the example instead of the run: its
reply lists the example's statements ("The Eiffel Tower is 330 m tall.") whatever it was asked
to judge. That reply is well formed, so no schema catches it; the step declares its example
(:class:`WorkedExample`) and the core compares each reply with it (:func:`echoed`).

A statement counts as echoed when its words appear, in order and together, in the reply and
not in the run's own text (the prompt without the example): a run about the Eiffel Tower may
have the judge repeat "The Eiffel Tower is 330 m tall." because the run says so.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any, TypeVar, final

import attrs

from scorecore._core._reprs import short_repr
from scorecore.validators import misuse

__all__ = ["WorkedExample"]

# The field type of an attrs validator below: each serves fields of any type it checks.
_F = TypeVar("_F")

_WORD = re.compile(r"\w+")


def _words(text: str) -> str:
    """``text`` as its words, case-folded and compatibility-normalised, one space apart and
    padded with a space each side (so ``" a b " in " x a b y "`` finds whole words only)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " " + " ".join(_WORD.findall(folded)) + " "


def _check_text(owner: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if not isinstance(value, str) or not value.strip():
        raise misuse(f"WorkedExample.{attr.name}", value, "must be a non-empty str")


def _statements(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise misuse("WorkedExample.statements", value,
                     "must be a tuple of str (the example's statements)")
    return tuple(value)


@final
@attrs.frozen(kw_only=True)
class WorkedExample:
    """The worked example a prompt step shows its judge, declared so that a reply restating it
    is caught (give it as ``PromptStep(example=...)``).

    ``text`` is the example exactly as ``create_prompt`` writes it into the prompt: it is not
    part of the run's own text, and the second attempt after an echo is sent without it.
    ``statements`` are what a reply would only say by restating the example (its claims,
    the statements of its reply); each must be words of ``text``. A reply that holds one of
    them, when the rest of the prompt does not, is an echo: a format failure, so the step's
    second attempt runs; no usable reply then ends the run not scorable, kind ``"example_echo"``.

    >>> example = WorkedExample(
    ...     text='Answer: "Paris is in Spain."\\nReply: {"claims": ["Paris is in Spain."]}',
    ...     statements=("Paris is in Spain.",))
    >>> example.echoed_in('{"claims": ["paris is in SPAIN"]}', own_text="Rome is in Italy.")
    ('Paris is in Spain.',)
    >>> example.echoed_in('{"claims": ["Paris is in Spain"]}', own_text="Paris is in Spain?")
    ()
    """

    text: str = attrs.field(validator=_check_text)
    statements: tuple[str, ...] = attrs.field(converter=_statements)

    @statements.validator
    def _check_statements(self, _attr: attrs.Attribute[Any], value: tuple[object, ...]) -> None:
        if not value:
            raise misuse("WorkedExample.statements", value,
                         "must name at least one statement of the example")
        shown = _words(self.text)
        for index, statement in enumerate(value):
            if not isinstance(statement, str) or not _WORD.search(statement):
                raise misuse(f"WorkedExample.statements[{index}]", statement,
                             "must be a str with at least one word")
            if _words(statement) not in shown:
                raise misuse(f"WorkedExample.statements[{index}]", statement,
                             f"is not in the example's text {short_repr(self.text, 80)}")

    def echoed_in(self, reply: str, *, own_text: str) -> tuple[str, ...]:
        """The statements ``reply`` restates that ``own_text`` (the run's own text: the prompt
        without the example) does not hold; ``()`` when the reply judged the run."""
        said, own = _words(reply), _words(own_text)
        return tuple(s for s in self.statements
                     if (words := _words(s)) in said and words not in own)

    def own_text(self, prompt: str) -> str:
        """``prompt`` without the example: the run's own text, and the prompt of the attempt
        that follows an echo."""
        return prompt.replace(self.text, "")
