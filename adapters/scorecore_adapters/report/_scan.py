"""Building the report from a batch's rows read a page at a time, in memory flat in the batch.

:class:`ReportBuild` hands its caller the scans it needs, one after the other
(:meth:`ReportBuild.scans`); the caller feeds each the batch's rows in the store's order, page
by page, from a list or from a store's cursor. The first scan folds everything the page's
tables show (:class:`Digest`) and writes the items' data (JSON) to spooled files as it goes;
the data is then packed (gzip, base64) into another. More scans come only when needed: scores
outside ``[0, 1]`` (their histogram's range is known at the end), data over the size budget
(the texts are cut and the data written again), or a batch whose items are not consecutive in
its order.

What is held beyond a page is bounded by the batch's kinds, not its size: per scorer counts,
the distinct causes and not-scorable reasons, a histogram of text lengths, and the rows of the
item being read. A batch in the stores' order (by dataset position) has each item's rows
together, so an item's place in the data is a counter; :class:`ReportBuild` checks that from
the 8-byte hashes of the item and run ids, and otherwise scans again with a map of the items
(memory then grows with the items, as it did before).
"""

from __future__ import annotations

import base64
import itertools
import json
import tempfile
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import IO, Any, Final, Protocol, final

from scorecore.evals import EvalReport, ItemResult, LabelValue, ScoreRow, Threshold
from scorecore.evals.engine import ReportFold, TrustFold
from scorecore.evals.results import CascadeSummary, PairwiseSummary, PanelAgreement, ScorerOutcome
from scorecore.evals.store import row_item_id
from scorecore_adapters.report._causes import FailureCause, FailureTally, cause_of_row
from scorecore_adapters.report._charts import BINS, bin_of, bounds
from scorecore_adapters.report._data import (
    DEFAULT_BUDGET,
    MAX_TEXT,
    STATUS,
    Cutter,
    ScorerStats,
    fitting_limit,
    item_data,
    row_data,
)
from scorecore_adapters.report._text import clean_json

__all__ = ["Digest", "ReportBuild", "Scan"]

_SPOOL: Final = 1 << 20
"""Bytes a spooled file keeps in memory before it moves to disk."""
_CHUNK: Final = 3 << 16
"""Bytes packed into base64 at a time (a multiple of 3: no padding inside)."""
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                                  default=str).encode


class Scan(Protocol):
    """One read of the batch: its rows, in order, a page at a time, then :meth:`end`."""

    def add(self, page: Sequence[ScoreRow]) -> None:
        """Take the next page of rows."""

    def end(self) -> None:
        """The batch was read to its end."""


def _spool(spools: list[IO[bytes]]) -> IO[bytes]:
    """A new spooled file, noted in ``spools`` (its owner closes them all)."""
    made = tempfile.SpooledTemporaryFile(max_size=_SPOOL)  # noqa: SIM115 - closed by its owner
    spools.append(made)
    return made


