"""The two providers' batch protocols behind one small interface.

OpenAI's Batch API: the requests are uploaded as a JSONL file (``purpose=batch``), a batch is
created from it (``metadata`` carries the journal's job id, so a process that died before
recording the batch id finds it again), and the batch goes ``validating → in_progress →
finalizing → completed`` (or ``failed``, ``expired``, ``cancelling → cancelled``); the answers
are in its output file, the per-request errors in its error file.

Anthropic's Message Batches: the requests are posted as one JSON body; the batch's
``processing_status`` goes ``in_progress → ended`` (``canceling`` on the way when cancelled);
its ``results_url`` serves JSONL whose ``result.type`` is ``succeeded``, ``errored``,
``canceled`` or ``expired``. A batch carries no metadata, so one created by a process that
died before recording it is recognised by its results' ``custom_id`` s (random per job).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, Literal, Protocol, TypeAlias, final

import attrs
from returns.result import Failure, Result, Success

from scorecore.judge import JudgeError
from scorecore_adapters._http.errors import as_str
from scorecore_adapters._http.transport import HttpTransport
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.batch._journal import RequestState
from scorecore_adapters.batch._wire import jsonl_lines
from scorecore_adapters.openai import OpenAIChatModel

__all__ = [
    "WAIT",
    "AnthropicBatchAPI",
    "BatchAPI",
    "BatchStatus",
    "OpenAIBatchAPI",
    "Outcome",
    "ResultFile",
]

Outcome: TypeAlias = tuple[RequestState, Mapping[str, Any]]
WAIT: Final = "wait"
Found: TypeAlias = str | Literal["wait"] | None


@final
@attrs.frozen(kw_only=True)
class BatchStatus:
    """A provider batch as last read: its status word, whether it has ended, the raw object."""

    batch_id: str
    status: str
    ended: bool
    raw: Mapping[str, Any]
    counts: Mapping[str, int] = attrs.field(factory=dict)


@final
@attrs.frozen(kw_only=True)
class ResultFile:
    """An ended batch's results: each ``custom_id`` 's outcome (``"*"`` for a batch refused as
    a whole) and how many lines repeated a ``custom_id`` already read (the first line wins:
    it is the one the provider wrote first, and a later copy must not replace an answer)."""

    outcomes: Mapping[str, Outcome]
    duplicates: int = 0


class _Lines:
    """Result lines read in order: the first outcome of each ``custom_id`` is kept."""

    __slots__ = ("duplicates", "outcomes")

    def __init__(self) -> None:
        self.outcomes: dict[str, Outcome] = {}
        self.duplicates = 0

    def add(self, custom_id: str, outcome: Outcome) -> None:
        if custom_id in self.outcomes:
            self.duplicates += 1
        else:
            self.outcomes[custom_id] = outcome

    def done(self) -> ResultFile:
        return ResultFile(outcomes=self.outcomes, duplicates=self.duplicates)


class BatchAPI(Protocol):
    """One provider's batch protocol. No method raises for a provider or network problem."""

    async def submit(
        self, job: str, lines: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> Result[str, JudgeError]:
        """Submit the requests ``(custom_id, body)`` as one batch; its provider id."""
        ...

    async def find(
        self, job: str, custom_ids: frozenset[str], known: set[str], since: float
    ) -> Result[Found, JudgeError]:
        """The provider batch made for ``job`` by a process that died before recording it:
        its id, ``None`` when there is none, or :data:`WAIT` when it cannot be told yet.
        ``since`` is when the job was prepared (Unix seconds): the listing is read back to
        it, however many batches were made since."""
        ...

    async def status(self, batch_id: str) -> Result[BatchStatus, JudgeError]:
        """The batch's current status."""
        ...

    async def results(self, status: BatchStatus) -> Result[ResultFile, JudgeError]:
        """Each answered ``custom_id`` 's outcome (an ended batch)."""
        ...


def _int_counts(raw: object) -> dict[str, int]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): v for k, v in raw.items() if isinstance(v, int) and not isinstance(v, bool)}


_OPENAI_ENDED: Final = frozenset({"completed", "failed", "expired", "cancelled"})
_OPENAI_UNANSWERED: Final = frozenset({"batch_expired", "batch_cancelled"})
# Listing pages read at most when looking for a batch (100 batches a page): a guard against a
# listing that never ends, far beyond how many batches an account makes while one is prepared.
_MAX_LIST_PAGES: Final = 10_000
# How far before the prepare time a listing is still read: the provider's clock and ours may
# disagree, and a batch missed here would be submitted twice.
_CLOCK_SLACK: Final = 3600.0


