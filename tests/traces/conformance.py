"""Reading the recorded instrumentation rows the way a user does, and comparing them with what
was recorded (shared by the conformance tests and the matrix in docs/otel.md).

Each folder of ``fixtures/instrumentations/`` is one row: a real instrumentation library in one
mode, recorded by ``.ci/instrumentations/record.py`` around the same weather-agent run. Per
variant (``ok``; ``tool_error``: the tool fails) it holds the trace file and, when the library
writes log records, the logs file, each as JSON lines and as protobuf; ``expected.json`` is the
agent run the harness made (question, system prompt, answer, the tool call); ``meta.json`` says
what recorded it.
"""

from __future__ import annotations

import io
import json
import sqlite3
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import anyio

from scorecore.agent import (
    AgentInput,
    AgentMessage,
    MessageContent,
    SystemMessage,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)
from scorecore_adapters.cli import main
from tests.traces import conformance_scorers

FIXTURES = Path(__file__).parent / "fixtures" / "instrumentations"
VARIANTS = ("ok", "tool_error")
ENCODINGS = ("jsonl", "pb")
SCORERS = Path(conformance_scorers.__file__)


def rows() -> list[str]:
    """The recorded rows, by folder name."""
    return sorted(p.parent.name for p in FIXTURES.glob("*/meta.json"))


def meta(row: str) -> dict[str, Any]:
    """What recorded ``row``: library, version, mode, hand-made spans."""
    loaded: dict[str, Any] = json.loads((FIXTURES / row / "meta.json").read_text("utf-8"))
    return loaded


def expected(row: str, variant: str, folder: Path = FIXTURES) -> dict[str, Any]:
    """The agent run ``row``'s harness made in ``variant``."""
    loaded: dict[str, Any] = json.loads((folder / row / "expected.json").read_text("utf-8"))
    return dict(loaded[variant])


@dataclass(frozen=True)
class Reading:
    """What ``scorecore eval-traces`` made of one recorded file."""

    runs: list[dict[str, Any]]
    """The agent runs read (one :func:`conformance_scorers.summary` each)."""
    scores: dict[str, float | None] = field(default_factory=dict)
    """The code scorers' scores on the first run, by scorer id (``None``: not scored)."""
    command: str = ""
    said: str = ""
    """The command's exit code and last lines, for a failure's message."""


def _files(folder: Path, variant: str, encoding: str) -> list[str]:
    traces = folder / f"{variant}.traces.{encoding}"
    logs = folder / f"{variant}.logs.{encoding}"
    return [str(traces), *(["--logs", str(logs)] if logs.exists() else [])]


def run_eval_traces(folder: Path, variant: str, encoding: str) -> Reading:
    """Score one recorded file with ``scorecore eval-traces`` (its logs file given with
    ``--logs`` when the row has one) and read back the stored rows."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "scores.db"
        argv = ["eval-traces", *_files(folder, variant, encoding), str(SCORERS),
                "--store", f"sqlite:{db}", "--batch-id", "conformance"]
        out, err = io.StringIO(), io.StringIO()
        code = main(argv, out=out, err=err)
        said = f"exit {code}: " + " | ".join((out.getvalue() + err.getvalue()).splitlines()[-4:])
        command = "scorecore " + " ".join(argv[:-4])
        if not db.exists():
            return Reading(runs=[], command=command, said=said)
        conn = sqlite3.connect(db)
        try:
            stored = conn.execute('SELECT "runId", "scorerId", "status", "score", "reason" '
                                  'FROM scorecore_scores ORDER BY "runId"').fetchall()
        finally:
            conn.close()
    runs = [json.loads(reason) for _, scorer, status, _, reason in stored
            if scorer == "agent-run" and status == "scored"]
    first = min((run_id for run_id, *_ in stored), default=None)
    scores = {scorer: score for run_id, scorer, _, score, _ in stored
              if run_id == first and scorer != "agent-run"}
    return Reading(runs=runs, scores=scores, command=command, said=said)


@cache
def reading(row: str, variant: str, encoding: str) -> Reading:
    """:func:`run_eval_traces` on a committed fixture, once per process."""
    return run_eval_traces(FIXTURES / row, variant, encoding)


def ideal_run(want: Mapping[str, Any]) -> tuple[AgentInput, tuple[AgentMessage, ...]]:
    """The agent run ``want`` describes, built directly: what a reader that loses nothing
    gives."""
    question = AgentMessage(role="user", content=MessageContent(
        parts=tuple(TextPart(text=t) for t in want["input"])))
    calls = tuple(ToolInvocationPart(tool_invocation=ToolInvocation(
        tool_call_id=f"call_{i}", tool_name=t["name"], args=t["arguments"],
        result=None if t["is_error"] else t["result"], is_error=t["is_error"],
        error_text=t["result"] if t["is_error"] else None))
        for i, t in enumerate(want["tools"]))
    answer = AgentMessage(role="assistant", content=MessageContent(
        parts=(*calls, TextPart(text=want["output"]))))
    return (AgentInput(input_messages=(question,),
                       system_messages=tuple(SystemMessage(content=s) for s in want["system"])),
            (answer,))


@cache
def _oracle_scores(want_json: str) -> dict[str, float | None]:
    agent_input, output = ideal_run(json.loads(want_json))

    async def score_all() -> dict[str, float | None]:
        scores: dict[str, float | None] = {}
        for scorer in conformance_scorers.CODE_SCORERS:
            result = await scorer.run(input=agent_input, output=output)
            scores[scorer.id] = result.unwrap().score
        return scores

    return anyio.run(score_all)


def oracle_scores(want: Mapping[str, Any]) -> dict[str, float | None]:
    """The code scorers' scores on :func:`ideal_run`: every row must give these."""
    return _oracle_scores(json.dumps(want, sort_keys=True))


def _tool_differences(want: Mapping[str, Any], got: Mapping[str, Any]) -> list[str]:
    wrong = [key.replace("name", "tool name") for key in ("name", "arguments", "is_error")
             if got.get(key) != want[key]]
    result = got.get("result")
    if want["is_error"]:
        # The error text is the library's (an exception's message, "Error: ..."): it has to
        # say what failed, not be word for word the harness's.
        if not isinstance(result, str) or want["result"] not in result:
            wrong.append("tool error text")
    elif result != want["result"]:
        wrong.append("tool result")
    return wrong


def run_differences(want: Mapping[str, Any], read: Reading) -> list[str]:
    """The parts of the agent run ``read`` got wrong (empty: all of it is right)."""
    if len(read.runs) != 1:
        return [f"{len(read.runs)} agent runs"]
    got = read.runs[0]
    wrong = [key for key in ("input", "system", "output") if got[key] != want[key]]
    if len(got["tools"]) != len(want["tools"]):
        return [*wrong, f"{len(got['tools'])} tool calls"]
    for want_call, got_call in zip(want["tools"], got["tools"], strict=True):
        wrong += _tool_differences(want_call, got_call)
    return wrong


def score_differences(want: Mapping[str, Any], read: Reading) -> list[str]:
    """The code scorers whose score on ``read`` is not the oracle's, as ``id got!=want``."""
    oracle = oracle_scores(want)
    return [f"{sid} {read.scores.get(sid)}!={score}" for sid, score in oracle.items()
            if read.scores.get(sid) != score]