@final
class Digest:
    """What the page's tables show, folded from a batch's rows as they come."""

    def __init__(
        self, scorer_ids: Sequence[str], thresholds: Mapping[str, Threshold], *,
        max_failures: int | None, max_failure_rate: float | None,
    ) -> None:
        self.scorer_ids = tuple(scorer_ids)
        self.thresholds = thresholds
        self.batch_id = ""
        self.rows = 0
        self.items = 0
        self._counts = {sid: [0, 0, 0] for sid in scorer_ids}
        self._range: dict[str, tuple[float, float]] = {}
        self._bins = {sid: [0] * BINS for sid in scorer_ids}
        self._nonfinite: dict[str, list[float]] = {}
        self.reasons: dict[tuple[str, str], int] = {}
        self.tally = FailureTally()
        self.trust = TrustFold()
        self._fold = ReportFold(scorer_ids, thresholds=thresholds, max_failures=max_failures,
                                max_failure_rate=max_failure_rate)
        self._runs = 0

    def add_row(self, row: ScoreRow, key: str, cause: FailureCause | None) -> None:
        """Count one row (of item ``key``)."""
        if not self.rows:
            self.batch_id = row.batch_id
        self.rows += 1
        sid = row.scorer_id
        self._counts[sid][STATUS.get(row.status, 2)] += 1
        score = row.score
        if row.status == "scored" and score is not None:
            low, high = self._range.get(sid, (score, score))
            self._range[sid] = (min(low, score), max(high, score))
            # Binned as the range usually is, [0, 1]; another range is binned again at the end.
            self._bins[sid][bin_of(min(max(score, 0.0), 1.0), 0.0, 1.0)] += 1
            if score - score != 0:  # inf or nan: not in the fold's exact sum
                self._nonfinite.setdefault(sid, []).append(score)
        elif row.status == "not_scorable":
            reason = (sid, row.reason or "(no reason given)")
            self.reasons[reason] = self.reasons.get(reason, 0) + 1
        if cause is not None:
            self.tally.add(sid, key, cause)
        self.trust.add_row(row)

    def add_run(self, run_id: str, outcomes: Sequence[ScorerOutcome]) -> None:
        """Count one run (all its outcomes): an item of the verdict, as ``run_evals`` counts."""
        self._fold.add(ItemResult(index=self._runs, item_id=None, run_id=run_id, item=None,
                                  outcomes=tuple(outcomes)))
        self._runs += 1

    def rebinned(self) -> frozenset[str]:
        """The scorers whose scores leave ``[0, 1]``: their histogram needs another scan."""
        return frozenset(sid for sid, (low, high) in self._range.items()
                         if bounds(low, high) != (0.0, 1.0))

    def rebin(self, sid: str, bins: list[int]) -> None:
        """Set ``sid``'s histogram, binned over its own range."""
        self._bins[sid] = bins

    def histogram_range(self, sid: str) -> tuple[float, float]:
        """The range ``sid``'s histogram shows."""
        low, high = self._range.get(sid, (None, None))
        return bounds(low, high)

    def verdict(self) -> EvalReport:
        """The report ``run_evals``'s fold gives for these rows (see ``batch_verdict``)."""
        return self._fold.report(batch_id=self.batch_id, duration=0.0)

    def stats(self) -> list[ScorerStats]:
        """Per scorer (by id): its mean, histogram and status counts."""
        means = {s.scorer_id: s.mean for s in self.verdict().scorers}
        found = []
        for sid in self.scorer_ids:
            scored, not_scorable, failed = self._counts[sid]
            mean = means[sid]
            if sid in self._nonfinite:  # statistics.mean's answer: inf, -inf or nan
                mean = sum(self._nonfinite[sid])
            low, high = self.histogram_range(sid)
            found.append(ScorerStats(
                scorer_id=sid, mean=mean, histogram=(low, high, tuple(self._bins[sid])),
                scored=scored, not_scorable=not_scorable, failed=failed,
                threshold=self.thresholds.get(sid)))
        return found

    def not_scorable_reasons(self) -> list[tuple[str, str, int]]:
        """``(scorer id, reason, count)`` of the not-scorable rows, most frequent first."""
        return sorted(((s, r, n) for (s, r), n in self.reasons.items()),
                      key=lambda t: (-t[2], t[0], t[1]))

    def panels(self) -> tuple[PanelAgreement, ...]:
        """Each panel's agreement."""
        return self.trust.panels()

    def pairwise(self) -> tuple[PairwiseSummary, ...]:
        """Each pairwise scorer's summary."""
        return self.trust.pairwise()

    def cascades(
        self, labels: Mapping[str, LabelValue] | None, marks: Mapping[str, float]
    ) -> list[CascadeSummary]:
        """Each cascade's tiers, each at its scorer's pass mark (0.5 without one)."""
        by_mark: dict[float, dict[str, CascadeSummary]] = {}
        found = []
        for sid in self.scorer_ids:
            mark = marks.get(sid, 0.5)
            if mark not in by_mark:
                by_mark[mark] = {c.scorer_id: c for c in self.trust.cascades(labels,
                                                                            threshold=mark)}
            if sid in by_mark[mark]:
                found.append(by_mark[mark][sid])
        return found