def _created(raw: Mapping[str, Any]) -> float | None:
    """A listed batch's creation time (Unix seconds: OpenAI's number, Anthropic's RFC 3339
    string), or ``None`` when it cannot be read."""
    value = raw.get("created_at")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


async def _listing(
    transport: HttpTransport, url: str, cursor: str, since: float,
) -> AsyncGenerator[Result[dict[str, Any], JudgeError]]:
    """The provider's batches, newest first, page by page (``cursor`` names the ``after``
    parameter), back to ``since`` less the clock slack; a failed page ends the listing."""
    after: str | None = None
    oldest = since - _CLOCK_SLACK
    for _ in range(_MAX_LIST_PAGES):
        query = "?limit=100" + (f"&{cursor}={after}" if after else "")
        page = (await transport.send("GET", f"{url}{query}")).bind(transport.json_object)
        if isinstance(page, Failure):
            yield page
            return
        body = page.unwrap()
        data = body.get("data")
        rows = [raw for raw in data if isinstance(raw, dict)] if isinstance(data, list) else []
        for raw in rows:
            created = _created(raw)
            if created is not None and created < oldest:
                return  # newest first: everything after this is older still
            yield Success(raw)
        last = as_str(body.get("last_id"))
        if not body.get("has_more") or last is None or last == after:
            return
        after = last


def _batch_id(provider: str, body: Mapping[str, Any]) -> Result[str, JudgeError]:
    """The id of the batch a provider's create call answered with."""
    batch_id = body.get("id")
    if isinstance(batch_id, str) and batch_id:
        return Success(batch_id)
    return Failure(JudgeError(kind="unknown", message=f"{provider} batch reply has no 'id'",
                              code="malformed_response", is_retryable=False))


@final
class OpenAIBatchAPI:
    """OpenAI's Batch API for ``/v1/chat/completions`` through an :class:`OpenAIChatModel`."""

    __slots__ = ("_chat", "_window", "_wire")

    def __init__(self, chat: OpenAIChatModel, *, completion_window: str = "24h") -> None:
        self._chat = chat
        self._wire = chat.transport
        self._window = completion_window

    async def submit(
        self, job: str, lines: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> Result[str, JudgeError]:
        base = self._chat.base_url
        content = "".join(
            json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
                        "body": body}, ensure_ascii=False) + "\n"
            for cid, body in lines
        ).encode()
        uploaded = await self._wire.send(
            "POST", f"{base}/files", data={"purpose": "batch"},
            files={"file": (f"{job}.jsonl", content, "application/jsonl")},
        )
        file_id = uploaded.bind(self._wire.json_object).map(lambda b: b.get("id"))
        if isinstance(file_id, Failure):
            return file_id
        created = await self._wire.send("POST", f"{base}/batches", json_body={
            "input_file_id": file_id.unwrap(), "endpoint": "/v1/chat/completions",
            "completion_window": self._window, "metadata": {"scorecore_job": job},
        })
        return created.bind(self._wire.json_object).bind(
            lambda b: _batch_id("openai", b))

    async def find(
        self, job: str, custom_ids: frozenset[str], known: set[str], since: float
    ) -> Result[Found, JudgeError]:
        del custom_ids, known  # the job id is in the batch's metadata
        listing = _listing(self._wire, f"{self._chat.base_url}/batches", "after", since)
        async with contextlib.aclosing(listing):
            async for listed in listing:
                if isinstance(listed, Failure):
                    return listed
                batch = listed.unwrap()
                meta = batch.get("metadata")
                if isinstance(meta, dict) and meta.get("scorecore_job") == job:
                    return Success(str(batch.get("id")))
        return Success(None)

    async def status(self, batch_id: str) -> Result[BatchStatus, JudgeError]:
        got = await self._wire.send("GET", f"{self._chat.base_url}/batches/{batch_id}")
        return got.bind(self._wire.json_object).map(
            lambda b: BatchStatus(batch_id=batch_id, status=str(b.get("status")),
                                  ended=b.get("status") in _OPENAI_ENDED, raw=b,
                                  counts=_int_counts(b.get("request_counts"))))

    async def _file(self, file_id: object) -> Result[str, JudgeError]:
        if not isinstance(file_id, str) or not file_id:
            return Success("")
        got = await self._wire.send("GET", f"{self._chat.base_url}/files/{file_id}/content")
        return got.map(lambda r: r.text)

    async def results(self, status: BatchStatus) -> Result[ResultFile, JudgeError]:
        out = _Lines()
        if status.status == "failed":
            # The input was refused as a whole (validation): nothing ran, nothing will.
            errors = status.raw.get("errors")
            data = errors.get("data") if isinstance(errors, dict) else None
            first = data[0] if isinstance(data, list) and data else {}
            refused: Outcome = ("errored", {"status": 400, "body": {"error": first}})
            return Success(ResultFile(outcomes={"*": refused}))
        # The output file first: a custom_id in both files keeps its answer.
        for name in ("output_file_id", "error_file_id"):
            text = await self._file(status.raw.get(name))
            if isinstance(text, Failure):
                return text
            for raw, line in jsonl_lines(text.unwrap()):
                cid = line.get("custom_id") if line is not None else None
                if isinstance(cid, str) and line is not None:
                    out.add(cid, _openai_outcome(line, raw))
        return Success(out.done())


