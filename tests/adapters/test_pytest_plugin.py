"""The pytest plugin, run as users run it (pytester): fixtures, readable failures, inertness."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

BACKENDS = '''
import pytest

@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param
'''

SCORER = '''
from scorecore import JudgeConfig, ScorePromptStep, create_scorer


def helpfulness(judge):
    return create_scorer(
        id="helpfulness", description="d",
        judge=JudgeConfig(model=judge, instructions="Be strict."),
    ).generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "rate it"))
'''


def test_fixtures_work_on_both_backends(pytester: pytest.Pytester) -> None:
    """scripted_judge, virtual_runtime, memory_store and memory_cache are there without any
    import or conftest, fresh for each test, and tests using them pass on asyncio and trio."""
    pytester.makeconftest(BACKENDS)
    pytester.makepyfile(SCORER + '''
import pytest
from scorecore.evals import run_evals
from scorecore_adapters.testing import InMemoryScoreStore, ScriptedJudge, VirtualClock


@pytest.mark.anyio
async def test_score(scripted_judge, virtual_runtime):
    judge = scripted_judge([{"score": 0.75}])
    runtime, clock = virtual_runtime
    assert isinstance(judge, ScriptedJudge) and isinstance(clock, VirtualClock)
    result = await helpfulness(judge).run(input="q", output="a", runtime=runtime)
    assert result.unwrap().score == 0.75
    assert result.unwrap().run.run_id == "run-1"


@pytest.mark.anyio
async def test_store(scripted_judge, memory_store):
    assert isinstance(memory_store, InMemoryScoreStore)
    scorer = helpfulness(scripted_judge([{"score": 1}]))
    report = await run_evals([{"input": 1, "output": 1}], [scorer], store=memory_store,
                             batch_id="b")
    assert report.passed
    assert [r.score for r in await memory_store.list_run("b")] == [1.0]


@pytest.mark.anyio
async def test_cache(scripted_judge, memory_cache):
    from scorecore import Runtime
    from scorecore.judge.economics import JudgeMeter

    judge = scripted_judge([{"score": 0.5}])
    meter = JudgeMeter(cache=memory_cache)
    for _ in range(3):
        result = await helpfulness(judge).run(input="q", output="a", runtime=Runtime(meter=meter))
        assert result.unwrap().score == 0.5
    assert (judge.calls, len(memory_cache)) == (1, 1)


def test_fresh_per_test(memory_store, virtual_runtime, memory_cache):
    assert len(memory_store.rows) == 0
    assert virtual_runtime[1]() == 0.0
    assert len(memory_cache) == 0
''')
    result = pytester.runpytest("-p", "anyio")
    result.assert_outcomes(passed=7)


FAILING = SCORER + '''
import re
from returns.result import Success
from scorecore.evals import run_evals
from scorecore_adapters.testing import assert_passes, assert_scored, judge_error


def broken(scripted_judge):
    return helpfulness(scripted_judge([judge_error(401, code="invalid_api_key")]))


def test_unwrap(scripted_judge):
    broken(scripted_judge).run_sync(input="q", output="a").unwrap()


def test_compare(scripted_judge):
    assert broken(scripted_judge).run_sync(input="q", output="a") == Success(1.0)


def test_assert_scored(scripted_judge):
    assert_scored(broken(scripted_judge).run_sync(input="q", output="a"), min_score=0.5)


def test_assert_passes(scripted_judge):
    data = [{"input": i, "output": i, "id": f"item-{i}"} for i in range(2)]
    judge = scripted_judge([{"score": 1}, judge_error(401, code="invalid_api_key")])
    report = run_evals_sync(data, [helpfulness(judge)], keep_results=True, concurrency=1)
    assert_passes(report, min_completion_rate=0.9)
'''


def test_failures_name_the_scorer_step_and_cause(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unwrap, an == on a failed run, assert_scored and assert_passes each fail with the
    scorer, the failed step and the cause on screen (the E lines and the short summary)."""
    monkeypatch.setenv("COLUMNS", "400")  # the short summary is cut to the terminal's width
    pytester.makepyfile(FAILING.replace(
        "from scorecore.evals import run_evals",
        "from scorecore.evals import run_evals, run_evals_sync"))
    result = pytester.runpytest("-rf")
    result.assert_outcomes(failed=4)
    cause = "judge call failed after 1 call(s) (not retryable): auth, HTTP 401*"
    result.stdout.fnmatch_lines([
        "E *.UnwrapFailedError: scorer 'helpfulness' failed at step 'generate_score'*",
        "FAILED *::test_unwrap - *UnwrapFailedError: scorer 'helpfulness' failed*",
    ])
    e_lines = [line for line in result.outlines if line.startswith("E ")]
    # Once, for the one == on a failed run (E lines only: under CI=true pytest also prints
    # whole messages in the short summary).
    assert sum("the left side is a failed scorer run: scorer 'helpfulness'" in line
               for line in e_lines) == 1
    result.stdout.fnmatch_lines([
        "E *scorer * | score | reason | cause",
        f"E *helpfulness | - * | - * | generate_score: {cause}",
    ])
    result.stdout.fnmatch_lines([
        "E *AssertionError: the scorer run failed: scorer 'helpfulness' failed*",
    ])
    result.stdout.fnmatch_lines([
        "E *AssertionError: eval report failed:",
        "E *helpfulness: completion rate 50.0% below min_completion_rate 90.0% (1 of 2 runs "
        "failed)",
        "E *item * | scorer * | score | reason | cause",
        f"E *item-1 | helpfulness | - * | - * | generate_score: {cause}",
    ])


