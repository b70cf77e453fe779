"""A reply that restates the prompt's worked example instead of judging the run is a format
failure: the step is asked again without the example, and a second echo makes the run not
scorable with kind ``example_echo``."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import (
    ExampleEcho,
    JudgeConfig,
    PromptStep,
    ScorePromptStep,
    ScorerDefinitionError,
    create_scorer,
    from_mastra_json,
    to_mastra_json,
)
from scorecore.evals import ScoreRow
from scorecore.judge import WorkedExample
from scorecore.scorers import faithfulness
from scorecore.traces import ScoreRecord
from scorecore_adapters.testing import ScriptedJudge

pytestmark = pytest.mark.anyio

EXAMPLE_TEXT = ('\n\nExample:\nAnswer: "The Eiffel Tower is 330 m tall."\nReply: {"claims": '
                '["The Eiffel Tower is 330 m tall."]}')
EXAMPLE = WorkedExample(text=EXAMPLE_TEXT, statements=("The Eiffel Tower is 330 m tall.",))
ECHO = {"claims": ["The Eiffel Tower is 330 m tall."]}


@attrs.frozen
class Claims:
    claims: list[str]


def claims_scorer(judge: Any) -> Any:
    return (
        create_scorer(id="claims", description="d",
                      judge=JudgeConfig(model=judge, instructions="Be strict."))
        .analyze(PromptStep(
            description="claims", output_type=Claims, example=EXAMPLE,
            create_prompt=lambda ctx: f"List the claims.{EXAMPLE_TEXT}\n\nAnswer: "
                                      f"{ctx.run.output}"))
        .generate_score(lambda ctx: float(len(ctx.results.analyze_step_result.claims)))
    )


def user_prompt(request: Any) -> str:
    return str(request.messages[-1].content)


async def test_an_echoing_reply_is_asked_again_without_the_example() -> None:
    """A valid reply that restates the example is not the score: the second attempt is sent
    without the example (and says why) and its reply is the step's result."""
    judge = ScriptedJudge([ECHO, {"claims": ["Rome is in Italy.", "It has 2.8M people."]}])
    result = (await claims_scorer(judge).run(input="q", output="Rome is in Italy, 2.8M people."))
    scored = result.unwrap()
    assert scored.score == 2.0
    assert judge.calls == 2
    first, second = (user_prompt(r) for r in judge.requests)
    assert "Eiffel" in first
    assert "Eiffel" not in second
    assert "Rome is in Italy" in second
    assert "no example here" in second
    (execution,) = scored.judge["analyze"]
    assert execution.status == "success"
    assert execution.attempt_count == 2


async def test_two_echoes_make_the_run_not_scorable_with_kind_example_echo() -> None:
    """An echo on the second attempt too: not scorable (not failed), kind ``example_echo``; the
    judge execution keeps the cause with the restated statement, and the stored forms keep the
    kind."""
    judge = ScriptedJudge([ECHO, ECHO])
    result = (await claims_scorer(judge).run(input="q", output="Rome is in Italy.")).unwrap()
    assert result.score is None
    marker = result.not_scorable
    assert marker is not None
    assert (marker.kind, marker.step) == ("example_echo", "analyze")
    assert "The Eiffel Tower is 330 m tall." in (marker.reason or "")
    (execution,) = result.judge["analyze"]
    assert execution.status == "failed"
    assert execution.error == ExampleEcho(statements=("The Eiffel Tower is 330 m tall.",),
                                          raw_output='{"claims": ["The Eiffel Tower is 330 m '
                                                     'tall."]}', attempts=2)
    back = from_mastra_json(to_mastra_json(result))
    assert back.not_scorable == marker
    assert back.judge["analyze"][0].error == execution.error


async def test_a_run_that_says_the_statement_itself_is_not_an_echo() -> None:
    """A run about the Eiffel Tower: the judge repeating the run's own claim, which the example
    happens to share, judged the run. One call, scored."""
    judge = ScriptedJudge([ECHO])
    result = await claims_scorer(judge).run(input="q", output="The Eiffel Tower is 330 m tall.")
    assert result.unwrap().score == 1.0
    assert judge.calls == 1


@pytest.mark.parametrize("replies", [["not json", ECHO], [ECHO, "not json"]])
async def test_an_echo_and_an_unreadable_reply_make_the_run_not_scorable(
    replies: list[Any],
) -> None:
    """An echo and a reply that does not parse, in either order: the judge's only well-formed
    answer was about the example, so the run is not scorable (``example_echo``), not failed."""
    judge = ScriptedJudge(replies)
    result = (await claims_scorer(judge).run(input="q", output="Rome.")).unwrap()
    assert result.not_scorable is not None
    assert result.not_scorable.kind == "example_echo"
    error = result.judge["analyze"][0].error
    assert isinstance(error, ExampleEcho)
    assert error.raw_output == '{"claims": ["The Eiffel Tower is 330 m tall."]}'


