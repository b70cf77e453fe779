"""End to end through a real OTLP receiver: Arize Phoenix, started by .ci/phoenix.sh.

An agent's trace is exported to Phoenix, the same trace file is scored by ``scorecore
eval-traces --otel-endpoint``, a plain batch is scored with ``otel_sink``; then the spans are read
back from Phoenix's REST API: the evaluation events sit under the agent span they judged (same
trace id, that span as parent), with the convention's attributes. With
``--otel-evaluation-spans`` the item, scorer and judge-call spans arrive too; and an agent traced
by the OpenTelemetry SDK itself (exported to Phoenix and written to files by the SDK's OTLP
encoder) is scored from those files under its own agent span.

Needs ``SCORECORE_TEST_PHOENIX_URL`` (``export SCORECORE_TEST_PHOENIX_URL="$(bash
.ci/phoenix.sh)"``); skipped without it, except under CI=true, where it fails.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from scorecore import create_scorer
from scorecore.evals import EvalItem, run_evals_sync
from scorecore_adapters.cli import main
from scorecore_adapters.otel import EVENT_NAME, otel_sink
from tests.adapters.otel.otel_agent import SCORERS as SDK_AGENT_SCORERS
from tests.adapters.otel.otel_agent import record_agent, write_trace_files
from tests.otlp_payloads import to_protobuf

OTLP = Path(__file__).parents[2] / "traces" / "fixtures" / "otlp"
SCORERS = '''
from scorecore import create_scorer

said = create_scorer(id="said-weather", description="d", type="agent").generate_score(
    lambda ctx: float("weather" in ctx.run.output[0].content.content)
).generate_reason(lambda ctx: "mentions the weather")
'''


@pytest.fixture
def phoenix() -> str:
    url = os.environ.get("SCORECORE_TEST_PHOENIX_URL")
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but SCORECORE_TEST_PHOENIX_URL is unset: .ci/run starts "
                        "Phoenix with .ci/phoenix.sh and exports it")
        pytest.skip("SCORECORE_TEST_PHOENIX_URL unset (start Phoenix with .ci/phoenix.sh)")
    return url.rstrip("/")


def _fresh_ids(payload: dict[str, Any], project: str) -> dict[str, str]:
    """Give the recorded trace new ids (reruns never collide in the receiver) and a project."""
    new = {"": ""}
    spans = [sp for r in payload["resourceSpans"] for s in r["scopeSpans"] for sp in s["spans"]]
    for span in spans:
        new.setdefault(span["traceId"], secrets.token_hex(16))
        new.setdefault(span["spanId"], secrets.token_hex(8))
    for span in spans:
        for key in ("traceId", "spanId", "parentSpanId"):
            span[key] = new[span.get(key, "")]
    for resource in payload["resourceSpans"]:
        resource["resource"]["attributes"].append(
            {"key": "openinference.project.name", "value": {"stringValue": project}})
    return new


def _protobuf(payload: dict[str, Any]) -> bytes:
    return to_protobuf(json.loads(json.dumps(payload)))  # a copy: the caller keeps hex ids


def _recorded_trace_sent(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: str
) -> tuple[str, str, Path]:
    """The recorded agent trace, with fresh ids, sent to Phoenix (as the agent's own exporter
    would) and written to a Collector-style file; the scorer's OTel resource names
    ``project``. Returns the trace id, the agent span's id and the file."""
    payload = json.loads((OTLP / "genai_agent.json").read_text(encoding="utf-8"))
    ids = _fresh_ids(payload, project)
    sent = httpx.post(f"{phoenix}/v1/traces", content=_protobuf(payload), timeout=30,
                      headers={"Content-Type": "application/x-protobuf"})
    assert sent.status_code == 200, sent.text
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps(payload) + "\n", encoding="utf-8")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    return ids["4bf92f3577b34da6a3ce929d0e0e4736"], ids["00f067aa0ba902b7"], traces