def _openai_outcome(line: Mapping[str, Any], raw: str) -> Outcome:
    response = line.get("response")
    error = line.get("error")
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        code = response["status_code"]
        state: RequestState = "answered" if 200 <= code < 300 else "errored"
        return state, {"status": code, "body": response.get("body")}
    if isinstance(error, dict):
        if error.get("code") in _OPENAI_UNANSWERED:
            return "unanswered", {"reason": str(error.get("code"))}
        return "errored", {"error": error}
    return "answered", {"raw": raw}


# Anthropic's error types and the HTTP status each stands for (its errors page).
_ANTHROPIC_STATUS: Final[Mapping[str, int]] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


@final
class AnthropicBatchAPI:
    """Anthropic's Message Batches through an :class:`AnthropicModel`."""

    __slots__ = ("_model", "_wire")

    def __init__(self, model: AnthropicModel) -> None:
        self._model = model
        self._wire = model.transport

    @property
    def _root(self) -> str:
        return f"{self._model.base_url}/v1/messages/batches"

    async def submit(
        self, job: str, lines: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> Result[str, JudgeError]:
        del job  # custom_ids carry it
        created = await self._wire.send("POST", self._root, json_body={
            "requests": [{"custom_id": cid, "params": body} for cid, body in lines],
        })
        return created.bind(self._wire.json_object).bind(
            lambda b: _batch_id("anthropic", b))

    async def find(
        self, job: str, custom_ids: frozenset[str], known: set[str], since: float
    ) -> Result[Found, JudgeError]:
        del job
        waiting = False
        listing = _listing(self._wire, self._root, "after_id", since)
        async with contextlib.aclosing(listing):
            async for listed in listing:
                if isinstance(listed, Failure):
                    return listed
                raw = listed.unwrap()
                if raw.get("id") in known:
                    continue
                status = _anthropic_status(raw)
                if not status.ended:
                    waiting = True  # could be ours: its results will tell
                    continue
                results = await self.results(status)
                if isinstance(results, Failure):
                    return results
                if custom_ids & set(results.unwrap().outcomes):
                    return Success(status.batch_id)
        return Success(WAIT if waiting else None)

    async def status(self, batch_id: str) -> Result[BatchStatus, JudgeError]:
        got = await self._wire.send("GET", f"{self._root}/{batch_id}")
        return got.bind(self._wire.json_object).map(_anthropic_status)

    async def results(self, status: BatchStatus) -> Result[ResultFile, JudgeError]:
        url = status.raw.get("results_url")
        if not isinstance(url, str) or not url:
            url = f"{self._root}/{status.batch_id}/results"
        got = await self._wire.send("GET", url)
        if isinstance(got, Failure):
            return got
        out = _Lines()
        for raw, line in jsonl_lines(got.unwrap().text):
            cid = line.get("custom_id") if line is not None else None
            if isinstance(cid, str) and line is not None:
                out.add(cid, _anthropic_outcome(line.get("result"), raw))
        return Success(out.done())


def _anthropic_status(raw: Mapping[str, Any]) -> BatchStatus:
    status = str(raw.get("processing_status"))
    return BatchStatus(batch_id=str(raw.get("id")), status=status, ended=status == "ended",
                       raw=raw, counts=_int_counts(raw.get("request_counts")))


def _anthropic_outcome(result: object, raw: str) -> Outcome:
    if not isinstance(result, dict):
        return "answered", {"raw": raw}
    kind = result.get("type")
    if kind == "succeeded":
        return "answered", {"status": 200, "body": result.get("message")}
    if kind == "errored":
        error = result.get("error")
        inner = error.get("error") if isinstance(error, dict) else None
        type_ = inner.get("type") if isinstance(inner, dict) else None
        return "errored", {"status": _ANTHROPIC_STATUS.get(str(type_), 500), "body": error}
    if kind in ("canceled", "expired"):
        return "unanswered", {"reason": str(kind)}
    return "answered", {"raw": raw}
