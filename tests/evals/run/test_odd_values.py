"""One bad item never stops a batch, nor a resume: odd values, unusable and repeated ids.

Values no store keeps as they are (NUL, lone surrogates, deep nesting, huge ints, objects whose
``str()`` raises) fail their pair with a clear cause and are stored replaced, listed in
``metadata["sanitized"]``; a repeated item id fails the later item and never overwrites the
earlier item's rows. Checked against SQLite and PostgreSQL (when SCORECORE_TEST_POSTGRES_DSN
is set) and, as a property, over arbitrary hostile values.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import JudgeConfig, PromptStep, Scorer, create_scorer
from scorecore.evals import EvalItem, InvalidItem, ItemResult, ScoreRow, run_evals
from scorecore.evals._persistence._sanitize import MAX_DEPTH
from scorecore_adapters.testing import FunctionJudge, InMemoryScoreStore, virtual_runtime
from tests.evals.persistence.test_storage import KINDS, make_store
from tests.strategies import Unprintable, UnprintableError, nested_list, realize, run_values

pytestmark = pytest.mark.anyio

_batches = itertools.count()


def _batch() -> str:
    return f"odd-{next(_batches)}"


def echo() -> Scorer[Any, Any]:
    """A scorer that keeps the run's values as step results (or makes a NUL), scores 1."""
    return (
        create_scorer(id="echo", description="keeps the values")
        .preprocess(lambda ctx: {"made": "x\x00y"} if ctx.run.input == "make" else ctx.run.input)
        .analyze(lambda ctx: {"output": ctx.run.output, "truth": ctx.run.ground_truth})
        .generate_score(lambda _: 1.0)
    )


def judged() -> Scorer[Any, Any]:
    """A scorer whose judge echoes the prompt (it embeds the output), or a lone surrogate."""
    judge = FunctionJudge(lambda request: {
        "echo": "\udfff" if "Echo: odd" in request.messages[-1].content
        else request.messages[-1].content
    })
    return (
        create_scorer(id="judged", description="judge echo",
                      judge=JudgeConfig(model=judge, instructions="Echo."))
        .analyze(PromptStep(description="echo", output_schema={"type": "object"},
                            create_prompt=lambda ctx: f"Echo: {ctx.run.output}"))
        .generate_score(lambda _: 0.5)
    )


def reasoned() -> Scorer[Any, Any]:
    """A scorer whose reason holds a NUL for the input "why", and the ground truth's text."""
    return (
        create_scorer(id="reasoned", description="reason from the truth")
        .generate_score(lambda _: 0.25)
        .generate_reason(
            lambda ctx: "because\x00" if ctx.run.input == "why" else str(ctx.run.ground_truth)
        )
    )


def by_run(rows: Sequence[ScoreRow], scorer_id: str) -> dict[str, ScoreRow]:
    return {row.run_id: row for row in rows if row.scorer_id == scorer_id}


def _what(row: ScoreRow) -> list[tuple[str, str]]:
    assert row.metadata is not None
    return [(note["path"], note["what"]) for note in row.metadata["sanitized"]]