def _outcome(row: ScoreRow) -> ScorerOutcome:
    scored = row.status == "scored"
    return ScorerOutcome(scorer_id=row.scorer_id,
                         status=row.status if row.status in STATUS else "failed",
                         score=row.score if scored else None,
                         not_scorable_kind=row.not_scorable_kind())


@final
class _Entries:
    """A JSON list's entries, without its brackets, written to a file a batch at a time (one
    encoder call per batch, not per entry)."""

    _BATCH: Final = 256

    def __init__(self, to: IO[bytes]) -> None:
        self._to = to
        self._batch: list[Any] = []
        self.chars = 0
        """Characters of JSON written."""

    def add(self, entry: Any) -> None:
        self._batch.append(entry)
        if len(self._batch) >= self._BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self._batch:
            return
        text = _ENCODE(self._batch)[1:-1]
        if self.chars:
            text = "," + text
        self.chars += len(text)
        self._to.write(clean_json(text).encode("utf-8"))
        self._batch = []

    def done(self) -> IO[bytes]:
        """The file, every entry written."""
        self._flush()
        return self._to


@final
class _Data:
    """The page's data, ``{"scorers", "causes", "items", "rows"}``, its items and rows written
    as JSON to spooled files as they come."""

    def __init__(self, scorer_ids: Sequence[str], limit: int,
                 baseline: Mapping[tuple[str, str], float | None],
                 spools: list[IO[bytes]]) -> None:
        self.scorer_ids = list(scorer_ids)
        self._scorer_index = {sid: i for i, sid in enumerate(scorer_ids)}
        self.cut = Cutter(limit)
        # What people drill into: the items with a failed or not-scorable run keep their values
        # whole (up to MAX_TEXT); the limit fitted to the budget cuts the others.
        self._whole = Cutter(MAX_TEXT)
        self._baseline = baseline
        self.causes: list[list[Any]] = []
        self._cause_index: dict[FailureCause, int] = {}
        self.items = 0
        self.chars = 0
        self._spools = spools
        self._items = _Entries(_spool(spools))
        self._rows = _Entries(_spool(spools))

    def add_item(
        self, key: str, rows: Sequence[ScoreRow], causes: Sequence[FailureCause | None], *,
        position: int, new: bool, troubled: bool,
    ) -> None:
        """An item's consecutive rows (its entry too when ``new``)."""
        cut = self._whole if troubled else self.cut
        if new:
            self._items.add(item_data(key, rows[0], cut))
            self.items += 1
        for row, cause in zip(rows, causes, strict=True):
            cause_at = -1
            if cause is not None:
                cause_at = self._cause_index.get(cause, -1)
                if cause_at < 0:
                    cause_at = self._cause_index[cause] = len(self.causes)
                    # The cause is never cut (the core bounds it to ~1,000 characters).
                    self.causes.append([cause.kind, cause.step or "", cause.message])
            base = self._baseline.get((row.scorer_id, key), "")
            self._rows.add(row_data(row, cut, position=position,
                                                  scorer=self._scorer_index[row.scorer_id],
                                                  cause=cause_at, base=base))

    def pack(self) -> IO[bytes]:
        """The data as gzip-compressed JSON (``mtime`` 0: the same rows give the same bytes),
        in a spooled file."""
        head = _ENCODE({"scorers": self.scorer_ids, "causes": self.causes})[:-1]
        parts: list[bytes | IO[bytes]] = [clean_json(head + ',"items":[').encode("utf-8"),
                                          self._items.done(), b'],"rows":[', self._rows.done(),
                                          b"]}"]
        self.chars += (self._items.chars + self._rows.chars + len(head) + len(',"items":[')
                       + len('],"rows":[') + len("]}"))
        packer = zlib.compressobj(6, zlib.DEFLATED, 31)
        out = _spool(self._spools)
        for part in parts:
            if isinstance(part, bytes):
                out.write(packer.compress(part))
                continue
            part.seek(0)
            while chunk := part.read(_CHUNK):
                out.write(packer.compress(chunk))
            part.close()
        out.write(packer.flush())
        return out


