"""Traces written by real instrumentation libraries give the agent run that was recorded.

Every row of ``fixtures/instrumentations/`` (a library in one mode, recorded around the same
weather-agent run by ``.ci/instrumentations/record.py``) is scored with ``scorecore eval-traces``
as a user would score it, from JSON lines and from protobuf: exactly one agent run, with the
question, the system prompt, the answer and the tool call (name, arguments, result, or the
error when the tool failed), and the same scores from a fixed set of code scorers as the
recorded run itself gets. A row the reader does not understand yet fails here.
"""

from __future__ import annotations

import pytest

from tests.traces.conformance import (
    ENCODINGS,
    VARIANTS,
    expected,
    reading,
    rows,
    run_differences,
    score_differences,
)
from tests.traces.render_matrix import PAGE, matrix, page_with

CASES = [pytest.param(row, variant, encoding, id=f"{row}-{variant}-{encoding}")
         for row in rows() for variant in VARIANTS for encoding in ENCODINGS]


def test_rows_are_recorded() -> None:
    """The matrix is not empty: a lost fixtures folder fails instead of passing vacuously."""
    assert len(rows()) >= 5


@pytest.mark.parametrize(("row", "variant", "encoding"), CASES)
def test_agent_run_is_the_recorded_one(row: str, variant: str, encoding: str) -> None:
    """eval-traces reads one agent run with the recorded question, system prompt, answer and
    tool call from the row's files."""
    read = reading(row, variant, encoding)
    assert run_differences(expected(row, variant), read) == [], (
        f"{read.command}\n{read.said}\nread: {read.runs}")


@pytest.mark.parametrize(("row", "variant", "encoding"), CASES)
def test_scores_are_the_recorded_runs(row: str, variant: str, encoding: str) -> None:
    """The code scorers give the row's agent run the scores of the recorded run itself, so
    every library scores the same."""
    read = reading(row, variant, encoding)
    assert score_differences(expected(row, variant), read) == [], (
        f"{read.command}\n{read.said}")


def test_docs_matrix_is_the_generated_one() -> None:
    """docs/otel.md's instrumentation table is what render_matrix.py makes from these checks
    (run ``python tests/traces/render_matrix.py`` after a reader or fixture change)."""
    page = PAGE.read_text(encoding="utf-8")
    assert page_with(matrix(), page) == page
