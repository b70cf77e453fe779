"""Judge economics: the reply cache, prices, spending limits, and the meter calls go through.

- the cache port (:class:`JudgeCache`) and its key (:func:`cache_key`; a judge model reads
  the key of the call it is answering with :func:`current_cache_key`; a judge answering with a
  user's function puts :func:`function_identity` in its ``cache_identity``); a cache builds
  the replies it reads back with :func:`stored_reply` (and :func:`reply_with_text`);
- prices (:class:`Pricing`, :class:`ModelPrice`) and spending limits (:class:`Budget`,
  :class:`BudgetWarning`); the output cap a budget reserves (:data:`DEFAULT_OUTPUT_CAP`,
  :data:`OUTPUT_CAP_FIELDS`);
- the :class:`JudgeMeter` a run's judge calls go through, with its shared :class:`JudgeLedger`;
- :func:`format_usd`, dollars as reports print them.

A call a hard budget refuses ends its run with the cause :class:`scorecore.BudgetExhausted`.

>>> Pricing.from_mapping({"gpt-4o-mini": {"input": 0.15, "output": 0.6}}).price("gpt-4o-mini")
ModelPrice(input=0.15, output=0.6, cached_input=None, batch_discount=0.5)
"""

from scorecore._core._budget import Budget, BudgetWarning, JudgeLedger
from scorecore._core._cache import JudgeCache, cache_key
from scorecore._core._call_key import current_cache_key
from scorecore._core._fingerprint import function_identity
from scorecore._core._judge import (
    DEFAULT_OUTPUT_CAP,
    OUTPUT_CAP_FIELDS,
    reply_with_text,
    stored_reply,
)
from scorecore._core._meter import JudgeMeter
from scorecore._core._pricing import ModelPrice, Pricing, format_usd

__all__ = [
    "DEFAULT_OUTPUT_CAP",
    "OUTPUT_CAP_FIELDS",
    "Budget",
    "BudgetWarning",
    "JudgeCache",
    "JudgeLedger",
    "JudgeMeter",
    "ModelPrice",
    "Pricing",
    "cache_key",
    "current_cache_key",
    "format_usd",
    "function_identity",
    "reply_with_text",
    "stored_reply",
]