async def test_a_plain_text_reason_that_echoes_is_asked_again() -> None:
    """A reason step (no schema) has one format failure: restating the example."""
    shown = "Example: the sky is green because of algae."
    judge = ScriptedJudge(["The sky is green.", "The answer names Rome."])
    scorer = (
        create_scorer(id="r", description="d",
                      judge=JudgeConfig(model=judge, instructions="Explain."))
        .generate_score(lambda ctx: 1.0)
        .generate_reason(PromptStep(
            description="why",
            example=WorkedExample(text=shown, statements=("the sky is green",)),
            create_prompt=lambda ctx: f"Why?\n{shown}\n{ctx.run.output}"))
    )
    scored = (await scorer.run(input="q", output="Rome.")).unwrap()
    assert scored.reason == "The answer names Rome."
    assert judge.calls == 2


async def test_a_builtin_scorer_asks_again_when_its_reply_restates_its_example() -> None:
    """faithfulness declares its example: the bundled-judge failure (every reply about the
    Eiffel Tower) is retried without the example, then not scorable."""
    judge = ScriptedJudge([
        {"verdicts": [{"statement": "The Eiffel Tower is 330 m tall.", "verdict": "yes",
                       "reason": "piece 1"}]},
        {"verdicts": [{"statement": "Paris has 2.1 million people.", "verdict": "yes",
                       "reason": "piece 1"}]},
    ])
    scorer = faithfulness(judge, context=["Paris has 2.1 million inhabitants."])
    answer = {"role": "assistant", "content": {"format": 2, "parts": [
        {"type": "text", "text": "Paris has 2.1 million people."}]}}
    result = (await scorer.run(input={}, output=[answer])).unwrap()
    assert result.score == 1.0
    assert judge.calls == 2
    assert "Eiffel" not in user_prompt(judge.requests[1])
    assert "Example:" not in user_prompt(judge.requests[1])

    twice = ScriptedJudge([{"verdicts": [{"statement": "It was built in 1889.",
                                          "verdict": "unsure", "reason": "no date"}]}] * 2)
    echoed = (await faithfulness(twice, context=["Paris is big."]).run(
        input={}, output=[answer])).unwrap()
    assert echoed.not_scorable is not None
    assert echoed.not_scorable.kind == "example_echo"


async def test_the_row_of_an_echoed_run_stores_the_kind() -> None:
    """A not-scorable row keeps the kind structurally, next to the reason."""
    result = (await claims_scorer(ScriptedJudge([ECHO, ECHO])).run(
        input="q", output="Rome.")).unwrap()
    row = ScoreRow.from_record(_record(result))
    assert row.status == "not_scorable"
    assert row.metadata is not None
    assert row.metadata["notScorable"]["kind"] == "example_echo"


def _record(result: Any) -> ScoreRecord:
    return ScoreRecord(scorer_id="claims", scorer_name="claims", source="live", result=result,
                       entity_type="function", entity_id="app")


def test_a_statement_the_example_does_not_hold_is_refused() -> None:
    """A declared statement must be words of the example's text: a typo is caught when the
    step is built, naming the field."""
    with pytest.raises(ScorerDefinitionError, match=r"WorkedExample\.statements\[1\]"):
        WorkedExample(text="Answer: the sky is blue.", statements=("sky is blue", "sky is red"))
    with pytest.raises(ScorerDefinitionError, match=r"WorkedExample\.statements"):
        WorkedExample(text="Answer: the sky is blue.", statements=())
    with pytest.raises(ScorerDefinitionError, match=r"PromptStep\.example"):
        PromptStep(description="d", create_prompt=lambda ctx: "p", output_schema={},
                   example="Answer: the sky is blue.")  # type: ignore[arg-type]
    with pytest.raises(ScorerDefinitionError, match=r"ScorePromptStep\.example"):
        ScorePromptStep(description="d", create_prompt=lambda ctx: "p",
                        example=("sky",))  # type: ignore[arg-type]


words = st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=6)


@given(statement=words, before=words, after=words, own=st.lists(
    st.from_regex(r"[a-z]{1,8}", fullmatch=True), max_size=12))
def test_a_reply_holding_a_statement_the_run_lacks_is_an_echo(
    statement: list[str], before: list[str], after: list[str], own: list[str],
) -> None:
    """Law: a statement is echoed exactly when its words, in order, are in the reply and are
    not in the run's own text; case and punctuation never matter."""
    text = " ".join(statement)
    example = WorkedExample(text=f"Example: {text}.", statements=(text,))
    reply = f'{{"said": "{" ".join(before)}, {text.upper()}! {" ".join(after)}"}}'
    own_text = " ".join(own)
    in_own = f" {text} " in f" {own_text} "
    assert example.echoed_in(reply, own_text=own_text) == (() if in_own else (text,))
    # The run saying it (in any case, with any punctuation) clears it.
    assert example.echoed_in(reply, own_text=f"{own_text}; {text.title()}?") == ()
    # A reply without the statement's words in order never echoes it.
    assert example.echoed_in(" ".join(before), own_text="") == (
        (text,) if f" {text} " in f" {' '.join(before)} " else ())
