"""Laws of the code scorers over arbitrary text and agent runs (hypothesis)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import AgentInput, AgentOutput, Scorer
from scorecore.scorers import (
    TEXT,
    checks,
    completeness,
    content_similarity,
    keyword_coverage,
    textual_difference,
    tone,
    tool_call_accuracy,
)
from scorecore.scorers._strings import dice_coefficient, lcs_ratio, utf16_units
from tests import strategies as sts

# Any code point, astral ones and JavaScript-only whitespace included; lone surrogates too.
ANY_TEXT = st.text(st.characters(), max_size=40) | st.text(
    st.sampled_from("ab 😀\t\u00a0\ufeff\x1c\x85\ud800é"), max_size=12)
# Lone surrogates cannot reach a scorer through Python strings made of real text; they can
# through JSON ("\ud800"), so they are included above.
TEXT_SCORERS: list[Scorer[str, str]] = [
    completeness(shape=TEXT), content_similarity(shape=TEXT),
    content_similarity(ignore_case=False, ignore_whitespace=False, shape=TEXT),
    textual_difference(shape=TEXT), keyword_coverage(shape=TEXT),
]
OUTPUT_SCORERS: list[Scorer[Any, str]] = [
    tone(shape=TEXT), tone(reference_tone="I love it", shape=TEXT),
    checks.includes("a", shape=TEXT), checks.excludes("a", shape=TEXT),
    checks.equals("a", shape=TEXT), checks.matches("a+", shape=TEXT),
    checks.similarity("ab", shape=TEXT),
]
AGENT_SCORERS: list[Scorer[AgentInput, AgentOutput]] = [
    completeness(), content_similarity(), textual_difference(), keyword_coverage(), tone(),
    tool_call_accuracy(expected_tool="a"), tool_call_accuracy(expected_tool_order=["a", "b"]),
    checks.includes("a"), checks.called_tool("a"), checks.did_not_call("a"),
    checks.tool_order(["a", "b"]), checks.max_tool_calls(1), checks.used_no_tools(),
    checks.no_tool_errors(),
]
PASS_FAIL = {s.id for s in AGENT_SCORERS + OUTPUT_SCORERS if s.id.startswith("check-")} | {
    "code-tool-call-accuracy-scorer"}


@pytest.mark.parametrize("similarity", [dice_coefficient, lcs_ratio],
                         ids=["dice", "lcs_ratio"])
@given(a=ANY_TEXT, b=ANY_TEXT)
def test_string_similarities_are_symmetric_and_bounded(
    similarity: Callable[[str, str], float], a: str, b: str
) -> None:
    """Dice and the LCS ratio are symmetric, within [0, 1], and 1 on equal texts."""
    value = similarity(a, b)
    assert value == similarity(b, a)
    assert 0.0 <= value <= 1.0
    assert similarity(a, a) == 1.0


@given(ANY_TEXT)
def test_utf16_units_count_like_javascript(text: str) -> None:
    """One char per UTF-16 code unit, in order: astral characters become their surrogates."""
    units = utf16_units(text)
    encoded = text.encode("utf-16-le", "surrogatepass")
    assert len(units) == len(encoded) // 2
    assert units.encode("utf-16-le", "surrogatepass") == encoded


def _outcome(scorer: Scorer[Any, Any], **run: Any) -> Any:
    result = anyio.run(lambda: scorer.run(**run))
    return result.unwrap()  # never a failure


@given(ANY_TEXT, ANY_TEXT)
def test_text_scores_are_fractions_or_not_scorable(source: str, answer: str) -> None:
    """Every text scorer scores within [0, 1] or says why it cannot; checks give 0 or 1."""
    for scorer in TEXT_SCORERS:
        result = _outcome(scorer, input=source, output=answer)
        assert (result.score is None) != (result.not_scorable is None)
        assert result.score is None or 0.0 <= result.score <= 1.0
    for check in OUTPUT_SCORERS:
        result = _outcome(check, input=None, output=answer)
        assert result.score is not None or result.not_scorable is not None
        if check.id.startswith("check-"):
            assert result.score in (0.0, 1.0)


@given(ANY_TEXT.filter(lambda t: t.strip(" \t\n\r\x0b\x0c\u00a0\ufeff")))
def test_a_text_equals_itself(text: str) -> None:
    """textual_difference and content_similarity score a text against itself 1; so do
    completeness and keyword_coverage whenever they can score it."""
    for scorer in TEXT_SCORERS:
        result = _outcome(scorer, input=text, output=text)
        if scorer.id in ("textual-difference-scorer", "content-similarity-scorer"):
            assert result.score == 1.0
        else:
            assert result.score in (1.0, None)


@given(sts.agent_inputs, sts.agent_outputs)
def test_agent_runs_never_fail(agent_input: AgentInput, output: AgentOutput) -> None:
    """On any agent run every agent scorer scores within [0, 1] or is not scorable; the
    pass/fail ones give exactly 0 or 1."""
    for scorer in AGENT_SCORERS:
        result = _outcome(scorer, input=agent_input, output=output)
        if result.score is None:
            assert result.not_scorable is not None
            assert result.not_scorable.reason
        elif scorer.id in PASS_FAIL:
            assert result.score in (0.0, 1.0)
        else:
            assert 0.0 <= result.score <= 1.0


@given(st.lists(st.sampled_from("abc"), max_size=6), st.lists(st.sampled_from("abc"),
                                                                min_size=1, max_size=3))
def test_strict_order_implies_relaxed(calls: list[str], order: list[str]) -> None:
    """Whenever strict tool order passes, relaxed passes; a relaxed pass implies the check's
    subsequence rule passes."""
    from tests.scorers.helpers import called  # noqa: PLC0415 - keeps the module imports short

    output = called(*calls)
    strict = _outcome(tool_call_accuracy(expected_tool_order=order, strict_mode=True),
                      input=AgentInput(), output=output).score
    relaxed = _outcome(tool_call_accuracy(expected_tool_order=order),
                       input=AgentInput(), output=output).score
    subsequence = _outcome(checks.tool_order(order), input=AgentInput(), output=output).score
    assert strict <= relaxed <= subsequence
