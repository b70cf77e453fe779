"""How sure a judge was: the probability-weighted verdict and the agreement of samples.

Pure functions over values, below the prompt step: :func:`weigh` reads a reply's token
log-probabilities at the verdict position (G-Eval), or at every position of a keyed reply's
verdicts; :func:`read_verdicts` reads a reply's verdicts without probabilities (a sample's
score); :func:`agreement` the spread of several replies' scores.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Final, Literal, TypeAlias, final

from scorecore._core._logprobs import MAX_TOP_LOGPROBS, TokenLogprob
from scorecore.validators import check_count, is_number, misuse

__all__: list[str] = []  # internal: the prompt step reads them

ScoreFrom: TypeAlias = Literal["reply", "probabilities"]
"""Where a prompt step's score comes from: the reply's value, or the verdict probabilities."""

_SCORE_FROM: Final = ("reply", "probabilities")
_STRIP: Final = " \t\r\n\"'`"
# A keyed verdict's token may carry the JSON around it (`"yes",`): that goes too.
_STRIP_JSON: Final = _STRIP + ",:{}[]"
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


def check_fallback_samples(_inst: object, _attr: object, value: int | None) -> None:
    """A field validator: ``None`` or a whole number of samples >= 2."""
    if value is not None:
        check_count("ScorePromptStep.fallback_samples", value, minimum=2)


def check_verdict_key(_inst: object, _attr: object, value: str | None) -> None:
    """A field validator: ``None`` or a non-empty JSON key."""
    given: object = value  # the caller's value, whatever the annotation says
    if given is not None and (not isinstance(given, str) or not given.strip()):
        raise misuse("ScorePromptStep.verdict_key", value, "must be a non-empty str or None")


def refuse_unusable(
    score_from: ScoreFrom, verdicts: Mapping[str, float] | None, samples: int, *,
    has_calculate: bool, fallback_samples: int | None = None, verdict_key: str | None = None,
) -> None:
    """Refuse a step whose confidence settings do not go together (internal)."""
    if score_from != "probabilities":
        for field, value in (("fallback_samples", fallback_samples),
                             ("verdict_key", verdict_key)):
            if value is not None:
                raise misuse(f"ScorePromptStep.{field}", value,
                             'is read only with score_from="probabilities"')
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
    logprobs: Sequence[TokenLogprob] | None, verdicts: Mapping[str, float], *,
    key: str | None = None,
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
    >>> no = TokenLogprob(token="no", logprob=math.log(0.6), top=[("yes", math.log(0.4))])
    >>> tokens = [TokenLogprob(token='[{"v": "', logprob=0.0), yes,
    ...           TokenLogprob(token='"}, {"v": "', logprob=0.0), no,
    ...           TokenLogprob(token='"}]', logprob=0.0)]
    >>> w = weigh(tokens, {"yes": 1.0, "no": 0.0}, key="v")
    >>> round(w.score, 6), round(w.confidence, 6)
    (0.6, 0.7)
    """
    if logprobs is None:
        return NO_LOGPROBS
    values = {_norm(token): float(value) for token, value in verdicts.items()}
    if key is not None:
        return _weigh_keyed(logprobs, values, key)
    for position in logprobs:
        chosen = _norm(position.token)
        if chosen not in values:
            continue
        alternatives = ((position.token, position.logprob), *position.top)
        return _weigh_one(position.token, {t: (_norm(t), lp) for t, lp in alternatives}, chosen,
                          values)
    return (f"no generated token is one of the verdicts {sorted(verdicts)!r} "
            f"(the reply had {len(logprobs)} tokens)")


NO_LOGPROBS: Final = "the judge gave no token log-probabilities"
"""Why :func:`weigh` could not score a reply from a judge that gave none (the one reason a
step may fall back to samples)."""


def _weigh_one(
    generated: str, forms: Mapping[str, tuple[str | None, float]], chosen: str,
    values: Mapping[str, float],
) -> Confident | str:
    """One verdict position: ``forms`` maps each surface form (the generated token among
    them, each counted once) to the verdict it stands for (``None``: none) and its logprob."""
    per_verdict: dict[str, float] = {}
    for verdict, logprob in forms.values():
        if verdict is not None and verdict in values:
            per_verdict[verdict] = per_verdict.get(verdict, 0.0) + math.exp(logprob)
    total = math.fsum(per_verdict.values())
    if total <= 0.0 or not math.isfinite(total):
        return f"the verdict token {generated!r} has no probability"
    score = math.fsum(p * values[v] for v, p in per_verdict.items()) / total
    # Rounding may push a weighted mean a hair outside the verdicts' values.
    score = min(max(score, min(values.values())), max(values.values()))
    return Confident(score, min(1.0, per_verdict[chosen] / total))


