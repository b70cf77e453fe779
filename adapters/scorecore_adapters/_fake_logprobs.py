"""A fake judge's reply with token log-probabilities, for testing probability-weighted scores
offline (re-exported by :mod:`scorecore_adapters.testing`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from scorecore.judge import JudgeResponse, JudgeUsage, TokenLogprob
from scorecore.validators import is_number, misuse

__all__ = ["verdict_reply"]


def verdict_reply(
    reply: str | Mapping[str, Any], probabilities: Mapping[str, float], *,
    chosen: str | None = None,
) -> JudgeResponse:
    """A reply whose verdict token carries the given probabilities.

    ``reply`` is the reply text (or a JSON object, sent as its JSON text); ``probabilities``
    maps each candidate verdict token to its probability at the verdict position (they may
    sum to less than 1: the rest went to other tokens). ``chosen`` is the generated verdict
    (by default the likeliest); it must appear in the text. The text is split into three
    tokens — before the verdict, the verdict, after it — the other two certain.
    Give it to :class:`ScriptedJudge` or return it from a :class:`FunctionJudge`.

    Raises:
        ScorerDefinitionError: a probability outside (0, 1], or the chosen verdict is not in
            the text or not among ``probabilities``.

    >>> r = verdict_reply({"score": 4}, {"4": 0.7, "3": 0.2, "5": 0.1})
    >>> r.text, [t.token for t in r.logprobs], round(math.exp(r.logprobs[1].logprob), 2)
    ('{"score": 4}', ['{"score": ', '4', '}'], 0.7)
    """
    text = reply if isinstance(reply, str) else json.dumps(reply, allow_nan=False)
    for token, p in probabilities.items():
        if not is_number(p) or not 0.0 < p <= 1.0:
            raise misuse("verdict_reply.probabilities", probabilities,
                         f"must map each token to a probability in (0, 1], got {token!r}: {p!r}")
    if not probabilities:
        raise misuse("verdict_reply.probabilities", probabilities, "must not be empty")
    verdict = chosen if chosen is not None else max(probabilities, key=probabilities.__getitem__)
    at = text.find(verdict)
    if verdict not in probabilities or at < 0:
        raise misuse("verdict_reply.chosen", verdict,
                     "must be one of the probabilities' tokens and appear in the reply text")
    top = sorted(((t, math.log(p)) for t, p in probabilities.items()), key=lambda a: -a[1])
    tokens = [TokenLogprob(token=text[:at], logprob=0.0)] if at else []
    tokens.append(TokenLogprob(token=verdict, logprob=math.log(probabilities[verdict]), top=top))
    if text[at + len(verdict):]:
        tokens.append(TokenLogprob(token=text[at + len(verdict):], logprob=0.0))
    return JudgeResponse(text=text, usage=JudgeUsage(output_tokens=len(tokens)),
                         finish_reason="stop", logprobs=tuple(tokens))
