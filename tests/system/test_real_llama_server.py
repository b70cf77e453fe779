"""OpenAIChatModel against the real llama_cpp.server running the bundled SmolLM2-135M model.

Marked ``real_model``: they need the ``local`` extra. Without llama_cpp they are skipped with
the reason, except under ``CI=true``, where a missing llama_cpp fails them (the pytest plugin's
rule: CI installs the extra, and a skip there would hide that the HTTP path was never tried on
a real server). One server (the plugin's session-scoped ``llama_server_url``) serves them all.

The default model (no settings at all) must negotiate ``json_object`` there and score built-in
LLM scorers end to end: every judge reply decoded under the server's grammar, so none fails
the format.
"""

from __future__ import annotations

from typing import Any

import pytest

from scorecore import ScoreResult
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore.scorers import answer_relevancy, faithfulness, hallucination
from scorecore_adapters.openai import OpenAIChatModel

pytestmark = [pytest.mark.real_model, pytest.mark.anyio, pytest.mark.usefixtures("allow_requests")]

CONTEXT = ["The Riverside library opens at 9:00 on weekdays and at 10:00 on Saturdays. "
           "It is closed on Sundays."]
QUESTION = "When does the Riverside library open on Saturdays?"
ANSWER = "On Saturdays the Riverside library opens at 10:00. It is closed on Sundays."
SLOW = 600.0  # seconds per judge call


def _said(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": {"format": 2, "parts": [{"type": "text", "text": text}]}}


async def test_the_default_model_negotiates_json_object(
    anyio_backend: str, llama_server_url: str
) -> None:
    """llama_cpp.server refuses json_schema (as a 500 naming response_format) and takes
    json_object with the schema: "auto" settles there, and the reply is schema-valid JSON."""
    schema = {"type": "object", "properties": {"verdict": {"type": "string",
              "enum": ["yes", "no"]}}, "required": ["verdict"]}
    request = JudgeRequest(
        messages=(JudgeMessage(role="user", content="Is Paris in France? Answer yes or no."),),
        output_schema=schema, native_schema=True,
    )
    async with OpenAIChatModel("smollm2", base_url=llama_server_url, timeout=SLOW) as model:
        reply = (await model.generate(request)).unwrap()
        assert model.negotiated_structured_output == "json_object"
    assert reply.structured_output == "json_object"
    assert reply.text.strip().startswith("{")


def _executions(result: ScoreResult[Any, Any]) -> list[Any]:
    return [e for es in result.judge.values() for e in es]


async def test_builtin_llm_scorers_score_end_to_end_with_default_settings(
    anyio_backend: str, llama_server_url: str
) -> None:
    """faithfulness, answer_relevancy and hallucination run against the real server with the
    default OpenAIChatModel (no settings: the default output cap, the default timeout): each
    run completes (scored, or not scorable when its reply restated the prompt's worked example
    and the reply asked again without it found nothing to judge), at least one with a score,
    and every judge execution succeeded in json_object mode.

    The server samples at its default temperature (0.8) with no seed, so a reply may now and
    then need the core's one format retry (a small model listing verdicts past the output
    cap): allowed here, and counted by benchmarks/real_judge.py (docs/local-judges.md)."""
    results = await _score(llama_server_url)
    for scorer_id, result in results:
        executions = _executions(result)
        assert executions, scorer_id
        assert all(e.status == "success" for e in executions), scorer_id
        assert all(e.structured_output == "json_object" for e in executions), scorer_id
        assert all(e.attempt_count <= 2 for e in executions), (scorer_id, executions)
        assert (result.score is None) != (result.not_scorable is None), scorer_id
        assert result.score is None or 0.0 <= result.score <= 1.0
    assert any(result.score is not None for _, result in results), results


async def _score(url: str) -> list[tuple[str, ScoreResult[Any, Any]]]:
    run = {"input": {"inputMessages": [_said("user", QUESTION)]},
           "output": [_said("assistant", ANSWER)]}
    # Nothing set but the timeout, the documented knob for a slow local model: on a CI runner
    # a call takes seconds, on a shared 2-core machine under load a minute or more.
    async with OpenAIChatModel("smollm2", base_url=url, timeout=SLOW) as model:
        scorers = [faithfulness(model, context=CONTEXT), answer_relevancy(model),
                   hallucination(model, context=CONTEXT)]
        return [(scorer.id, (await scorer.run(**run)).unwrap()) for scorer in scorers]
