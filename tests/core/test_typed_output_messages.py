"""mypy's wording for common scorer mistakes: checked by running mypy on a small user module."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="mypy is a dev dependency")

ROOT = Path(__file__).resolve().parents[2]

USER_MODULE = textwrap.dedent('''
    from __future__ import annotations

    from typing import Any

    import attrs

    from scorecore import PromptStep, StepContext, create_scorer


    @attrs.frozen
    class Claims:
        claims: list[str]


    scorer = create_scorer(id="s", description="d")


    def str_score(ctx: StepContext[Any, Any, None, None]) -> str:
        return "high"


    scorer.generate_score(str_score)  # LINE:named
    scorer.generate_score(lambda ctx: "high")  # LINE:lambda


    async def fetch(ctx: Any) -> list[str]:
        return []


    scorer.preprocess(fetch).generate_score(
        lambda ctx: len(ctx.results.preprocess_step_result.nonexistent)  # LINE:async
    )
    scorer.analyze(PromptStep(
        description="claims", output_type=Claims, create_prompt=lambda ctx: "List claims",
    )).generate_score(
        lambda ctx: len(ctx.results.analyze_step_result.claim)  # LINE:typo
    )
''')


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """mypy --strict's messages on USER_MODULE, by the LINE: tag of the line they are on."""
    path = tmp_path_factory.mktemp("user") / "user_scorer.py"
    path.write_text(USER_MODULE)
    stdout, stderr, _status = mypy_api.run([
        "--config-file", str(ROOT / "mypy.ini"), "--no-error-summary", "--show-error-codes",
        "--cache-dir", str(ROOT / ".mypy_cache"), str(path),
    ])
    assert not stderr, stderr
    tags = {
        number: match.group(1)
        for number, line in enumerate(USER_MODULE.splitlines(), start=1)
        if (match := re.search(r"# LINE:(\w+)", line))
    }
    by_tag: dict[str, list[str]] = {tag: [] for tag in tags.values()}
    for line in stdout.splitlines():
        match = re.match(r".*user_scorer\.py:(\d+): (?:error|note): (.*)", line)
        if match and int(match.group(1)) in tags:
            by_tag[tags[int(match.group(1))]].append(match.group(2))
    return by_tag


def test_a_named_str_score_function_is_reported_against_float(
    mypy_output: dict[str, list[str]],
) -> None:
    """The message names float as the expected return, and no Coroutine."""
    messages = " ".join(mypy_output["named"])
    assert "incompatible type" in messages
    assert "float | NotScorable" in messages
    assert "Coroutine" not in messages
    assert "Awaitable" not in messages


def test_a_str_score_lambda_is_reported_against_float(mypy_output: dict[str, list[str]]) -> None:
    """A lambda's wrong return is reported as a str where float was expected."""
    messages = mypy_output["lambda"]
    assert any('got "str", expected "float | NotScorable' in m for m in messages), messages
    assert not any("Coroutine" in m or "Awaitable" in m for m in messages), messages


def test_an_async_step_on_an_untyped_scorer_keeps_its_type(
    mypy_output: dict[str, list[str]],
) -> None:
    """list[str] reaches the next step, so a missing attribute is an error (not Any)."""
    messages = " ".join(mypy_output["async"])
    assert '"list[str]" has no attribute "nonexistent"' in messages


def test_a_field_typo_after_a_typed_prompt_step_is_an_error(
    mypy_output: dict[str, list[str]],
) -> None:
    """The typed judge output reaches the next step; a typo in a field name is reported."""
    messages = " ".join(mypy_output["typo"])
    assert '"Claims" has no attribute "claim"' in messages