def test_without_the_plugin_unwrap_is_bare(pytester: pytest.Pytester) -> None:
    """The readable unwrap is the plugin's doing: with it disabled, pytest prints returns'
    bare UnwrapFailedError."""
    pytester.makepyfile(SCORER + """
from scorecore_adapters.testing import ScriptedJudge, judge_error


def test_unwrap():
    judge = ScriptedJudge([judge_error(401, code="invalid_api_key")])
    helpfulness(judge).run_sync(input="q", output="a").unwrap()
""")
    result = pytester.runpytest("-p", "no:scorecore")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E * returns.primitives.exceptions.UnwrapFailedError"])
    assert "E           returns.primitives.exceptions.UnwrapFailedError" in result.outlines
    assert "failed at step" not in "\n".join(
        line for line in result.outlines if line.startswith("E ")
    )


def test_no_effect_when_unused(pytester: pytest.Pytester) -> None:
    """In a suite that never uses it, the plugin is registered yet imports nothing of
    scorecore, and other failures read exactly as without it."""
    pytester.makepyfile('''
import sys
from returns.result import Failure


def test_inert(request):
    assert request.config.pluginmanager.has_plugin("scorecore")
    assert not [m for m in sys.modules if m == "scorecore" or m.startswith("scorecore.")]


def test_other_unwrap():
    Failure(ValueError("plain")).unwrap()


def test_other_compare():
    assert Failure(ValueError("plain")) == 1
''')
    with_plugin = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    with_plugin.assert_outcomes(passed=1, failed=2)
    # In-process is enough here (and faster): only the E lines are compared.
    without = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:scorecore",
                                 "-k", "not inert")
    without.assert_outcomes(failed=2)

    def e_lines(lines: list[str]) -> list[str]:
        return [line for line in lines if line.startswith("E ")]

    assert e_lines(with_plugin.outlines) == e_lines(without.outlines)


def test_real_model_requests_stay_refused(pytester: pytest.Pytester) -> None:
    """Inside a test the real HTTP judges still refuse to send anything (no network touched)."""
    pytester.makepyfile('''
from scorecore_adapters.openai import OpenAIChatModel


def test_refused(scripted_judge):
    from scorecore import JudgeConfig, ScorePromptStep, create_scorer
    scorer = create_scorer(
        id="live", description="d",
        judge=JudgeConfig(model=OpenAIChatModel("gpt-4o-mini", api_key="sk-test",
                                                base_url="http://127.0.0.1:9"),
                          instructions="x"),
    ).generate_score(ScorePromptStep(description="r", create_prompt=lambda ctx: "rate"))
    error = scorer.run_sync(input="q", output="a").failure()
    assert error.cause.error.code == "model_requests_disabled"
''')
    pytester.runpytest().assert_outcomes(passed=1)


REAL_MODEL_TESTS = '''
import pytest


@pytest.mark.real_model
def test_marked():
    import llama_cpp
    assert llama_cpp.__name__ == "llama_cpp"


def test_fixture(llama_server_url):
    raise AssertionError("the fixture cannot start a server without llama_cpp")


def test_unmarked():
    pass
'''

# llama_cpp hidden (None in sys.modules makes its import raise ModuleNotFoundError), or
# replaced by an empty module that imports fine.
HIDE_LLAMA_CPP = '''
import os, sys, types
if os.environ.get("FAKE_LLAMA_CPP"):
    sys.modules["llama_cpp"] = types.ModuleType("llama_cpp")
else:
    sys.modules["llama_cpp"] = None
'''


def test_real_model_tests_skip_without_llama_cpp_with_the_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Locally, a missing llama_cpp skips the marked test and the server fixture, saying why."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("FAKE_LLAMA_CPP", raising=False)
    pytester.makeconftest(HIDE_LLAMA_CPP)
    pytester.makepyfile(REAL_MODEL_TESTS)
    result = pytester.runpytest_subprocess("-rs", "--strict-markers")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines([
        "*the real_model test test_marked needs llama-cpp-python*scorecore?local?*",
        "*the llama_server_url fixture needs llama-cpp-python*",
    ])


def test_real_model_tests_fail_in_ci_without_llama_cpp(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under CI=true a missing llama_cpp fails the tests instead of skipping them."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("FAKE_LLAMA_CPP", raising=False)
    pytester.makeconftest(HIDE_LLAMA_CPP)
    pytester.makepyfile(REAL_MODEL_TESTS)
    result = pytester.runpytest_subprocess("-rfE")
    result.assert_outcomes(passed=1, errors=2)  # failed in set-up, before the test body
    result.stdout.fnmatch_lines([
        "*test_marked needs llama-cpp-python*real-model tests never skip in CI*",
        "*llama_server_url fixture needs llama-cpp-python*real-model tests never skip in CI*",
    ])


def test_real_model_tests_run_when_llama_cpp_imports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With llama_cpp importable the marked test runs (it is not skipped for any other reason)."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("FAKE_LLAMA_CPP", "1")
    pytester.makeconftest(HIDE_LLAMA_CPP)
    pytester.makepyfile(REAL_MODEL_TESTS)
    result = pytester.runpytest_subprocess("-k", "marked or unmarked")
    result.assert_outcomes(passed=2)
