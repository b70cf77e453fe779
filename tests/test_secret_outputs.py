"""No secret a reason or an error message holds reaches any output: stored rows, the JSON and
HTML reports, what ``eval`` and ``show`` print, OpenTelemetry attributes, logs, judge errors.

Every output is checked against the same table of secret shapes (``tests/secret_shapes.py``):
one scorer explains each item with a sentence holding a secret, another raises with it.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import logging
import re
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from scorecore import create_scorer
from scorecore.evals import EvalItem, run_evals
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore.live import live_scoring, scored
from scorecore_adapters import allow_model_requests
from scorecore_adapters.cli import main
from scorecore_adapters.openai import OpenAIChatModel
from scorecore_adapters.otel import otel_sink
from tests.otlp_receiver import otlp_receiver
from tests.secret_shapes import BENIGN_PROSE, SECRET_SHAPES, SecretShape

TEXTS = [s.text for s in SECRET_SHAPES] + list(BENIGN_PROSE)

SCORERS = '''
from scorecore import create_scorer
from tests.test_secret_outputs import TEXTS

def _text(ctx):
    return TEXTS[int(ctx.run.input)]

def _raise(ctx):
    raise RuntimeError(_text(ctx))

explains = (create_scorer(id="explains", description="d")
            .generate_score(lambda ctx: 1.0).generate_reason(_text))
raises = create_scorer(id="raises", description="d").generate_score(_raise)
'''


def _html_text(page: str) -> str:
    """The page and the items' data it carries (gzip-compressed JSON in base64), as text."""
    found = re.search(r'id="report-data"[^>]*>([A-Za-z0-9+/=]*)</script>', page)
    assert found is not None
    return page + json.dumps(json.loads(gzip.decompress(base64.b64decode(found[1]))))


