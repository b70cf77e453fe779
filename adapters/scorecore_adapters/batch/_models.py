"""The two batch judges: OpenAI's Batch API and Anthropic's Message Batches."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Literal, final

import httpx

from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.batch._api import AnthropicBatchAPI, OpenAIBatchAPI
from scorecore_adapters.batch._journal import BatchJournal
from scorecore_adapters.batch._judge import BatchJudgeBase
from scorecore_adapters.openai import OpenAIChatModel

__all__ = ["AnthropicBatchModel", "OpenAIBatchModel"]

DEFAULT_MAX_BATCH_SIZE = 10_000
DEFAULT_MAX_WAIT = 60.0
DEFAULT_POLL_INTERVAL = 30.0


def _journal(journal: BatchJournal | str | Path) -> BatchJournal | str:
    return str(journal) if isinstance(journal, Path) else journal


@final
class OpenAIBatchModel(BatchJudgeBase):
    """A judge answering through OpenAI's Batch API (``/v1/chat/completions`` requests).

    Request bodies, structured output (strict ``json_schema``) and reply parsing are those of
    :class:`~scorecore_adapters.openai.OpenAIChatModel`; only the transport differs.
    Concurrent runs' requests are submitted as one batch when ``max_batch_size`` are queued
    or ``max_wait`` seconds after the first; each run's step waits for its own answer. Every
    request is journalled in ``journal`` (a SQLite file: give the judge cache's) before it is
    sent, and the batch id after, so a process killed at any point and started again resumes
    the batches already submitted and submits nothing twice.

    Args:
        model: the model name.
        journal: a :class:`BatchJournal` or the path of its SQLite file.
        base_url, api_key, client, organization, default_headers, timeout: as for
            :class:`~scorecore_adapters.openai.OpenAIChatModel` (``timeout`` is per HTTP
            request, not per batch).
        structured_output: ``"json_schema"`` (default) or ``"prompt"``; a batch cannot
            negotiate, so there is no ``"auto"``.
        max_batch_size: the most requests in one batch (OpenAI allows 50,000).
        max_wait: seconds to wait for more requests after the first one queued.
        poll_interval: seconds between status reads of a running batch.
        completion_window: OpenAI's ``completion_window`` (``"24h"``).
        clock, sleep: the time source and the wait (defaults: ``time.monotonic`` and
            ``anyio.sleep``); tests pass a :class:`~scorecore_adapters.testing.VirtualClock`.
        new_id: the source of job ids (default: random).

    >>> import tempfile, pathlib
    >>> judge = OpenAIBatchModel("gpt-4o-mini", api_key="sk-secret",
    ...                          journal=pathlib.Path(tempfile.mkdtemp()) / "cache.db")
    >>> judge.provider, judge.model_id, judge.batch_api
    ('openai', 'gpt-4o-mini', True)
    >>> "sk-secret" in repr(judge)
    False
    """

    __slots__ = ()

    def __init__(
        self,
        model: str,
        *,
        journal: BatchJournal | str | Path,
        base_url: str | None = None,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        structured_output: Literal["json_schema", "prompt"] = "json_schema",
        organization: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
        max_wait: float = DEFAULT_MAX_WAIT,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        completion_window: str = "24h",
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        chat = OpenAIChatModel(
            model, base_url=base_url, api_key=api_key, client=client,
            structured_output=structured_output, timeout=timeout, organization=organization,
            default_headers=default_headers,
        )
        super().__init__(
            model=chat, api=OpenAIBatchAPI(chat, completion_window=completion_window),
            journal=_journal(journal), max_batch_size=max_batch_size, max_wait=max_wait,
            poll_interval=poll_interval, clock=clock, sleep=sleep, new_id=new_id,
        )


@final
class AnthropicBatchModel(BatchJudgeBase):
    """A judge answering through Anthropic's Message Batches API.

    Request bodies (the forced ``respond`` tool for native schemas) and reply parsing are
    those of :class:`~scorecore_adapters.anthropic.AnthropicModel`; collection, the journal
    and resumption are as for :class:`OpenAIBatchModel`.

    Args:
        model: the model name.
        journal: a :class:`BatchJournal` or the path of its SQLite file.
        base_url, api_key, client, max_tokens, timeout: as for
            :class:`~scorecore_adapters.anthropic.AnthropicModel`.
        anthropic_version, supports_structured_output, default_headers: as there too.
        max_batch_size: the most requests in one batch (Anthropic allows 100,000).
        max_wait, poll_interval, clock, sleep, new_id: as for :class:`OpenAIBatchModel`.

    >>> import tempfile, pathlib
    >>> judge = AnthropicBatchModel("claude-sonnet-4-5", api_key="sk-ant-secret",
    ...                             journal=pathlib.Path(tempfile.mkdtemp()) / "cache.db")
    >>> judge.provider, judge.default_output_cap
    ('anthropic', 1024)
    """

    __slots__ = ("_anthropic",)

    def __init__(
        self,
        model: str,
        *,
        journal: BatchJournal | str | Path,
        base_url: str | None = None,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        max_tokens: int = 1024,
        timeout: float = 60.0,
        anthropic_version: str = "2023-06-01",
        supports_structured_output: bool = True,
        default_headers: Mapping[str, str] | None = None,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
        max_wait: float = DEFAULT_MAX_WAIT,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        inner = AnthropicModel(
            model, base_url=base_url, api_key=api_key, client=client, max_tokens=max_tokens,
            timeout=timeout, anthropic_version=anthropic_version,
            supports_structured_output=supports_structured_output,
            default_headers=default_headers,
        )
        super().__init__(
            model=inner, api=AnthropicBatchAPI(inner), journal=_journal(journal),
            max_batch_size=max_batch_size, max_wait=max_wait, poll_interval=poll_interval,
            clock=clock, sleep=sleep, new_id=new_id,
        )
        self._anthropic = inner

    @property
    def default_output_cap(self) -> int:
        """The output cap of steps that set none (the ``max_tokens`` argument)."""
        return self._anthropic.default_output_cap
