"""How sure a judge was: the probability-weighted verdict and the agreement of samples.

Pure functions over values, below the prompt step: :func:`weigh` reads a reply's token
log-probabilities at the verdict position (G-Eval), :func:`agreement` the spread of several
replies' scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final, Literal, TypeAlias, final

from scorecore._core._logprobs import MAX_TOP_LOGPROBS, TokenLogprob
from scorecore.validators import check_count, is_number, misuse

__all__: list[str] = []  # internal: the prompt step reads them

ScoreFrom: TypeAlias = Literal["reply", "probabilities"]
"""Where a prompt step's score comes from: the reply's value, or the verdict probabilities."""

_SCORE_FROM: Final = ("reply", "probabilities")
_STRIP: Final = " \t\r\n\"'`"
# At least this many alternatives are asked for at each token: the verdicts' surface forms
# ("Yes", " yes", "YES") compete for the top places.
_MIN_TOP: Final = 5


def _norm(token: str) -> str:
    return token.strip(_STRIP).casefold()


def check_score_from(_inst: object, _attr: object, value: object) -> None:
    """A field validator: ``"reply"`` or ``"probabilities"``."""
    if value not in _SCORE_FROM:
        raise misuse("ScorePromptStep.score_from", value, 'must be "reply" or "probabilities"')


def check_samples(_inst: object, _attr: object, value: object) -> None:
    """A field validator: a whole number of samples >= 1."""
    check_count("ScorePromptStep.samples", value, minimum=1)


def check_verdicts(_inst: object, _attr: object, value: Mapping[str, float] | None) -> None:
    """A field validator: ``None`` or a mapping of distinct verdict tokens to finite values."""
    given: object = value  # the caller's value, whatever the annotation says
    if given is None:
        return
    field = "ScorePromptStep.verdicts"
    if not isinstance(given, Mapping) or not given:
        raise misuse(field, given, "must be a non-empty mapping of verdict token to value")
    seen: dict[str, object] = {}
    for token, score in given.items():
        if not isinstance(token, str) or not _norm(token):
            raise misuse(field, token, "must have non-empty str verdict tokens")
        if not is_number(score) or not math.isfinite(score):
            raise misuse(field, value, f"must map {token!r} to a finite number")
        key = _norm(token)
        if key in seen:
            raise misuse(field, value, f"has {seen[key]!r} and {token!r}, the same verdict "
                                       "once case, spaces and quotes are set aside")
        seen[key] = token
    if len(given) > MAX_TOP_LOGPROBS:
        raise misuse(field, value, f"must have at most {MAX_TOP_LOGPROBS} verdicts")


def refuse_unusable(
    score_from: ScoreFrom, verdicts: Mapping[str, float] | None, samples: int, *,
    has_calculate: bool,
) -> None:
    """Refuse a step whose confidence settings do not go together (internal)."""
    if score_from == "probabilities":
        if verdicts is None:
            raise misuse("ScorePromptStep.verdicts", None,
                         'must map each verdict token to its value with score_from='
                         '"probabilities"')
        if has_calculate:
            raise misuse("ScorePromptStep.calculate_score", "a function",
                         'must be None with score_from="probabilities" (the score is the '
                         "verdicts' probability-weighted value)")
        if samples != 1:
            raise misuse("ScorePromptStep.samples", samples,
                         'must be 1 with score_from="probabilities" (the probabilities '
                         "already say how sure the judge was)")
    elif verdicts is not None:
        raise misuse("ScorePromptStep.verdicts", verdicts,
                     'are read only with score_from="probabilities"')


def top_logprobs_for(verdicts: Mapping[str, float]) -> int:
    """How many alternatives per token a step with these verdicts asks for."""
    return min(MAX_TOP_LOGPROBS, max(_MIN_TOP, len(verdicts)))


@final
class Confident:
    """A score and how sure the judge was of it (a probability-weighted verdict with the
    chosen verdict's probability, or samples' mean with their agreement), from the step to
    the pipeline."""

    __slots__ = ("confidence", "score")

    def __init__(self, score: float, confidence: float) -> None:
        self.score = score
        self.confidence = confidence

    def __repr__(self) -> str:
        return f"Confident(score={self.score!r}, confidence={self.confidence!r})"


def weigh(
    logprobs: Sequence[TokenLogprob] | None, verdicts: Mapping[str, float]
) -> Confident | str:
    """The probability-weighted value over ``verdicts`` at the verdict position, or why not.

    The verdict position is the first generated token that is a verdict (compared without
    case, spaces or quotes). There, every alternative that is a verdict adds its probability
    to that verdict; the score is ``sum(p(v) * value(v)) / sum(p(v))`` and the confidence is
    the chosen (generated) verdict's share ``p(chosen) / sum(p(v))``. So all the mass on one
    verdict gives its value and confidence 1.0, and the score lies within the verdicts' values.

    >>> yes = TokenLogprob(token="yes", logprob=math.log(0.8),
    ...                    top=[("yes", math.log(0.8)), ("no", math.log(0.2))])
    >>> w = weigh([yes], {"yes": 1.0, "no": 0.0})
    >>> round(w.score, 6), round(w.confidence, 6)
    (0.8, 0.8)
    >>> weigh(None, {"yes": 1.0})
    'the judge gave no token log-probabilities'
    """
    if logprobs is None:
        return "the judge gave no token log-probabilities"
    values = {_norm(token): float(value) for token, value in verdicts.items()}
    for position in logprobs:
        chosen = _norm(position.token)
        if chosen not in values:
            continue
        mass: dict[str, float] = {}
        for token, logprob in ((position.token, position.logprob), *position.top):
            key = _norm(token)
            # The generated token is usually among the alternatives too: count each surface
            # form once.
            if key in values and token not in mass:
                mass[token] = math.exp(logprob)
        per_verdict: dict[str, float] = {}
        for token, p in mass.items():
            per_verdict[_norm(token)] = per_verdict.get(_norm(token), 0.0) + p
        total = math.fsum(per_verdict.values())
        if total <= 0.0 or not math.isfinite(total):
            return f"the verdict token {position.token!r} has no probability"
        score = math.fsum(p * values[v] for v, p in per_verdict.items()) / total
        # Rounding may push a weighted mean a hair outside the verdicts' values.
        score = min(max(score, min(values.values())), max(values.values()))
        return Confident(score, min(1.0, per_verdict[chosen] / total))
    return (f"no generated token is one of the verdicts {sorted(verdicts)!r} "
            f"(the reply had {len(logprobs)} tokens)")


def agreement(scores: Sequence[float]) -> float:
    """How much several samples' scores agree: the share of sample pairs with equal scores.

    1.0 when all agree exactly; with ``k`` samples, ``sum(n * (n - 1)) / (k * (k - 1))`` over
    the counts ``n`` of each distinct score (Fleiss' agreement of one item), so a lone
    dissenter among five gives 0.6 and five different scores 0.0. One sample agrees with
    itself (1.0).

    >>> agreement([0.8, 0.8, 0.8]), agreement([1.0, 1.0, 1.0, 1.0, 0.0]), agreement([0, 1])
    (1.0, 0.6, 0.0)
    """
    k = len(scores)
    if k < 2:
        return 1.0
    counts: dict[float, int] = {}
    for score in scores:
        counts[score] = counts.get(score, 0) + 1
    return sum(n * (n - 1) for n in counts.values()) / (k * (k - 1))
