"""A model that owns its HTTP client makes one per event loop, reuses it, and closes it."""

from __future__ import annotations

import gc
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx
import pytest

from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters import allow_model_requests
from scorecore_adapters._http.judge import HttpJudgeBase
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import OpenAIChatModel
from tests.adapters.http.loopback import LoopbackServer, serve

REQUEST = JudgeRequest(messages=(JudgeMessage(role="user", content="hi"),))
CALLS = 200
CONCURRENCY = 50

ModelFactory = Callable[[str], HttpJudgeBase]
FACTORIES: dict[str, ModelFactory] = {
    "openai": lambda url: OpenAIChatModel("gpt-4o", base_url=url + "/v1", api_key="sk-test"),
    "anthropic": lambda url: AnthropicModel("claude-x", base_url=url, api_key="sk-ant-test"),
}


@pytest.fixture
def created(monkeypatch: pytest.MonkeyPatch) -> list[httpx.AsyncClient]:
    """Every ``httpx.AsyncClient`` constructed during the test, in order."""
    clients: list[httpx.AsyncClient] = []

    class Counted(httpx.AsyncClient):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            clients.append(self)

    monkeypatch.setattr(httpx, "AsyncClient", Counted)
    return clients


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """A keep-alive provider (connections persist, as real providers' do), requests allowed."""
    with serve(keep_alive=True) as running, allow_model_requests():
        yield running


async def ask(model: HttpJudgeBase) -> None:
    assert (await model.generate(REQUEST)).unwrap().text == "ok"


@pytest.mark.anyio
@pytest.mark.parametrize("provider", sorted(FACTORIES))
async def test_one_owned_client_serves_every_call(
    anyio_backend: str,
    provider: str,
    server: LoopbackServer,
    created: list[httpx.AsyncClient],
) -> None:
    """200 sequential and 200 concurrent calls (50 at a time) share one client and its pool."""
    model = FACTORIES[provider](server.url)
    for _ in range(CALLS):
        await ask(model)
    # One client keeps its one connection alive: one TCP connection for 200 sequential calls.
    assert server.connections_accepted == 1
    limiter = anyio.CapacityLimiter(CONCURRENCY)

    async def limited() -> None:
        async with limiter:
            await ask(model)

    async with anyio.create_task_group() as tg:
        for _ in range(CALLS):
            tg.start_soon(limited)
    assert len(created) == 1
    assert len(server.requests) == 2 * CALLS
    await model.aclose()
    assert created[0].is_closed
    assert server.wait_until_no_connection_is_open()


@pytest.mark.anyio
async def test_async_with_closes_the_client_and_leaks_nothing(
    anyio_backend: str, server: LoopbackServer, created: list[httpx.AsyncClient]
) -> None:
    """Leaving ``async with`` closes the pool: no socket is left for the GC to warn about."""
    async with FACTORIES["openai"](server.url) as model, anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(ask, model)
    assert [client.is_closed for client in created] == [True]
    assert server.wait_until_no_connection_is_open()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


@pytest.mark.anyio
async def test_a_closed_model_can_be_used_again(
    anyio_backend: str, server: LoopbackServer, created: list[httpx.AsyncClient]
) -> None:
    """After ``aclose()`` the next call makes a new client, which ``aclose()`` closes again."""
    model = FACTORIES["anthropic"](server.url)
    await ask(model)
    await model.aclose()
    await model.aclose()  # idempotent
    await ask(model)
    await ask(model)
    assert len(created) == 2
    await model.aclose()
    assert all(client.is_closed for client in created)


@pytest.mark.parametrize("provider", sorted(FACTORIES))
def test_a_client_is_closed_when_its_event_loop_ends(
    provider: str, server: LoopbackServer, created: list[httpx.AsyncClient]
) -> None:
    """Never closed by the user, each loop's client is closed as that loop ends (asyncio,
    then trio), and the next loop gets a client of its own."""
    model = FACTORIES[provider](server.url)

    async def three_calls() -> None:
        for _ in range(3):
            await ask(model)

    anyio.run(three_calls)
    assert [client.is_closed for client in created] == [True]
    anyio.run(three_calls, backend="trio")
    assert [client.is_closed for client in created] == [True, True]
    assert server.connections_accepted == 2
    assert server.wait_until_no_connection_is_open()


def test_loops_running_at_once_in_two_threads_get_one_client_each(
    server: LoopbackServer, created: list[httpx.AsyncClient]
) -> None:
    """A model shared by an asyncio loop and a trio run, alive at the same time in two
    threads, gives each its own client and keeps reusing it, interleaved."""
    model = FACTORIES["openai"](server.url)
    turns = threading.Barrier(2, timeout=10)
    errors: list[BaseException] = []

    async def alternate() -> None:
        for _ in range(10):
            await ask(model)
            # Both loops have called before either calls again.
            await anyio.to_thread.run_sync(turns.wait)

    def run(backend: str) -> None:
        try:
            anyio.run(alternate, backend=backend)
        except BaseException as exc:  # handed to the test thread, which re-raises it
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(b,)) for b in ("asyncio", "trio")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    if errors:
        raise errors[0]
    assert len(created) == 2
    assert all(client.is_closed for client in created)
    assert len(server.requests) == 20
