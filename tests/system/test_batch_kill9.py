"""kill -9 for real: a batch eval in a child process is SIGKILLed by the provider fake (served
on 127.0.0.1 by this process) at its n-th request, then run again: nothing submitted twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from scorecore_adapters.batch.fakes import FakeAnthropicBatchAPI, FakeOpenAIBatchAPI, FakeReply

ROOT = Path(__file__).resolve().parents[2]
ITEMS = 6

_CHILD = textwrap.dedent('''
    import sys
    import anyio
    from scorecore import JudgeConfig, PromptStep, ScorePromptStep, create_scorer
    from scorecore.evals import run_evals
    from scorecore_adapters.batch import AnthropicBatchModel, OpenAIBatchModel
    from scorecore_adapters.cache import SqliteJudgeCache

    CLAIMS = {"type": "object", "required": ["claims"],
              "properties": {"claims": {"type": "array", "items": {"type": "string"}}}}

    async def main():
        path, provider, base_url, items = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
        cls = OpenAIBatchModel if provider == "openai" else AnthropicBatchModel
        judge = cls("judge-model", journal=path, base_url=base_url, api_key="sk-kill-test-key",
                    max_batch_size=4, max_wait=0.1, poll_interval=0.05)
        scorer = (create_scorer(id="judged", description="d",
                                judge=JudgeConfig(model=judge, instructions="Grade."))
                  .analyze(PromptStep(description="claims", output_schema=CLAIMS,
                                      create_prompt=lambda c: f"Claims in: {c.run.output}"))
                  .generate_score(ScorePromptStep(
                      description="score", create_prompt=lambda c: f"Score: {c.run.output}")))
        data = [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(items)]
        async with SqliteJudgeCache(path) as cache:
            report = await run_evals(data, [scorer], cache=cache, concurrency=items,
                                     keep_results=True)
        scores = {r.item.id: r.outcomes[0].result.score for r in report.results
                  if r.outcomes[0].result is not None}
        print(sorted(scores.items()))

    anyio.run(main)
''')


def item_asked(body: Mapping[str, Any]) -> tuple[str, int]:
    text = json.dumps(body["messages"], ensure_ascii=False)
    n = int(text.split("answer ")[1].split('"')[0].split("\\")[0])
    return ("analyze" if "Claims in" in text else "score"), n


def answer(body: Mapping[str, Any]) -> FakeReply:
    step, n = item_asked(body)
    return json.dumps({"claims": [f"c{n}"]} if step == "analyze" else {"score": n / 100})


class Server:
    """The fake behind a real HTTP server; kills ``victim`` at the ``kill_at``-th request."""

    def __init__(self, provider: str) -> None:
        cls = FakeOpenAIBatchAPI if provider == "openai" else FakeAnthropicBatchAPI
        self.fake = cls(answer, clock=time.monotonic, processing_seconds=0.2)
        self.lock = threading.Lock()
        self.count = 0
        self.kill_at: int | None = None
        self.after_processing = False
        self.victim: subprocess.Popen[str] | None = None

    def handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> httpx.Response | None:
        with self.lock:
            self.count += 1
            kill = self.kill_at is not None and self.count == self.kill_at
            if kill and not self.after_processing:
                self._kill()
                return None
            response = self.fake.handle(httpx.Request(method, f"http://fake{path}",
                                                      headers=headers, content=body))
            if kill:
                self._kill()
                return None
            return response

    def _kill(self) -> None:
        assert self.victim is not None
        os.kill(self.victim.pid, signal.SIGKILL)
        self.victim.wait()


@contextmanager
def serve(server: Server) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            response = server.handle(self.command, self.path, dict(self.headers), body)
            if response is None:
                self.close_connection = True
                return
            content = response.read()
            self.send_response(response.status_code)
            for name, value in response.headers.items():
                if name.lower() not in ("content-length", "transfer-encoding"):
                    self.send_header(name, value)
            self.send_header("content-length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = _any  # noqa: N815 - http.server's method names

        def log_message(self, *_: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def child(server: Server, path: Path, provider: str, url: str) -> subprocess.Popen[str]:
    base = f"{url}/v1" if provider == "openai" else url
    env = {**os.environ, "SCORECORE_ALLOW_MODEL_REQUESTS": "1", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(  # noqa: S603 - this interpreter running our own script
        [sys.executable, "-c", _CHILD, str(path), provider, base, str(ITEMS)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    server.victim = process
    return process


# The exchanges that matter (the in-process property in test_batch_resume.py covers every
# one): OpenAI's batch creation (2nd request, after the upload) before and after the provider
# acted, a status read; Anthropic's creation after it acted (found again by custom ids) and a
# status read.
@pytest.mark.parametrize(("provider", "kill_at", "after_processing"), [
    ("openai", 2, False), ("openai", 2, True), ("openai", 4, True),
    ("anthropic", 1, True), ("anthropic", 3, True),
])
def test_sigkill_at_a_request_then_a_rerun_submits_nothing_twice(
    provider: str, kill_at: int, after_processing: bool, tmp_path: Path
) -> None:
    """SIGKILL as the n-th request reaches the provider (before it acts, or after it acted
    but before the reply leaves): the re-run finishes, each request was submitted once."""
    server = Server(provider)
    server.kill_at = kill_at
    server.after_processing = after_processing
    path = tmp_path / "cache.db"
    with serve(server) as url:
        server.fake.base_url = url  # Anthropic's results_url points back here
        killed = child(server, path, provider, url)
        killed.communicate(timeout=60)
        assert killed.returncode == -signal.SIGKILL
        server.kill_at = None
        rerun = child(server, path, provider, url)
        out, err = rerun.communicate(timeout=60)
    assert rerun.returncode == 0, err
    assert out.strip() == str(sorted((f"q{i}", i / 100) for i in range(ITEMS)))
    assert server.fake.duplicates() == []
    asked = Counter(item_asked(body) for batch in server.fake.batches.values()
                    for _, body in batch.lines)
    assert asked == Counter({(s, i): 1 for i in range(ITEMS) for s in ("analyze", "score")})
