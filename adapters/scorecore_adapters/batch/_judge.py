"""The batch judge: requests from concurrent runs become one provider batch, journalled first.

Each ``generate`` call is one request. It is answered from the journal when an earlier process
already has its answer, attached to its batch when that batch is still running, and otherwise
queued. The queue is submitted as one batch when it holds ``max_batch_size`` requests, or when
``max_wait`` seconds have passed since its first request. Whoever is waiting polls the batch
(one poller at a time), and the results are journalled before anyone is answered.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, final

import anyio
import attrs
from returns.result import Failure, Result, Success

from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse
from scorecore.judge.economics import current_cache_key
from scorecore.validators import is_int, is_number, misuse
from scorecore_adapters import _guard
from scorecore_adapters._http.judge import HttpJudgeBase
from scorecore_adapters._http.scrub import redact
from scorecore_adapters.batch._api import WAIT, BatchAPI, BatchStatus, Outcome
from scorecore_adapters.batch._journal import BatchJournal, JournalRequest, warn_journal

__all__ = ["BatchJudgeBase", "BatchProgress"]

# A request expired or cancelled this many times in a row fails instead of going round again.
_MAX_RESUBMITS: Final = 3
# Status reads that fail in a row before the waiting runs are told (the journal keeps the
# batch; a later process resumes it).
_MAX_POLL_FAILURES: Final = 5
# The status of a batch the provider does not have.
_NOT_FOUND: Final = 404
# How often the collector looks at the queue while it waits for max_wait.
_TICK: Final = 1.0


@final
@attrs.frozen(kw_only=True)
class BatchProgress:
    """What a batch judge has done in this process.

    Attributes:
        batches_submitted: provider batches this process created.
        batches_in_progress: batches (created here or resumed) still running.
        batches_done: batches whose results were collected.
        requests_submitted: requests sent in the batches this process created.
        requests_answered: requests answered (succeeded or errored) from collected results.
        requests_resumed: requests answered from a batch an earlier process submitted, or
            from answers an earlier process collected (never submitted again).
        requests_resubmitted: requests sent again because their batch expired or was
            cancelled before answering them.
        duplicate_results: result lines ignored because they repeated a ``custom_id`` whose
            line came earlier in the results (the first line is kept).
        batches_not_found: journalled batches the provider answered 404 for (it has no such
            batch, so none of their requests ran): their requests were submitted again.
    """

    batches_submitted: int = 0
    batches_in_progress: int = 0
    batches_done: int = 0
    requests_submitted: int = 0
    requests_answered: int = 0
    requests_resumed: int = 0
    requests_resubmitted: int = 0
    duplicate_results: int = 0
    batches_not_found: int = 0

    def counts(self) -> dict[str, int]:
        """The figures by name (to sum several judges')."""
        return {f.name: getattr(self, f.name) for f in attrs.fields(BatchProgress)}

    def describe(self) -> str:
        """One line for a progress display."""
        return (f"batches: {self.batches_submitted} submitted, {self.batches_in_progress} in "
                f"progress, {self.batches_done} done; requests: {self.requests_submitted} "
                f"submitted, {self.requests_answered} answered, {self.requests_resumed} resumed, "
                f"{self.requests_resubmitted} resubmitted"
                + (f"; {self.duplicate_results} duplicate result line(s) ignored"
                   if self.duplicate_results else "")
                + (f"; {self.batches_not_found} not found at the provider (resubmitted)"
                   if self.batches_not_found else ""))


@attrs.define(eq=False)
class _Waiter:
    key: str
    body: Mapping[str, Any]
    resubmit_of: str | None
    custom_id: str | None = None
    job: _Job | None = None
    outcome: Outcome | None = None
    failure: JudgeError | None = None


@attrs.define(eq=False)
class _Job:
    job: str
    batch_id: str | None
    waiters: dict[str, _Waiter] = attrs.field(factory=dict)
    polling: bool = False
    submitting: bool = False
    ended: bool = False
    failure: JudgeError | None = None
    poll_failures: int = 0


class _Signal:
    """A re-armable event: ``wait`` returns at the next ``fire``."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: anyio.Event | None = None

    async def wait(self) -> None:
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()

    def fire(self) -> None:
        event, self._event = self._event, None
        if event is not None:
            event.set()


def _check_positive(owner: str, name: str, value: object, *, integer: bool) -> None:
    ok = is_int(value) if integer else is_number(value)
    if not ok or value <= 0:  # type: ignore[operator]
        kind = "an int" if integer else "a number of seconds"
        raise misuse(f"{owner}.{name}", value, f"must be {kind} > 0")


async def _anyio_sleep(seconds: float) -> None:
    await anyio.sleep(seconds)


class BatchJudgeBase:
    """What the batch judges share: the queue, the journal, submission and polling.

    A subclass gives the synchronous model it builds bodies and reads replies with
    (:attr:`_model`) and the provider's batch protocol (:attr:`_api`).
    """

    __slots__ = (
        "_api", "_clock", "_collecting", "_counts", "_delivered", "_jobs", "_journal",
        "_max_batch_size", "_max_wait", "_model", "_new_id", "_occurrences", "_on_change",
        "_owns_journal", "_poll_interval", "_queue", "_ready", "_recovered", "_recovering",
        "_signal", "_sleep",
    )

    def __init__(
        self,
        *,
        model: HttpJudgeBase,
        api: BatchAPI,
        journal: BatchJournal | str,
        max_batch_size: int,
        max_wait: float,
        poll_interval: float,
        clock: Callable[[], float] | None,
        sleep: Callable[[float], Awaitable[None]] | None,
        new_id: Callable[[], str] | None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        owner = type(self).__name__
        _check_positive(owner, "max_batch_size", max_batch_size, integer=True)
        _check_positive(owner, "max_wait", max_wait, integer=False)
        _check_positive(owner, "poll_interval", poll_interval, integer=False)
        if not isinstance(journal, BatchJournal | str):
            raise misuse(f"{owner}.journal", journal,
                         "must be a BatchJournal or the path of a SQLite file")
        self._model = model
        self._api = api
        self._owns_journal = not isinstance(journal, BatchJournal)
        self._journal = journal if isinstance(journal, BatchJournal) else BatchJournal(journal)
        self._max_batch_size = max_batch_size
        self._max_wait = float(max_wait)
        self._poll_interval = float(poll_interval)
        self._clock = clock or time.monotonic
        self._sleep = sleep or _anyio_sleep
        self._new_id = new_id or (lambda: uuid.uuid4().hex[:20])
        self._on_change = on_change
        self._queue: list[_Waiter] = []
        self._jobs: dict[str, _Job] = {}
        self._delivered: set[str] = set()
        self._occurrences: dict[str, int] = {}
        self._collecting = False
        self._recovered = False
        self._recovering = False
        self._signal = _Signal()
        self._ready = _Signal()
        self._counts: dict[str, int] = dict.fromkeys((
            f.name for f in attrs.fields(BatchProgress) if f.name != "batches_in_progress"), 0)

    # -- the JudgeModel surface --------------------------------------------------------------

    @property
    def model_id(self) -> str:
        """The model name sent to the provider."""
        return self._model.model_id

    @property
    def provider(self) -> str:
        """The provider (``"openai"`` or ``"anthropic"``)."""
        return self._model.provider

    @property
    def supports_structured_output(self) -> bool:
        """Whether native schemas are used (as the synchronous judge)."""
        return self._model.supports_structured_output

    @property
    def cache_identity(self) -> str:
        """The synchronous judge's: a batch answer and a direct one share cache entries."""
        return self._model.cache_identity

    @property
    def batch_api(self) -> bool:
        """Always ``True``: calls are priced at the model's batch price (see ``Pricing``)."""
        return True

    @property
    def journal(self) -> BatchJournal:
        """Where submitted requests are journalled."""
        return self._journal

    def progress(self) -> BatchProgress:
        """What this judge has done so far in this process."""
        running = sum(1 for job in self._jobs.values() if not job.ended)
        return BatchProgress(batches_in_progress=running, **self._counts)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self._model!r}, journal={self._journal!r}, "
                f"max_batch_size={self._max_batch_size}, max_wait={self._max_wait:g})")

    async def aclose(self) -> None:
        """Close the HTTP client the model made and the journal this judge opened."""
        await self._model.aclose()
        if self._owns_journal:
            self._journal.close()

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        """Answer ``request`` through the provider's batch API (or the journal)."""
        refused = _guard.refusal(self.model_id, self.provider)
        if refused is not None:
            return Failure(refused)
        busy = self._journal.claim()
        if busy is not None:
            # Another process writes this journal: resuming it too would submit its prepared
            # batches twice. Nothing is sent.
            return Failure(JudgeError(kind="bad_request", code="journal_in_use", message=busy,
                                      is_retryable=False))
        await self._recover()
        body = self._model.build_body(request)
        key = current_cache_key() or self._fingerprint(body)
        resubmit_of: str | None = None
        for _ in range(_MAX_RESUBMITS + 1):
            row = self._journal.latest(key)
            if row is not None and row.custom_id not in self._delivered:
                if row.state in ("answered", "errored"):
                    self._delivered.add(row.custom_id)
                    self._counts["requests_resumed"] += 1
                    return self._read(request, row.state, row.outcome or {})
                if row.state == "pending":
                    self._counts["requests_resumed"] += 1  # an earlier process submitted it
                    outcome = await self._attend(self._attach(row))
                    if outcome is None or isinstance(outcome, JudgeError):
                        return self._give(request, outcome)
                    self._delivered.add(row.custom_id)
                    if outcome[0] != "unanswered":
                        return self._read(request, *outcome)
                    resubmit_of = row.custom_id
                    continue
                if row.state == "unanswered":
                    resubmit_of = row.custom_id
            waiter = _Waiter(key=key, body=body, resubmit_of=resubmit_of)
            self._queue.append(waiter)
            if resubmit_of is not None:
                self._counts["requests_resubmitted"] += 1
            outcome = await self._attend(waiter)
            if outcome is None or isinstance(outcome, JudgeError):
                # No outcome (the batch could not be submitted or read): a later call for
                # the same request rejoins its batch, if it has one.
                return self._give(request, outcome)
            if waiter.custom_id is not None:
                self._delivered.add(waiter.custom_id)
            if outcome[0] != "unanswered":
                return self._read(request, *outcome)
            resubmit_of = waiter.custom_id
        return Failure(JudgeError(
            kind="timeout", code="batch_unanswered", is_retryable=False,
            message=f"{self.provider} batch API left the request unanswered "
                    f"{_MAX_RESUBMITS + 1} times (expired or cancelled batches)",
        ))

    def _give(self, request: JudgeRequest, failure: JudgeError | None) -> Result[
            JudgeResponse, JudgeError]:
        del request
        return Failure(failure or JudgeError(kind="unknown", message="batch request lost"))

    def _fingerprint(self, body: Mapping[str, Any]) -> str:
        """A key for a call made without a cache (no cache key): the body and how many times
        this process has asked it."""
        text = json.dumps([self.provider, self.cache_identity, body], sort_keys=True,
                          ensure_ascii=False, default=repr)
        digest = hashlib.sha256(text.encode()).hexdigest()
        n = self._occurrences.get(digest, 0)
        self._occurrences[digest] = n + 1
        return f"body:{digest}:{n}"

    # -- reading an outcome ------------------------------------------------------------------

    def _read(
        self, request: JudgeRequest, state: str, value: Mapping[str, Any]
    ) -> Result[JudgeResponse, JudgeError]:
        secrets = self._model.transport.secrets(request)
        if "raw" in value:  # a result line that is not the protocol's: a format failure
            return Success(JudgeResponse(text=redact(str(value["raw"]), secrets)))
        if "error" in value:
            error = value["error"] if isinstance(value["error"], Mapping) else {}
            return Failure(JudgeError(
                kind="bad_request" if state == "errored" else "unknown",
                code=None if error.get("code") is None else redact(str(error["code"]), secrets),
                message=redact(f"{self.provider} batch request failed: "
                               f"{error.get('message', '')}", secrets),
                is_retryable=False,
            ))
        status = value.get("status")
        result = self._model.read_reply(
            request, value.get("body"), status=status if is_int(status) else 200)
        if isinstance(result, Failure) and result.failure().code == "malformed_response":
            # The line said "succeeded" but its reply is not one: a format failure of this
            # request alone, reported with the raw text.
            raw = json.dumps(value.get("body"), ensure_ascii=False, default=repr)
            return Success(JudgeResponse(text=redact(raw, secrets)))
        return result

    # -- recovery ----------------------------------------------------------------------------

    async def _recover(self) -> None:
        """Once per process: settle the batches an earlier process journalled but may not
        have submitted (``prepared``)."""
        while not self._recovered:
            if self._recovering:
                await self._ready.wait()
                continue
            self._recovering = True
            try:
                prepared = self._journal.batches(
                    states=("prepared",), provider=self.provider,
                    base_url=self._model.base_url, model=self.model_id)
                for batch in prepared:
                    job = _Job(job=batch.job, batch_id=None)
                    self._jobs[batch.job] = job
                    await self._resolve(job)
                self._recovered = True
            finally:
                self._recovering = False
                self._ready.fire()

    async def _resolve(self, job: _Job) -> None:
        """A ``prepared`` job: adopt the provider batch made for it, or submit it now."""
        rows = self._journal.requests_of(job.job)
        ids = frozenset(row.custom_id for row in rows)
        known = self._journal.provider_batch_ids(provider=self.provider,
                                                 base_url=self._model.base_url)
        journalled = self._journal.batch(job.job)
        since = 0.0 if journalled is None else journalled.created_at
        while True:
            found = await self._api.find(job.job, ids, known, since)
            if isinstance(found, Failure):
                job.failure = found.failure()
                return
            value = found.unwrap()
            if value != WAIT:
                break
            await self._sleep(self._poll_interval)
        if value is not None:
            job.batch_id = value
            self._journal.record(job.job, value)
            return
        await self._submit(job, [(row.custom_id, row.body) for row in rows])

    # -- collecting and submitting -----------------------------------------------------------

    def _attach(self, row: JournalRequest) -> _Waiter:
        job = self._jobs.get(row.job)
        if job is None:
            batch = self._journal.batch(row.job)
            job = self._jobs[row.job] = _Job(
                job=row.job, batch_id=None if batch is None else batch.provider_batch_id)
        if job.failure is not None and not job.ended:
            # Its status could not be read for a while: a new request for it tries again.
            job.failure = None
            job.poll_failures = 0
        waiter = job.waiters.get(row.custom_id)
        if waiter is None:
            waiter = job.waiters[row.custom_id] = _Waiter(
                key=row.key, body=row.body, resubmit_of=row.resubmit_of,
                custom_id=row.custom_id, job=job)
        return waiter

    async def _attend(self, waiter: _Waiter) -> Outcome | JudgeError | None:
        """Wait for ``waiter`` 's outcome, collecting, submitting and polling in turn."""
        while waiter.job is None:
            if len(self._queue) >= self._max_batch_size:
                await self._flush()
            elif not self._collecting:
                await self._collect()
            else:
                await self._signal.wait()
        job = waiter.job
        while waiter.outcome is None and job.failure is None:
            if job.polling or job.submitting:
                await self._signal.wait()
                continue
            job.polling = True
            try:
                await self._poll(job)
            finally:
                job.polling = False
                self._signal.fire()
        if waiter.outcome is not None:
            return waiter.outcome
        return job.failure

    async def _collect(self) -> None:
        self._collecting = True
        try:
            deadline = self._clock() + self._max_wait
            while self._queue and len(self._queue) < self._max_batch_size:
                left = deadline - self._clock()
                if left <= 0:
                    break
                await self._sleep(min(_TICK, left))
            if self._queue:
                await self._flush()
        finally:
            self._collecting = False
            self._signal.fire()

    async def _flush(self) -> None:
        taken, self._queue = (self._queue[: self._max_batch_size],
                              self._queue[self._max_batch_size:])
        if not taken:
            return
        name = f"scb_{self._new_id()}"
        job = self._jobs[name] = _Job(job=name, batch_id=None)
        lines = []
        for i, waiter in enumerate(taken):
            waiter.custom_id = f"{name}-{i}"
            waiter.job = job
            job.waiters[waiter.custom_id] = waiter
            lines.append((waiter.custom_id, waiter.body))
        # Journalled before anything is sent: a kill from here on finds the job "prepared".
        self._journal.prepare(
            name, provider=self.provider, base_url=self._model.base_url, model=self.model_id,
            requests=[(w.custom_id or "", w.key, w.body, w.resubmit_of) for w in taken])
        self._signal.fire()
        await self._submit(job, lines)

    async def _submit(self, job: _Job, lines: list[tuple[str, Mapping[str, Any]]]) -> None:
        # Nobody polls (or looks the batch up) while it is being created.
        job.submitting = True
        try:
            submitted = await self._api.submit(job.job, lines)
        finally:
            job.submitting = False
            self._signal.fire()
        if isinstance(submitted, Success):
            job.batch_id = submitted.unwrap()
            self._journal.record(job.job, job.batch_id)
            self._counts["batches_submitted"] += 1
            self._counts["requests_submitted"] += len(lines)
            if self._on_change is not None:
                self._on_change()
            return
        error = submitted.failure()
        if error.status is None:
            # No answer (a timeout, a dropped connection): the batch may exist. It stays
            # "prepared"; the next process (or the next recovery) asks the provider.
            job.failure = error
            return
        # The provider answered with an error: it created nothing. The requests fail with
        # that error (a 429 is retried by the run's retry policy, in a later batch).
        self._journal.refuse(job.job, {"status": error.status, "code": error.code,
                                       "message": error.message})
        job.failure = error
        job.ended = True

    # -- polling -----------------------------------------------------------------------------

    async def _poll(self, job: _Job) -> None:
        if job.batch_id is None:
            await self._resolve(job)
            if job.batch_id is None:
                return
        await self._sleep(self._poll_interval)
        status = await self._api.status(job.batch_id)
        if isinstance(status, Failure) and status.failure().status == _NOT_FOUND:
            self._not_found(job, job.batch_id)
            return
        if isinstance(status, Failure):
            job.poll_failures += 1
            if job.poll_failures >= _MAX_POLL_FAILURES:
                job.failure = status.failure()
            return
        job.poll_failures = 0
        current = status.unwrap()
        self._journal.note(job.job, status=current.status)
        if current.ended:
            await self._collect_results(job, current)

    def _not_found(self, job: _Job, batch_id: str) -> None:
        """The provider has no batch ``batch_id`` (a 404: deleted, or never kept): none of its
        requests ran, so they end ``unanswered`` and go into a new batch, as an expired
        batch's do — rather than failing every later resume."""
        reason = (f"{self.provider} has no batch {batch_id} (HTTP 404): its requests never "
                  "ran there and are submitted again")
        self._journal.finish(job.job, status="not_found", outcomes={}, unanswered=reason)
        self._journal.note(job.job, note=reason)
        job.ended = True
        self._counts["batches_not_found"] += 1
        warn_journal(f"batch journal {self._journal.path}: {reason}")
        for waiter in job.waiters.values():
            waiter.outcome = ("unanswered", {"reason": reason})

    def _scrubbed(self, outcome: Outcome) -> Outcome:
        """An outcome without the model's secrets (a provider may echo the key into an error
        or a reply), as it is journalled."""
        secrets = self._model.transport.secrets()
        text = json.dumps(outcome[1], ensure_ascii=False, default=repr)
        clean = redact(text, secrets)
        if clean == text:
            return outcome
        try:
            return outcome[0], json.loads(clean)
        except ValueError:  # a secret spanning JSON syntax: keep nothing of the line
            return outcome[0], {"raw": "[REDACTED]"}

    async def _collect_results(self, job: _Job, status: BatchStatus) -> None:
        found = await self._api.results(status)
        if isinstance(found, Failure):
            job.poll_failures += 1
            if job.poll_failures >= _MAX_POLL_FAILURES:
                job.failure = found.failure()
            return
        results = found.unwrap()
        outcomes = results.outcomes
        rows = self._journal.requests_of(job.job)
        if "*" in outcomes:  # the whole batch was refused
            outcomes = {row.custom_id: outcomes["*"] for row in rows}
        mine = {row.custom_id: self._scrubbed(outcomes[row.custom_id])
                for row in rows if row.custom_id in outcomes}
        self._journal.finish(job.job, status=status.status, outcomes=mine)
        if results.duplicates:
            self._journal.note(job.job, note=f"{results.duplicates} duplicate result line(s) "
                                             "ignored (the first line of each custom_id kept)")
        job.ended = True
        self._counts["batches_done"] += 1
        self._counts["duplicate_results"] += results.duplicates
        self._counts["requests_answered"] += sum(
            1 for state, _ in mine.values() if state != "unanswered")
        if self._on_change is not None:
            self._on_change()
        unanswered: Outcome = ("unanswered", {"reason": status.status})
        for row in rows:
            waiter = job.waiters.get(row.custom_id)
            if waiter is not None:
                waiter.outcome = mine.get(row.custom_id, unanswered)
