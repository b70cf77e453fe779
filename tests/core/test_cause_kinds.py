"""Every failure cause has a stable ``kind``: a class constant, unique, documented, and the tag
stored causes carry (so renaming a class never changes a stored row)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import attrs
from hypothesis import assume, given

from scorecore import (
    BudgetExhausted,
    ExampleEcho,
    InputMismatch,
    InvalidScore,
    InvalidStepValue,
    JudgeFailed,
    JudgeOutputInvalid,
    PrepareRunFailed,
    ProcessorAborted,
    RunFailureCause,
    StepFailed,
    StepRaised,
)
from scorecore._core._causes import cause_classes
from scorecore._core._convert import converter
from scorecore.evals import ScoreRow
from scorecore.evals._rows._row import stored_cause
from scorecore.evals.store import storable_row
from scorecore.scorers import PanelFailed
from tests import strategies as sts

DOCS = Path(__file__).parents[2] / "docs" / "scorers.md"

# Pinned: a kind is stored in rows, so changing one is a breaking change of the stored format.
KINDS: dict[str, type[Any]] = {
    "budget_exhausted": BudgetExhausted,
    "example_echo": ExampleEcho,
    "input_mismatch": InputMismatch,
    "invalid_score": InvalidScore,
    "invalid_step_value": InvalidStepValue,
    "judge_failed": JudgeFailed,
    "judge_output_invalid": JudgeOutputInvalid,
    "panel_failed": PanelFailed,
    "prepare_run_failed": PrepareRunFailed,
    "processor_aborted": ProcessorAborted,
    "step_failed": StepFailed,
    "step_raised": StepRaised,
}


def test_every_cause_has_its_own_stable_kind() -> None:
    """Each cause class declares its kind itself (a class constant, not derived from its
    name); the kinds are the pinned ones and no two classes share one."""
    classes = get_args(RunFailureCause)
    assert cause_classes() == KINDS
    assert len({cls.kind for cls in classes}) == len(classes)
    for kind, cls in KINDS.items():
        assert vars(cls)["kind"] == kind
        assert "kind" not in attrs_fields(cls)  # a constant of the class, not a field


def attrs_fields(cls: type[Any]) -> set[str]:
    return {field.name for field in cls.__attrs_attrs__}


def test_the_kinds_are_documented() -> None:
    """docs/scorers.md's table of cause kinds lists exactly the kinds, each with its class."""
    section = DOCS.read_text(encoding="utf-8").split("### Cause kinds", 1)[1].split("\n## ")[0]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \|$", section, re.MULTILINE)
    assert dict(rows) == {kind: cls.__name__ for kind, cls in KINDS.items()}


@given(sts.run_failure_causes | sts.panel_failures)
def test_a_stored_cause_is_tagged_with_its_kind(cause: RunFailureCause) -> None:
    """A cause unstructures tagged with its kind and structures back to the same value."""
    data = converter.unstructure(cause, RunFailureCause)
    assert data["cause"] == cause.kind
    assert converter.structure(data, RunFailureCause) == cause


@given(sts.run_failure_causes | sts.panel_failures)
def test_a_cause_stored_under_its_class_name_still_reads(cause: RunFailureCause) -> None:
    """Rows and judge executions written before kinds were tags carry the class name: they
    read back to the same value."""
    data = converter.unstructure(cause, RunFailureCause)

    def renamed(value: Any) -> Any:
        if isinstance(value, dict):
            out = {k: renamed(v) for k, v in value.items()}
            if "cause" in out and isinstance(out["cause"], str):
                out["cause"] = cause_classes()[out["cause"]].__name__
            return out
        if isinstance(value, list):
            return [renamed(v) for v in value]
        return value

    old = renamed(data)
    assert old["cause"] == type(cause).__name__
    assert converter.structure(old, RunFailureCause) == cause


@given(sts.run_failure_causes | sts.panel_failures)
def test_a_row_reads_back_the_cause_it_stores(cause: RunFailureCause) -> None:
    """Any cause stored in a row (as every store keeps it) reads back to the same value."""
    row = storable_row(ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b",
                                status="failed",
                                metadata={"cause": stored_cause(cause, "analyze")}))
    assume("sanitized" not in (row.metadata or {}))  # a NUL is replaced: another value
    assert json.loads(json.dumps(row.metadata)) == row.metadata
    assert row.failure_cause() == cause
    assert attrs.evolve(row, status="scored").failure_cause() is None
