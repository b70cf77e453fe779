"""``use_batch_api``: the synchronous OpenAI and Anthropic judges of a run answer through the
providers' batch APIs (what ``scorecore eval --batch-api`` does with scorers it loads)."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import final

import attrs
from returns.result import Result

from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse
from scorecore_adapters._http import routing as batch_routing
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.batch._api import AnthropicBatchAPI, BatchAPI, OpenAIBatchAPI
from scorecore_adapters.batch._journal import BatchJournal
from scorecore_adapters.batch._judge import BatchJudgeBase, BatchProgress
from scorecore_adapters.batch._models import (
    DEFAULT_MAX_BATCH_SIZE,
    DEFAULT_MAX_WAIT,
    DEFAULT_POLL_INTERVAL,
)
from scorecore_adapters.openai import OpenAIChatModel

__all__ = ["BatchRouting", "use_batch_api"]


@final
@attrs.frozen(kw_only=True)
class _Options:
    max_batch_size: int
    max_wait: float
    poll_interval: float
    clock: Callable[[], float] | None
    sleep: Callable[[float], Awaitable[None]] | None


@final
class BatchRouting:
    """The batch judges ``use_batch_api`` made, one per synchronous judge object it routed."""

    __slots__ = ("_journal", "_judges", "_options", "on_change")

    def __init__(
        self, journal: BatchJournal, *, max_batch_size: int, max_wait: float,
        poll_interval: float, clock: Callable[[], float] | None,
        sleep: Callable[[float], Awaitable[None]] | None,
        on_change: Callable[[BatchProgress], None] | None,
    ) -> None:
        self._journal = journal
        self._options = _Options(max_batch_size=max_batch_size, max_wait=max_wait,
                                 poll_interval=poll_interval, clock=clock, sleep=sleep)
        self._judges: dict[int, tuple[object, BatchJudgeBase]] = {}
        self.on_change = on_change

    def routes(self, model: object, /) -> bool:
        """OpenAI's and Anthropic's own judges are routed; any other model is not."""
        return isinstance(model, OpenAIChatModel | AnthropicModel)

    def _judge(self, model: OpenAIChatModel | AnthropicModel) -> BatchJudgeBase:
        found = self._judges.get(id(model))
        if found is not None and found[0] is model:
            return found[1]
        api: BatchAPI = (OpenAIBatchAPI(model) if isinstance(model, OpenAIChatModel)
                         else AnthropicBatchAPI(model))
        o = self._options
        judge = BatchJudgeBase(
            model=model, api=api, journal=self._journal, max_batch_size=o.max_batch_size,
            max_wait=o.max_wait, poll_interval=o.poll_interval, clock=o.clock, sleep=o.sleep,
            new_id=None, on_change=self._changed,
        )
        self._judges[id(model)] = (model, judge)
        return judge

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.progress())

    async def generate(
        self, model: object, request: JudgeRequest, /
    ) -> Result[JudgeResponse, JudgeError]:
        """Answer ``request`` for ``model`` through its batch judge."""
        assert isinstance(model, OpenAIChatModel | AnthropicModel)  # noqa: S101 - routes()
        return await self._judge(model).generate(request)

    def progress(self) -> BatchProgress:
        """The progress of every batch judge, summed."""
        totals: dict[str, int] = {}
        for _, judge in self._judges.values():
            for name, value in judge.progress().counts().items():
                totals[name] = totals.get(name, 0) + value
        return BatchProgress(**totals)


@contextlib.contextmanager
def use_batch_api(
    journal: BatchJournal | str | Path,
    *,
    max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
    max_wait: float = DEFAULT_MAX_WAIT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    on_change: Callable[[BatchProgress], None] | None = None,
) -> Iterator[BatchRouting]:
    """Within the block (and the tasks started in it), every ``OpenAIChatModel`` and
    ``AnthropicModel`` call goes through the provider's batch API, journalled in ``journal``
    (give the judge cache's SQLite file) and priced at the batch price. ``on_change`` is
    called with the summed :class:`BatchProgress` whenever a batch is submitted or ends.

    >>> import tempfile, pathlib
    >>> with use_batch_api(pathlib.Path(tempfile.mkdtemp()) / "cache.db") as routing:
    ...     OpenAIChatModel("gpt-4o-mini", api_key="sk-x").batch_api
    True
    >>> OpenAIChatModel("gpt-4o-mini", api_key="sk-x").batch_api
    False
    """
    book = journal if isinstance(journal, BatchJournal) else BatchJournal(journal)
    routing = BatchRouting(book, max_batch_size=max_batch_size, max_wait=max_wait,
                           poll_interval=poll_interval, clock=clock, sleep=sleep,
                           on_change=on_change)
    token = batch_routing.ROUTER.set(routing)
    try:
        yield routing
    finally:
        batch_routing.ROUTER.reset(token)
        if book is not journal:
            book.close()