def _spans(url: str, project: str, count: int) -> list[dict[str, Any]]:
    """The project's spans, once Phoenix has ingested ``count`` of them (60 s at most)."""
    deadline = time.monotonic() + 60
    found: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        reply = httpx.get(f"{url}/v1/projects/{project}/spans", params={"limit": 1000},
                          timeout=10)
        if reply.status_code == 200:
            found = reply.json()["data"]
            if len(found) >= count:
                return found
        time.sleep(0.5)
    pytest.fail(f"Phoenix holds {len(found)} span(s) of {project}, expected {count}")


def test_scores_reach_phoenix_under_the_spans_they_judged(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trace file scored from the command line and a batch scored in Python: Phoenix holds
    one evaluation span per run, the trace's under its agent span, each carrying the
    gen_ai.evaluation.result event with the score, label and explanation."""
    project = f"scorecore-e2e-{secrets.token_hex(4)}"
    # the agent's own exporter sends its trace to the backend
    trace_id, agent_span, traces = _recorded_trace_sent(phoenix, tmp_path, monkeypatch, project)

    # 1. the same trace, from a Collector-style file, scored from the command line
    scorers = tmp_path / "trace_scorers.py"
    scorers.write_text(SCORERS)
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval-traces", str(traces), str(scorers), "--store",
                 f"sqlite:{tmp_path / 's.db'}", "--threshold", "said-weather=0.5",
                 "--otel-endpoint", f"{phoenix}/v1/traces"], out=out, err=err)
    assert code == 0, out.getvalue() + err.getvalue()

    # 2. a plain batch, scored in Python with the sink as on_item_complete
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": project}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"{phoenix}/v1/traces")))
    exact = create_scorer(id="exact", description="d").generate_score(
        lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
    report = run_evals_sync(
        [EvalItem(input="2+2", output="4", ground_truth="4", id="right"),
         EvalItem(input="2+2", output="5", ground_truth="4", id="wrong")],
        [exact], on_item_complete=otel_sink(tracer_provider=provider, gates=["exact"]),
        batch_id="e2e", max_failures=None)
    assert report.total_items == 2
    provider.shutdown()

    spans = _spans(phoenix, project, 4 + 1 + 2)
    evaluations = {s["name"]: s for s in spans if s["name"].startswith("evaluation ")}
    judged = evaluations["evaluation said-weather"]
    assert judged["context"]["trace_id"] == trace_id
    assert judged["parent_id"] == agent_span
    assert any(s["context"]["span_id"] == agent_span for s in spans)  # the judged span is there
    (event,) = judged["events"]
    assert event["name"] == EVENT_NAME
    attributes = event["attributes"]
    assert attributes["gen_ai.evaluation.name"] == "said-weather"
    assert attributes["gen_ai.evaluation.score.value"] == 1.0
    assert attributes["gen_ai.evaluation.score.label"] == "pass"
    assert attributes["gen_ai.evaluation.explanation"] == "mentions the weather"

    batch = [s for s in spans if s["name"] == "evaluation exact"]
    by_item = {s["attributes"]["scorecore.item_id"]: s for s in batch}
    assert set(by_item) == {"right", "wrong"}
    assert all(s["parent_id"] is None for s in batch)
    assert by_item["right"]["attributes"]["gen_ai.evaluation.score.label"] == "pass"
    assert by_item["wrong"]["attributes"]["gen_ai.evaluation.score.label"] == "fail"
    assert by_item["wrong"]["attributes"]["scorecore.run_id"] == "e2e:wrong"


JUDGED_SCORERS = '''
from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore_adapters.testing import ScriptedJudge

judged = create_scorer(
    id="judged", description="d", type="agent",
    judge=JudgeConfig(model=ScriptedJudge([{"score": 0.75}] * 4), instructions="judge"),
).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: "rate"))
'''


def test_evaluation_spans_reach_phoenix_under_the_judged_span(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """eval-traces --otel-evaluation-spans with a judge (the scripted one): Phoenix holds the
    item span under the judged agent span, the scorer span under it carrying the event, and
    the judge's chat span under that with its gen_ai.* request and usage attributes."""
    project = f"scorecore-spans-{secrets.token_hex(4)}"
    trace_id, agent_span, traces = _recorded_trace_sent(phoenix, tmp_path, monkeypatch, project)
    scorers = tmp_path / "judged_scorers.py"
    scorers.write_text(JUDGED_SCORERS)
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval-traces", str(traces), str(scorers), "--store",
                 f"sqlite:{tmp_path / 's.db'}", "--no-cache", "--otel-endpoint",
                 f"{phoenix}/v1/traces", "--otel-evaluation-spans"], out=out, err=err)
    assert code == 0, out.getvalue() + err.getvalue()

    spans = _spans(phoenix, project, 4 + 3)
    by_name = {s["name"]: s for s in spans}
    item = by_name[f"evaluate {trace_id}-{agent_span}"]
    scorer = by_name["score judged"]
    call = by_name["chat scripted-judge"]
    assert {s["context"]["trace_id"] for s in (item, scorer, call)} == {trace_id}
    assert item["parent_id"] == agent_span
    assert scorer["parent_id"] == item["context"]["span_id"]
    assert call["parent_id"] == scorer["context"]["span_id"]
    (event,) = scorer["events"]
    assert event["name"] == EVENT_NAME
    assert event["attributes"]["gen_ai.evaluation.score.value"] == 0.75
    attributes = call["attributes"]
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "scripted"
    assert attributes["gen_ai.request.model"] == "scripted-judge"
    assert attributes["gen_ai.usage.input_tokens"] > 0
    assert attributes["gen_ai.usage.output_tokens"] > 0
    assert attributes["scorecore.judge.model_calls"] == 1