def _run(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    main(list(argv), out=out, err=err)
    return out.getvalue() + err.getvalue()


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each output of one ``eval`` batch over every text (and what its commands show) as text."""
    tmp = tmp_path_factory.mktemp("secrets")
    scorers = tmp / "leaky.py"
    scorers.write_text(SCORERS)
    data = tmp / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"item-{i}", "input": str(i), "output": "o"}) + "\n"
                            for i in range(len(TEXTS))))
    db, report, html = tmp / "s.db", tmp / "report.json", tmp / "report.html"
    store = f"sqlite:{db}"
    with otlp_receiver() as receiver:
        printed = _run("eval", str(scorers), "--data", str(data), "--store", store,
                       "--batch-id", "leaky", "--no-cache", "--output", str(report),
                       "--otel-endpoint", receiver.url)
        attributes = [span["attributes"] for span in receiver.spans()]
    assert "verdict:" in printed, printed
    _run("report", "leaky", "--store", store, "-o", str(html))
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT * FROM scorecore_scores").fetchall()
    finally:
        conn.close()
    return {
        "stored rows": json.dumps(rows),
        "JSON report": report.read_text(),
        "HTML report": _html_text(html.read_text()),
        "OpenTelemetry attributes": json.dumps(attributes),
        "show --failures": _run("show", "leaky", "--store", store, "--failures"),
        "show --json": _run("show", "leaky", "--store", store, "--json"),
    }


OUTPUTS = ["stored rows", "JSON report", "HTML report",
           "OpenTelemetry attributes", "show --failures", "show --json"]


@pytest.mark.parametrize("shape", SECRET_SHAPES, ids=lambda s: s.name)
@pytest.mark.parametrize("output", OUTPUTS)
def test_no_output_of_a_batch_keeps_a_secret(
    outputs: dict[str, str], output: str, shape: SecretShape
) -> None:
    """The secret is gone from the output; the text around it arrived."""
    text = outputs[output]
    assert shape.secret not in text
    assert shape.kept in text


@pytest.mark.parametrize("output", ["stored rows", "JSON report", "HTML report",
                                    "OpenTelemetry attributes", "show --json"])
def test_prose_about_secrets_reaches_every_output_whole(
    outputs: dict[str, str], output: str
) -> None:
    """Explanations that only talk about passwords and keys are not redacted anywhere."""
    for prose in BENIGN_PROSE:
        assert json.dumps(prose)[1:-1] in outputs[output] or prose in outputs[output]


@pytest.mark.parametrize("index", range(len(SECRET_SHAPES)),
                         ids=[s.name for s in SECRET_SHAPES])
def test_what_eval_prints_keeps_no_secret(tmp_path: Path, index: int) -> None:
    """The failure causes ``eval`` prints (the first few groups: one item per run here)."""
    shape = SECRET_SHAPES[index]
    scorers = tmp_path / "leaky.py"
    scorers.write_text(SCORERS)
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "item", "input": str(index), "output": "o"}) + "\n")
    printed = _run("eval", f"{scorers}:raises", "--data", str(data),
                   "--store", f"sqlite:{tmp_path / 's.db'}", "--no-cache")
    assert "top failure causes" in printed
    assert shape.secret not in printed
    assert shape.kept in printed


def _explaining(text: str) -> Any:
    return (create_scorer(id="explains", description="d")
            .generate_score(lambda ctx: 1.0).generate_reason(lambda ctx: text))


def _raising(text: str) -> Any:
    def boom(ctx: Any) -> float:
        raise RuntimeError(text)

    return create_scorer(id="raises", description="d").generate_score(boom)


@pytest.mark.parametrize("shape", SECRET_SHAPES, ids=lambda s: s.name)
def test_the_reports_json_and_the_sinks_events_keep_no_secret(shape: SecretShape) -> None:
    """``EvalReport.to_json()`` (with ``keep_results``) and ``otel_sink`` events, in process."""
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: PLC0415
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: PLC0415
        InMemorySpanExporter,
    )

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    report = anyio.run(lambda: run_evals(
        [EvalItem(input="q", output="a")], [_explaining(shape.text), _raising(shape.text)],
        keep_results=True, on_item_complete=otel_sink(tracer_provider=provider)))
    for text in (json.dumps(report.to_json()),
                 json.dumps([dict(s.attributes or {}) for s in exporter.get_finished_spans()])):
        assert shape.secret not in text
        assert shape.kept in text


@pytest.mark.parametrize("shape", SECRET_SHAPES, ids=lambda s: s.name)
def test_live_scoring_logs_no_secret(shape: SecretShape, caplog: pytest.LogCaptureFixture) -> None:
    """A live scorer failing with a secret in its message logs the message redacted."""

    @scored(_raising(shape.text))
    async def answer(question: str) -> str:
        return "a"

    async def main_() -> None:
        async with live_scoring():
            await answer("q")

    with caplog.at_level(logging.WARNING, logger="scorecore.live"):
        anyio.run(main_)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "live scoring" in logged
    assert shape.secret not in logged
    assert shape.kept in logged


@pytest.mark.parametrize("shape", SECRET_SHAPES, ids=lambda s: s.name)
def test_a_judge_error_quoting_a_reply_keeps_no_secret(shape: SecretShape) -> None:
    """A provider's error body that quotes a secret: the judge error's message is redacted."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": {"message": shape.text, "type": "invalid"}})

    async def ask() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            judge = OpenAIChatModel("gpt-4o", base_url="http://judge.test/v1", api_key="k",
                                    client=client)
            request = JudgeRequest(messages=(JudgeMessage(role="user", content="hi"),))
            with allow_model_requests():
                failed = (await judge.generate(request)).failure()
        return f"{failed}\n{failed!r}\n{failed.message}"

    text = anyio.run(ask)
    assert shape.secret not in text
    assert shape.kept in text


@pytest.mark.parametrize("shape", SECRET_SHAPES, ids=lambda s: s.name)
def test_a_secret_keying_an_items_request_context_is_not_stored(
        shape: SecretShape, tmp_path: Path) -> None:
    """A request context keyed by a credential (headers by token, say): the stored row keeps
    the value under a redacted key, and not the secret."""
    from scorecore_adapters.storage import SqliteScoreStore  # noqa: PLC0415

    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 1.0)
    item = EvalItem(input="q", output="a", id="one",
                    request_context={shape.text: "value-kept", "plain": "also-kept"})

    async def save() -> None:
        async with SqliteScoreStore(tmp_path / "s.db") as store:
            await run_evals([item], [scorer], store=store, batch_id="b")

    anyio.run(save)
    conn = sqlite3.connect(tmp_path / "s.db")
    try:
        stored = json.dumps(conn.execute("SELECT * FROM scorecore_scores").fetchall())
    finally:
        conn.close()
    assert shape.secret not in stored
    assert "also-kept" in stored