# Each case: the item's fields, the scorer, where the stored row holds the value, what it holds
# there, and the note (path, what) listed in metadata.sanitized.
CASES: dict[str, tuple[dict[str, Any], str, str, Any, tuple[str, str]]] = {
    "NUL in input": (
        {"input": {"text": "a\x00b"}}, "echo", "input", {"text": "a\ufffdb"},
        ("input.text", "NUL character replaced by U+FFFD"),
    ),
    "lone surrogate in output": (
        {"output": ["ok", "\ud800"]}, "echo", "output", ["ok", "\ufffd"],
        ("output[1]", "lone surrogate replaced by U+FFFD"),
    ),
    "deep ground truth": (
        {"ground_truth": nested_list(2_000, "leaf")}, "echo", "additional_context",
        {"groundTruth": nested_list(MAX_DEPTH - 1,
                                    f"<list nested deeper than {MAX_DEPTH} levels>")},
        ("additionalContext.groundTruth" + "[0]" * (MAX_DEPTH - 1),
         f"nested deeper than {MAX_DEPTH} levels; replaced by a placeholder"),
    ),
    "5,000-digit int in input": (
        {"input": 10**5000}, "echo", "input", "<int of 5,001 digits>",
        ("input", "int of 5,001 digits stored as text"),
    ),
    "NUL in a step result": (
        {"input": "make"}, "echo", "preprocess_step_result", {"made": "x\ufffdy"},
        ("preprocessStepResult.made", "NUL character replaced by U+FFFD"),
    ),
    "lone surrogate in a judge reply": (
        {"output": "odd"}, "judged", "analyze_step_result", {"echo": "\ufffd"},
        ("analyzeStepResult.echo", "lone surrogate replaced by U+FFFD"),
    ),
    "NUL in the reason": (
        {"input": "why"}, "reasoned", "reason", "because\ufffd",
        ("reason", "NUL character replaced by U+FFFD"),
    ),
    "object whose str() raises": (
        {"output": Unprintable()}, "echo", "output",
        "<Unprintable object (str() failed)>",
        ("output", "str() raised RuntimeError; replaced by a placeholder"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", KINDS)
async def test_unstorable_value_fails_its_pair_and_the_batch_completes(
    anyio_backend: str, kind: str, case: str, tmp_path: Path
) -> None:
    """The odd item's pair fails naming the path; its row is stored replaced, noted in
    metadata.sanitized; the other items score; a resume completes and fails it again."""
    fields, scorer_id, column, stored, note = CASES[case]
    scorer = {"echo": echo, "judged": judged, "reasoned": reasoned}[scorer_id]()
    odd = {"input": "q", "output": "a", **fields, "id": "odd"}
    data = [{"input": 1, "output": 1, "id": "before"}, odd,
            {"input": 2, "output": 2, "id": "after"}]
    batch = _batch()
    async with make_store(kind, tmp_path) as store:
        first = await run_evals(data, [scorer], store=store, batch_id=batch, keep_results=True)
        again = await run_evals(data, [scorer], store=store, batch_id=batch, resume=True)
        rows = by_run(await store.list_run(batch), scorer_id)
    for report in (first, again):
        summary = report.summary(scorer_id)
        assert (summary.scored, summary.failed) == (2, 1)
    assert first.results is not None
    (outcome,) = first.results[1].outcomes
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert f"cannot be stored as it is ({note[0]}: {note[1]}" in outcome.error
    assert set(rows) == {f"{batch}:before", f"{batch}:odd", f"{batch}:after"}
    row = rows[f"{batch}:odd"]
    assert (row.status, row.score) == ("failed", None)
    assert getattr(row, column) == stored
    assert note in _what(row)
    assert row.metadata is not None
    assert row.metadata["error"] == outcome.error
    assert row.metadata["uncountedOutcome"]["status"] == "scored"
    assert all(rows[f"{batch}:{i}"].status == "scored" for i in ("before", "after"))


@pytest.mark.parametrize("kind", KINDS)
async def test_fixed_data_resumes_the_failed_pair(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """After fixing the odd value, a resume scores the pair and counts it like the others."""
    batch = _batch()
    data = [{"input": "a\x00", "output": 1, "id": "x"}, {"input": "b", "output": 1, "id": "y"}]
    async with make_store(kind, tmp_path) as store:
        first = await run_evals(data, [echo()], store=store, batch_id=batch)
        data[0]["input"] = "a"
        resumed = await run_evals(data, [echo()], store=store, batch_id=batch, resume=True)
        rows = by_run(await store.list_run(batch), "echo")
    assert first.summary("echo").failed == 1
    assert (resumed.summary("echo").scored, resumed.summary("echo").failed) == (2, 0)
    fixed = rows[f"{batch}:x"]
    assert fixed.input == "a"
    assert fixed.metadata is not None
    assert "sanitized" not in fixed.metadata


@pytest.mark.parametrize("kind", KINDS)
async def test_unusable_item_id_is_a_failed_item_stored_by_position(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """An id holding NUL or a lone surrogate fails its item (it cannot be a row key); the item
    is stored under its position and the batch completes."""
    batch = _batch()
    data = [{"input": 1, "output": 1, "id": "a\x00"}, {"input": 1, "output": 1, "id": "\ud800"},
            {"input": 1, "output": 1, "id": "fine"}]
    async with make_store(kind, tmp_path) as store:
        report = await run_evals(data, [echo()], store=store, batch_id=batch,
                                 keep_results=True)
        rows = by_run(await store.list_run(batch), "echo")
    assert report.failed_items == 2
    assert report.results is not None
    errors = [r.error for r in report.results]
    assert errors[0] == (
        "item #0: EvalItem.id must not contain a NUL character or a lone surrogate "
        "(no store can keep it), got 'a\\x00'"
    )
    assert errors[1] is not None
    assert "lone surrogate" in errors[1]
    assert set(rows) == {f"{batch}:#0", f"{batch}:#1", f"{batch}:fine"}


async def test_unusable_ids_are_refused_by_item_values(anyio_backend: str) -> None:
    """EvalItem and InvalidItem refuse ids no store can keep, naming the field."""
    with pytest.raises(TypeError, match=r"EvalItem\.id must not contain a NUL character"):
        EvalItem(input=1, id="\x00")
    with pytest.raises(TypeError, match=r"InvalidItem\.id must not contain"):
        InvalidItem(reason="r", id="\udc80")


@pytest.mark.parametrize("kind", KINDS)
async def test_duplicate_id_fails_the_later_item_and_never_overwrites(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """The later of two items with one id fails ("first seen at item #0"); the store keeps
    the earlier item's row; a resume does the same."""
    batch = _batch()
    data = [{"input": "first", "output": 1, "id": "x"},
            {"input": "second", "output": 1, "id": "x"},
            {"input": "third", "output": 1, "id": "y"}]
    async with make_store(kind, tmp_path) as store:
        report = await run_evals(data, [echo()], store=store, batch_id=batch,
                                 keep_results=True, concurrency=3)
        again = await run_evals(data, [echo()], store=store, batch_id=batch, resume=True,
                                keep_results=True)
        rows = await store.list_run(batch)
    for run in (report, again):
        assert (run.summary("echo").scored, run.summary("echo").failed) == (2, 1)
        assert run.failed_items == 1
        assert run.results is not None
        later = run.results[1]
        assert later.error == "duplicate id 'x', first seen at item #0"
        assert later.duplicate_of == 0
    assert sorted((r.run_id, r.input) for r in rows) == [
        (f"{batch}:x", "first"), (f"{batch}:y", "third")
    ]


async def test_duplicate_id_names_the_first_line_and_writes_nothing(anyio_backend: str) -> None:
    """Items read from a file name the line of the first occurrence; the duplicate item (valid
    or not) writes no row at all."""
    store = InMemoryScoreStore()
    data: list[Any] = [
        EvalItem(input=1, output=1, id="a", line=3),
        EvalItem(input=2, output=2, id="a", line=9),
        InvalidItem(reason="data.jsonl:11: broken", id="a"),
        {"input": 1, "output": 1, "id": "b"},
        {"input": 1, "output": 1, "id": "b"},
    ]
    report = await run_evals(data, [echo()], store=store, batch_id="b", keep_results=True)
    assert report.results is not None
    assert [r.error for r in report.results] == [
        None,
        "duplicate id 'a', first seen at line 3",
        "duplicate id 'a', first seen at line 3",
        None,
        "duplicate id 'b', first seen at item #3",
    ]
    assert sorted(store.writes) == [("b:a", "echo"), ("b:b", "echo")]


async def test_position_ids_collide_with_items_without_id(anyio_backend: str) -> None:
    """An id spelled "#<n>" is the run id of an id-less item at position n: whichever comes
    later fails, so neither overwrites the other."""
    store = InMemoryScoreStore()
    data: list[dict[str, Any]] = [
        {"input": 0, "output": 0},  # run id b:#0
        {"input": 1, "output": 1, "id": "#0"},  # later, same run id
        {"input": 2, "output": 2, "id": "#3"},  # earlier than the id-less item #3
        {"input": 3, "output": 3},  # run id b:#3, already used
        {"input": 4, "output": 4, "id": "#4"},  # its own position: no clash
    ]
    report = await run_evals(data, [echo()], store=store, batch_id="b", keep_results=True)
    assert report.results is not None
    assert [r.duplicate_of for r in report.results] == [None, 0, None, 2, None]
    assert report.results[1].error == (
        "duplicate id '#0': it is the run id of item #0, which has no id"
    )
    assert report.results[3].error == (
        "no id, and its run id (position #3) is the id of an earlier item, first seen at "
        "item #2"
    )
    assert sorted(store.writes) == [("b:#0", "echo"), ("b:#3", "echo"), ("b:#4", "echo")]
    assert store.rows[("b:#3", "echo")].input == 2


async def test_raising_exception_text_is_a_failed_item(anyio_backend: str) -> None:
    """A target raising an exception whose str() raises fails that item only."""

    def target(item: EvalItem) -> Any:
        if item.input == 1:
            raise UnprintableError
        return item.input

    report = await run_evals([{"input": 1}, {"input": 2}], [echo()], target=target,
                             keep_results=True)
    assert report.results is not None
    assert report.results[0].error == "target raised UnprintableError: <str() raised RuntimeError>"
    assert report.summary("echo").scored == 1


async def test_a_row_that_cannot_be_built_fails_its_pair_only(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should building a row raise anyway, the pair fails and a bare failed row is stored."""
    from scorecore.evals._rows._row import RowBuilder  # noqa: PLC0415 - patched below

    real = RowBuilder.values

    def flaky(self: RowBuilder, *args: Any) -> tuple[Any, ...]:
        if args[7] == "boom":  # the input
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, *args)

    monkeypatch.setattr(RowBuilder, "values", flaky)
    store = InMemoryScoreStore()
    report = await run_evals([{"input": "boom", "output": 1}, {"input": "ok", "output": 1}],
                             [echo()], store=store, batch_id="b")
    assert (report.summary("echo").scored, report.summary("echo").failed) == (1, 1)
    bare = store.rows[("b:#0", "echo")]
    assert bare.status == "failed"
    assert bare.input is None
    assert bare.metadata is not None
    assert bare.metadata["error"] == (
        "its row could not be built (RecursionError: maximum recursion depth exceeded); "
        "stored without its data"
    )


# --------------------------------------------------------------------------- the property

_IDS = st.one_of(
    st.none(), st.sampled_from(["a", "b", "#0", "#1", "#2", "7", "a\x00", "\ud800", ""])
)


@st.composite
def _entries(draw: st.DrawFn) -> Any:
    """A dataset entry: a mapping of hostile values (maybe with an id), or not an item."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return InvalidItem(reason="unreadable", id=draw(st.sampled_from([None, "a", "#1"])))
    if choice == 1:
        return draw(st.sampled_from([5, "text", None]))
    entry = {"input": draw(run_values), "output": draw(run_values)}
    if draw(st.booleans()):
        entry["ground_truth"] = draw(run_values)
    if draw(st.booleans()):
        entry["extra"] = {"more": draw(run_values)}
    item_id = draw(_IDS)
    if item_id is not None:
        entry["id"] = item_id
    return entry


def _key(index: int, entry: Any) -> str:
    """The oracle of an entry's run key: its id when it is a usable one, else its position."""
    item_id = entry.id if isinstance(entry, InvalidItem) else (
        entry.get("id") if isinstance(entry, Mapping) else None
    )
    if isinstance(item_id, str) and item_id and "\x00" not in item_id and all(
        not 0xD800 <= ord(c) <= 0xDFFF for c in item_id
    ):
        return item_id
    return f"#{index}"


def _check_batch(entries: Sequence[Any], kind: str, backend: str, tmp_path: Path) -> None:
    data = [realize(entry) if isinstance(entry, dict) else entry for entry in entries]
    scorers = [echo(), judged(), reasoned()]
    claimed: set[str] = set()
    duplicate: list[bool] = []
    for index, entry in enumerate(entries):
        key = _key(index, entry)
        duplicate.append(key in claimed)
        claimed.add(key)
    batch = _batch()

    async def go() -> tuple[Any, Any, list[ScoreRow]]:
        runtime, _ = virtual_runtime()
        async with make_store(kind, tmp_path) as store:
            first = await run_evals(data, scorers, store=store, batch_id=batch, concurrency=3,
                                    keep_results=True, runtime=runtime)
            again = await run_evals(data, scorers, store=store, batch_id=batch, resume=True,
                                    keep_results=True, runtime=runtime)
            return first, again, list(await store.list_run(batch))

    first, again, rows = anyio.run(go, backend=backend)
    for report in (first, again):
        assert report.total_items == len(entries)
        for summary in report.scorers:
            assert summary.scored + summary.not_scorable + summary.failed == len(entries)
        results: Sequence[ItemResult] = report.results
        assert [r.duplicate_of is not None for r in results] == duplicate
    assert first.scorers == again.scorers
    expected = {(f"{batch}:{k}", s.id) for k in claimed for s in scorers}
    assert len(rows) == len(expected)
    assert {(r.run_id, r.scorer_id) for r in rows} == expected


@settings(max_examples=60)
@given(entries=st.lists(_entries(), min_size=1, max_size=6))
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_any_values_any_ids_every_item_is_accounted_for(
    backend: str, entries: list[Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """For arbitrary hostile values and ids, run_evals and its resume complete; every item is
    counted once per scorer, and SQLite holds exactly one row per (run id, scorer)."""
    _check_batch(entries, "sqlite", backend, tmp_path_factory.mktemp("odd"))


@settings(max_examples=15)
@given(entries=st.lists(_entries(), min_size=1, max_size=4))
@pytest.mark.parametrize("kind", [k for k in KINDS if k != "sqlite"])
def test_any_values_any_ids_postgres(
    kind: str, entries: list[Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The same law against PostgreSQL, which refuses NUL where SQLite keeps it."""
    _check_batch(entries, kind, "asyncio", tmp_path_factory.mktemp("odd"))


async def test_cli_reader_duplicate_names_the_first_line(
    anyio_backend: str, tmp_path: Path
) -> None:
    """Items read by the command line carry their line: a repeated id names the line of the
    first occurrence, blank lines counted."""
    import io  # noqa: PLC0415 - only this test reads a file

    from scorecore_adapters.cli import JsonlReader  # noqa: PLC0415

    path = tmp_path / "data.jsonl"
    path.write_text('{"input": 1, "output": 1, "id": "a"}\n\n'
                    '{"input": 2, "output": 2, "id": "b"}\n'
                    '{"input": 3, "output": 3, "id": "a"}\n')
    reader = JsonlReader(path, needs_output=True, warn=io.StringIO())
    report = await run_evals(reader, [echo()], keep_results=True)
    assert report.results is not None
    assert [r.error for r in report.results] == [
        None, None, "duplicate id 'a', first seen at line 1"
    ]
    assert [r.item.line for r in report.results if r.item is not None] == [1, 3, 4]


@attrs.define
class Sealed:
    """A user value whose field cannot be read (as a lazy proxy's might fail)."""

    items: Any = None

    def __getattribute__(self, name: str) -> Any:
        if name == "items":
            raise RuntimeError("sealed")
        return super().__getattribute__(name)


async def test_a_field_that_cannot_be_made_json_is_noted_and_the_rest_kept(
    anyio_backend: str,
) -> None:
    """A result field whose conversion raises (a user value that cannot be read) is noted by its
    Mastra key; the row keeps every other field and the pair is failed."""
    store = InMemoryScoreStore()
    report = await run_evals([{"input": Sealed(), "output": "fine"}], [echo()], store=store,
                             batch_id="b")
    assert report.summary("echo").failed == 1
    [row] = await store.list_run("b")
    notes = (row.metadata or {})["sanitized"]
    for key in ("input", "preprocessStepResult"):
        assert {"path": key, "what": "converting it to JSON raised RuntimeError; stored as "
                                     "its text"} in notes
    assert row.output == "fine"
    assert row.analyze_step_result == {"output": "fine", "truth": None}
    assert row.status == "failed"