def packed_size(packed: IO[bytes]) -> int:
    """Characters of ``packed`` in base64."""
    return 4 * ((packed.tell() + 2) // 3)


def write_base64(packed: IO[bytes], out: IO[str]) -> None:
    """``packed`` in base64 into ``out``, a chunk at a time."""
    packed.seek(0)
    while chunk := packed.read(_CHUNK):
        out.write(base64.b64encode(chunk).decode("ascii"))


@final
class _Read:
    """One scan's reading: rows grouped by consecutive item (and run), each group handed to the
    data (and the digest) when it ends."""

    def __init__(self, data: _Data, digest: Digest | None, *,
                 troubled: frozenset[str] | None) -> None:
        self.data = data
        self.digest = digest
        # Without the set of troubled items, items must be consecutive: checked at the end.
        self._troubled = troubled
        self._positions: dict[str, int] | None = None if troubled is None else {}
        self._key: str | None = None
        self._rows: list[ScoreRow] = []
        self._causes: list[FailureCause | None] = []
        self._run: str | None = None
        self._outcomes: list[ScorerOutcome] = []
        self._runs: dict[str, list[ScorerOutcome]] | None = None if troubled is None else {}
        self.item_hashes = array("q")
        self.run_hashes = array("q")

    def add(self, page: Sequence[ScoreRow]) -> None:
        for row in page:
            key = row_item_id(row)
            if key != self._key:
                self._close_item()
                self._key = key
            cause = cause_of_row(row)
            self._rows.append(row)
            self._causes.append(cause)
            if self.digest is not None:
                self.digest.add_row(row, key, cause)
                self._add_run(row)

    def _add_run(self, row: ScoreRow) -> None:
        if self._runs is not None:
            self._runs.setdefault(row.run_id, []).append(_outcome(row))
            return
        if row.run_id != self._run:
            self._close_run()
            self._run = row.run_id
        self._outcomes.append(_outcome(row))

    def _close_run(self) -> None:
        if self._run is not None and self.digest is not None:
            self.digest.add_run(self._run, self._outcomes)
            self.run_hashes.append(hash(self._run))
        self._run, self._outcomes = None, []

    def _close_item(self) -> None:
        key = self._key
        if key is None:
            return
        if self._positions is None:
            position, new = self.data.items, True
            troubled = any(row.status != "scored" for row in self._rows)
            self.item_hashes.append(hash(key))
        else:
            assert self._troubled is not None  # noqa: S101 - set together
            position = self._positions.setdefault(key, len(self._positions))
            new = position == self.data.items
            troubled = key in self._troubled
        self.data.add_item(key, self._rows, self._causes, position=position, new=new,
                           troubled=troubled)
        self._key, self._rows, self._causes = None, [], []

    def end(self) -> None:
        self._close_item()
        self._close_run()
        if self._runs is not None and self.digest is not None:
            for run_id, outcomes in self._runs.items():
                self.digest.add_run(run_id, outcomes)
        if self.digest is not None:
            self.digest.items = self.data.items

    def consecutive(self) -> bool:
        """Whether each item's (and run's) rows were consecutive (by their ids' hashes: a
        collision only costs another scan)."""
        return self._positions is not None or (_distinct(self.item_hashes)
                                               and _distinct(self.run_hashes))


def _distinct(hashes: array[int]) -> bool:
    ordered = sorted(hashes)
    return all(a != b for a, b in itertools.pairwise(ordered))


@final
class _Troubled:
    """A scan for the items with a failed or not-scorable run (for a batch whose items are not
    consecutive)."""

    def __init__(self) -> None:
        self.found: set[str] = set()

    def add(self, page: Sequence[ScoreRow]) -> None:
        self.found.update(row_item_id(row) for row in page if row.status != "scored")

    def end(self) -> None:
        """Nothing more to do."""


@final
class _Rebin:
    """A scan for the histograms of the scorers whose scores leave ``[0, 1]``."""

    def __init__(self, digest: Digest, scorers: frozenset[str]) -> None:
        self._digest = digest
        self._bins = {sid: (digest.histogram_range(sid), [0] * BINS) for sid in scorers}

    def add(self, page: Sequence[ScoreRow]) -> None:
        for row in page:
            found = self._bins.get(row.scorer_id)
            if found is not None and row.status == "scored" and row.score is not None:
                (low, high), bins = found
                bins[bin_of(row.score, low, high)] += 1

    def end(self) -> None:
        for sid, (_, bins) in self._bins.items():
            self._digest.rebin(sid, bins)


@final
class ReportBuild:
    """The scans a report needs, then what the page shows: :attr:`digest`, :attr:`limit`
    and the packed data (:meth:`write_data`).

    Drive it with ``for scan in build.scans(): ...feed scan every page, then scan.end()``,
    and :meth:`close` it when done.
    """

    def __init__(
        self, scorer_ids: Iterable[str], *, thresholds: Mapping[str, Threshold],
        max_failures: int | None, max_failure_rate: float | None,
        baseline: Mapping[tuple[str, str], float | None], budget: int = DEFAULT_BUDGET,
    ) -> None:
        self._scorer_ids = sorted(scorer_ids)
        self._thresholds = thresholds
        self._max_failures = max_failures
        self._max_failure_rate = max_failure_rate
        self._baseline = baseline
        self._budget = budget
        self.digest: Digest | None = None
        self.limit: int | None = None
        self._packed: IO[bytes] | None = None
        self._spools: list[IO[bytes]] = []

    def close(self) -> None:
        """Remove the spooled files (those on disk too)."""
        for spool in self._spools:
            spool.close()
        self._spools.clear()

    def _read(self, limit: int, *, digest: bool, troubled: frozenset[str] | None) -> _Read:
        made = (Digest(self._scorer_ids, self._thresholds, max_failures=self._max_failures,
                       max_failure_rate=self._max_failure_rate) if digest else None)
        return _Read(_Data(self._scorer_ids, limit, self._baseline, self._spools), made,
                     troubled=troubled)

    def scans(self) -> Iterator[Scan]:
        """The scans, one after the other: feed each the whole batch before asking for the
        next."""
        troubled: frozenset[str] | None = None
        read = self._read(MAX_TEXT, digest=True, troubled=None)
        yield read
        if not read.consecutive():
            read.data.pack().close()
            found = _Troubled()
            yield found
            troubled = frozenset(found.found)
            read = self._read(MAX_TEXT, digest=True, troubled=troubled)
            yield read
        digest = read.digest
        assert digest is not None  # noqa: S101 - a first read digests
        self.digest = digest
        rebinned = digest.rebinned()
        if rebinned:
            yield _Rebin(digest, rebinned)
        full = read.data
        packed = full.pack()
        size = packed_size(packed)
        if size <= self._budget:
            self._packed = packed
            self.limit = None if full.cut.longest <= MAX_TEXT else MAX_TEXT
            return
        packed.close()
        ratio = full.chars / size
        limit = fitting_limit(full.cut.lengths, full.chars - full.cut.total,
                              int(self._budget * ratio * 0.9))
        while True:
            read = self._read(limit, digest=False, troubled=troubled)
            yield read
            packed = read.data.pack()
            if limit <= 16 or packed_size(packed) <= self._budget:
                self._packed, self.limit = packed, limit
                return
            packed.close()
            limit = max(16, int(limit * 0.7))

    def write_data(self, out: IO[str]) -> None:
        """The packed data, in base64, into ``out`` (once, after the scans)."""
        assert self._packed is not None  # noqa: S101 - after the scans
        write_base64(self._packed, out)
        self._packed.close()
        self._packed = None