def _verdict_of(piece: str, values: Mapping[str, float]) -> str | None:
    """The verdict a keyed position's token stands for: its own, or the one verdict it
    begins (a verdict the tokenizer splits, ``"uns"`` of ``"unsure"``); else ``None``."""
    form = piece.strip(_STRIP_JSON).casefold()
    if not form:
        return None
    if form in values:
        return form
    begun = [v for v in values if v.startswith(form)]
    return begun[0] if len(begun) == 1 else None


def _weigh_keyed(
    logprobs: Sequence[TokenLogprob], values: Mapping[str, float], key: str
) -> Confident | str:
    """Every value of ``key`` in the reply weighed: the mean score and the mean confidence."""
    text = "".join(t.token for t in logprobs)
    starts = list(itertools.accumulate((len(t.token) for t in logprobs), initial=0))
    weighed: list[Confident] = []
    for found in re.finditer(rf'"{re.escape(key)}"\s*:\s*"?', text):
        at = found.end()
        index = bisect.bisect_right(starts, at) - 1
        if index >= len(logprobs):
            break
        position = logprobs[index]
        # The token may begin before the verdict (`: "yes`): only what follows that head
        # counts, for the generated token and for each alternative that shares the head.
        head = position.token[:at - starts[index]]
        piece = position.token[len(head):]
        chosen = _verdict_of(piece, values)
        if chosen is None:
            return (f"the reply's {key!r} number {len(weighed) + 1} begins with {piece!r}, not "
                    f"one of the verdicts {sorted(values)!r}")
        forms = {token: (_verdict_of(token[len(head):], values) if token.startswith(head)
                         else None, logprob)
                 for token, logprob in ((position.token, position.logprob), *position.top)}
        one = _weigh_one(position.token, forms, chosen, values)
        if isinstance(one, str):
            return one
        weighed.append(one)
    if not weighed:
        return f"the reply gives no {key!r}"
    return Confident(math.fsum(w.score for w in weighed) / len(weighed),
                     math.fsum(w.confidence for w in weighed) / len(weighed))


def read_verdicts(
    reply: object, text: str, verdicts: Mapping[str, float], key: str | None
) -> float | str:
    """A reply's own verdict value, read without probabilities (a sample of a step that
    falls back to samples), or why not: with ``key``, the mean value of the reply's ``key``
    values; without, the first verdict in ``text`` (a whole word, case aside), as
    :func:`weigh` takes the first verdict token.

    >>> read_verdicts(None, '{"verdict": "Yes"}', {"yes": 1.0, "no": 0.0}, None)
    1.0
    >>> read_verdicts({"v": [{"verdict": "yes"}, {"verdict": "no"}]}, "",
    ...               {"yes": 1.0, "no": 0.0}, "verdict")
    0.5
    """
    values = {_norm(token): float(value) for token, value in verdicts.items()}
    if key is None:
        words = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
        found = re.search(rf"(?<!\w)(?:{words})(?!\w)", text, re.IGNORECASE)
        if found is None:
            return f"the reply holds none of the verdicts {sorted(verdicts)!r}"
        return values[found.group().casefold()]
    given = list(_values_of(reply, key))
    read = [values.get(_norm(v)) if isinstance(v, str) else None for v in given]
    if not read or any(v is None for v in read):
        return f"the reply's {key!r} values {given!r} are not all among {sorted(verdicts)!r}"
    return math.fsum(v for v in read if v is not None) / len(read)


def _values_of(reply: object, key: str) -> Sequence[object]:
    """Every value of ``key`` in a parsed JSON reply, depth first, in order."""
    found: list[object] = []
    if isinstance(reply, Mapping):
        for k, v in reply.items():
            if k == key:
                found.append(v)
            else:
                found.extend(_values_of(v, key))
    elif isinstance(reply, list | tuple):
        for v in reply:
            found.extend(_values_of(v, key))
    return found


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