def test_an_sdk_traced_agent_is_scored_from_its_files_and_the_scores_reach_phoenix(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The in direction from a real exporter: an agent traced by the OpenTelemetry SDK sends
    its spans to Phoenix (OTLPSpanExporter over HTTP) and to files written by the SDK's OTLP
    encoder (JSON lines through json_format, one protobuf request, and the Collector file
    exporter's length-prefixed format: proto); eval-traces scores each file and Phoenix holds
    the scores under the SDK-made agent span."""
    project = f"scorecore-sdk-{secrets.token_hex(4)}"
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create(
        {"service.name": "weather-agent", "openinference.project.name": project}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"{phoenix}/v1/traces")))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace_id, agent_span = record_agent(provider)
    provider.shutdown()
    files = write_trace_files(memory.get_finished_spans(), tmp_path)
    scorers = tmp_path / "sdk_scorers.py"
    scorers.write_text(SDK_AGENT_SCORERS)
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    for path in files:
        out, err = io.StringIO(), io.StringIO()
        code = main(["eval-traces", str(path), str(scorers), "--store",
                     f"sqlite:{tmp_path / 's.db'}", "--gate", "said-weather",
                     "--gate", "used-tool", "--otel-endpoint", f"{phoenix}/v1/traces"],
                    out=out, err=err)
        assert code == 0, out.getvalue() + err.getvalue()
        assert "1/1 agent runs" in out.getvalue()

    spans = _spans(phoenix, project, 4 + 3 * 2)
    agent = next(s for s in spans if s["context"]["span_id"] == agent_span)
    assert agent["name"] == "invoke_agent weather"
    assert agent["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    evaluations = [s for s in spans if s["name"].startswith("evaluation ")]
    assert sorted(s["name"] for s in evaluations) == (
        ["evaluation said-weather"] * 3 + ["evaluation used-tool"] * 3)
    for span in evaluations:
        assert span["context"]["trace_id"] == trace_id
        assert span["parent_id"] == agent_span
        (event,) = span["events"]
        assert event["name"] == EVENT_NAME
        assert event["attributes"]["gen_ai.evaluation.score.value"] == 1.0
        assert event["attributes"]["gen_ai.evaluation.score.label"] == "pass"
