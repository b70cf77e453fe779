"""Scorer.fingerprint: stable across processes, changed by any edit of the definition."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import (
    JudgeConfig,
    ModelSettings,
    PromptStep,
    ScorePromptStep,
    ScorerDefinitionError,
    StepJudge,
    create_scorer,
)
from scorecore_adapters.testing import ScriptedJudge
from tests.judged_scorers import ANALYZE_SCHEMA

# A scorer module written to a file, so other processes build the very same definition.
_SCORER_SOURCE = textwrap.dedent('''
    from scorecore import JudgeConfig, ModelSettings, PromptStep, ScorePromptStep, create_scorer
    from scorecore_adapters.testing import ScriptedJudge

    THRESHOLD = 0.5

    def preprocess(ctx):
        words = [w.lower() for w in str(ctx.run.output).split()]
        return {"words": words, "n": len(words)}

    def reason(ctx):
        return f"score {ctx.score:.2f} with {ctx.results.preprocess_step_result['n']} words"

    def build(instructions="Grade it.", temperature=0.0, schema_extra=None, version=None,
              prompt="Claims in: {}"):
        schema = {"type": "object", "properties": {"claims": {"type": "array"}},
                  "required": ["claims"]}
        if schema_extra:
            schema["properties"].update(schema_extra)
        judge = JudgeConfig(model=ScriptedJudge([], model_id="gpt-4o-mini"),
                            instructions=instructions,
                            model_settings=ModelSettings(temperature=temperature))
        return (
            create_scorer(id="claims", description="d", judge=judge, version=version)
            .preprocess(preprocess)
            .analyze(PromptStep(description="claims", output_schema=schema,
                                create_prompt=lambda ctx: prompt.format(ctx.run.output)))
            .generate_score(ScorePromptStep(
                description="score", create_prompt=lambda ctx: "Score it",
                calculate_score=lambda ctx: 1.0 if ctx.judge_output["score"] > THRESHOLD else 0.0,
            ))
            .generate_reason(reason)
        )
''')


@pytest.fixture(scope="module")
def scorer_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fp")
    (directory / "fp_scorer.py").write_text(_SCORER_SOURCE)
    return directory


def _load(directory: Path) -> Any:
    sys.path.insert(0, str(directory))
    try:
        import fp_scorer  # type: ignore[import-not-found]  # noqa: PLC0415
    finally:
        sys.path.remove(str(directory))
    return fp_scorer


def test_the_fingerprint_is_the_same_in_other_processes(scorer_module: Path) -> None:
    """Three interpreters with different hash seeds compute this process's fingerprint."""
    here = _load(scorer_module).build().fingerprint
    script = "import fp_scorer; print(fp_scorer.build().fingerprint)"
    seen = set()
    for seed in ("0", "7", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed,
                   PYTHONPATH=os.pathsep.join([str(scorer_module), *sys.path]))
        out = subprocess.run(  # noqa: S603 - our own interpreter
            [sys.executable, "-c", script], capture_output=True, text=True, env=env,
            check=True, timeout=120,
        )
        seen.add(out.stdout.strip())
    assert seen == {here}


def test_rebuilding_the_same_definition_keeps_it(scorer_module: Path) -> None:
    """No edit, no change: two builds (new lambdas, new judge objects) are equal."""
    module = _load(scorer_module)
    assert module.build().fingerprint == module.build().fingerprint


@pytest.mark.parametrize("edit", [
    {"instructions": "Grade it strictly."},
    {"temperature": 0.2},
    {"schema_extra": {"why": {"type": "string"}}},
    {"version": "2"},
    {"prompt": "List the claims in: {}"},
])
def test_any_edit_changes_it(scorer_module: Path, edit: dict[str, Any]) -> None:
    """Instructions, settings, schema, version, a value a prompt closes over."""
    module = _load(scorer_module)
    assert module.build(**edit).fingerprint != module.build().fingerprint


def _scorer(**kw: Any) -> Any:
    judge = JudgeConfig(model=kw.get("model", ScriptedJudge([])), instructions="Grade.")
    builder = create_scorer(id=kw.get("id", "s"), description="d", judge=judge,
                            version=kw.get("version"))
    analyze = kw.get("analyze")
    if analyze is not None:
        builder = builder.analyze(analyze)
    return builder.generate_score(kw.get("score", lambda ctx: 1.0))


def test_code_edits_change_it() -> None:
    """A function step's body, a constant, a name it reads, a nested function, a step added."""
    variants = [
        _scorer(score=lambda ctx: 1.0),
        _scorer(score=lambda ctx: 0.5),
        _scorer(score=lambda ctx: float(ctx.run.output == "x")),
        _scorer(score=lambda ctx: float(ctx.run.input == "x")),
        # a nested function (a code object among the constants) whose body differs
        _scorer(score=lambda ctx: (lambda: 1.0)()),  # noqa: PLC3002
        _scorer(score=lambda ctx: (lambda: 2.0)()),  # noqa: PLC3002
        _scorer(id="t"),
        _scorer(model=ScriptedJudge([], model_id="other"), analyze=PromptStep(
            description="a", output_schema=ANALYZE_SCHEMA, create_prompt=lambda ctx: "p")),
        _scorer(analyze=PromptStep(
            description="a", output_schema=ANALYZE_SCHEMA, create_prompt=lambda ctx: "p")),
        _scorer(analyze=PromptStep(
            description="b", output_schema=ANALYZE_SCHEMA, create_prompt=lambda ctx: "p")),
        _scorer(analyze=lambda ctx: 1),
    ]
    prints = [s.fingerprint for s in variants]
    assert len(set(prints)) == len(prints)


def test_step_judge_overrides_count() -> None:
    """A step's own judge settings are part of the definition."""
    def build(temp: float) -> Any:
        return create_scorer(id="s", description="d", judge=JudgeConfig(
            model=ScriptedJudge([]), instructions="Grade.",
        )).generate_score(ScorePromptStep(
            description="s", create_prompt=lambda ctx: "p",
            judge=StepJudge(model_settings=ModelSettings(temperature=temp)),
        ))

    assert build(0.0).fingerprint != build(1.0).fingerprint
    assert build(0.0).fingerprint == build(0.0).fingerprint


@given(st.text(), st.text())
def test_versions_and_prompts_are_told_apart(a: str, b: str) -> None:
    """Any two different versions, or prompt texts, give different fingerprints."""
    def build(version: str, text: str) -> Any:
        return create_scorer(id="s", description="d", version=version, judge=JudgeConfig(
            model=ScriptedJudge([]), instructions="Grade.",
        )).generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: text))

    assert (build(a, "p").fingerprint == build(b, "p").fingerprint) == (a == b)
    assert (build("1", a).fingerprint == build("1", b).fingerprint) == (a == b)


def test_a_non_str_version_is_refused() -> None:
    """version names the field and the value."""
    with pytest.raises(ScorerDefinitionError, match=r"version must be a str or None, got 3"):
        create_scorer(id="s", description="d", version=3)  # type: ignore[call-overload]


def test_odd_closures_still_fingerprint() -> None:
    """A step closing over an object, a huge int, a deep list or itself still has a print."""
    deep: list[Any] = []
    node = deep
    for _ in range(200):
        node.append([])
        node = node[0]
    sentinel = object()
    huge = 10**5000

    def step(ctx: Any) -> float:
        _ = (sentinel, huge, deep, step)
        return 1.0

    fp = create_scorer(id="s", description="d").generate_score(step).fingerprint
    assert len(fp) == 64
