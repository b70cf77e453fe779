"""completeness, content_similarity, textual_difference, keyword_coverage and tone: formulas,
edge cases, both run shapes, and not scorable for each missing input."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from scorecore import AgentInput, InputMismatch, ScorerDefinitionError
from scorecore.scorers import (
    TEXT,
    completeness,
    content_similarity,
    keyword_coverage,
    textual_difference,
    tone,
)
from scorecore.scorers._completeness import coverage, elements
from scorecore.scorers._keywords import keywords
from scorecore.scorers._tone import comparative, sentences
from tests.scorers.helpers import asked, missing_of, said, score_of

pytestmark = pytest.mark.anyio

# Derived by hand: each word's dictionary form (verbs and nouns), diacritics dropped, then
# Mastra's coverage rule. The comment gives the element lists.
COMPLETENESS_CORPUS = [
    # she be run quickly to the store | she run quickly to the store: "be" is missing
    ("She was running quickly to the stores.", "She runs quickly to the store.", 6 / 7),
    # a cat and dog run | cat and dog run
    ("A cat and a dog ran", "cats and dogs run", 4 / 5),
    # the child go to park | a child go to park
    ("The children went to the park", "A child goes to a park", 4 / 5),
    # mouse be hide | a mouse hide
    ("Mice were hiding", "A mouse hid", 2 / 3),
    # i do not know, both: a contraction is expanded
    ("I don't know", "I do not know", 1.0),
    # cafe in zurich, both
    ("Café in Zürich", "cafe in zurich", 1.0),
    # version 3 14 release | version 3 release
    ("Version 3.14 released", "version 3 released", 3 / 4),
    # international | nation: contained, but 6/13 is not more than 60 %
    ("international", "nation", 0.0),
    # dog | dogma: a word of 3 letters needs an equal word
    ("dog", "dogma", 0.0),
    # tower (the Japanese word has no [a-z0-9] letters and vanishes) | tower
    ("東京 tower", "tower", 1.0),
    # knowledge know | know: "knowledge" (9) contains "know" (4) but 4/9 ≤ 60 %
    ("knowledge knew", "knows", 1 / 2),
]


@pytest.mark.parametrize(("source", "answer", "expected"), COMPLETENESS_CORPUS)
async def test_completeness_corpus(source: str, answer: str, expected: float) -> None:
    """completeness gives the hand-derived coverage on each pair, as text and as agent run."""
    as_text = await completeness(shape=TEXT).run(input=source, output=answer)
    as_agent = await completeness().run(input=asked(source), output=(said("assistant", answer),))
    assert score_of(as_text) == pytest.approx(expected)
    assert score_of(as_agent) == score_of(as_text)


def test_completeness_elements_and_coverage() -> None:
    """Elements are distinct lemmas in order; coverage lists what no output element covers."""
    assert elements("Running runs RAN, runner's") == ["run", "runner"]
    assert elements("can't won't") == ["can", "not", "will"]
    assert coverage(["stores"], ["store"]) == (1.0, [])  # 5/6 > 0.6, either way round
    assert coverage(["store"], ["stores"]) == (1.0, [])
    assert coverage(["abcde"], ["abc"]) == (0.0, ["abcde"])  # 3/5 is not more than 0.6


async def test_completeness_missing_inputs() -> None:
    """No input text, an input without letters or digits, and an agent run without output
    messages are not scorable; a blank output scores 0."""
    scorer = completeness(shape=TEXT)
    assert "no input text" in missing_of(await scorer.run(input="  ", output="words"))
    assert "no input words" in missing_of(await scorer.run(input="!!! 東京 😀", output="x"))
    assert score_of(await scorer.run(input="words here", output="")) == 0.0
    agent = completeness()
    assert "no input messages" in missing_of(await agent.run(input=AgentInput(), output=(
        said("assistant", "x"),)))
    assert "no output" in missing_of(await agent.run(input=asked("words"), output=()))


def test_completeness_without_simplemma(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the optional simplemma the scorer cannot be built, and the error says what to
    install."""
    from scorecore.scorers import _completeness  # noqa: PLC0415 - reaching the cache on purpose

    _completeness._lemmatizer.cache_clear()
    monkeypatch.setitem(sys.modules, "simplemma", None)
    try:
        with pytest.raises(ModuleNotFoundError, match=r"scorecore\[nlp\]"):
            completeness()
    finally:
        _completeness._lemmatizer.cache_clear()


@pytest.mark.parametrize(
    ("source", "answer", "options", "expected"),
    [
        ("Hello world", "hello  World!", {}, 18 / 19),  # pairs: 9 and 10, 9 shared
        # case kept: He, ow, wo differ from he, oW, Wo; el ll lo or rl ld are shared
        ("Hello world", "hello  World!", {"ignore_case": False}, 12 / 19),
        ("ab", "ab", {}, 1.0),
        ("a", "b", {}, 0.0),  # shorter than two units
        ("😀", "😁", {}, 0.0),  # one emoji is two UTF-16 units: one pair each, not shared
        ("aaaa", "aa", {}, 2 * 1 / 4),  # pairs aax3 and aax1: one shared
        ("a b", "ab", {}, 1.0),  # whitespace is removed before comparing
    ],
)
async def test_content_similarity_formula(
    source: str, answer: str, options: dict[str, Any], expected: float
) -> None:
    """content_similarity is 2·shared pairs / (pairs(a) + pairs(b)) with Mastra's edge cases."""
    scorer = content_similarity(shape=TEXT, **options)
    assert score_of(await scorer.run(input=source, output=answer)) == pytest.approx(expected)


async def test_content_similarity_processed_texts() -> None:
    """The preprocess result shows the texts compared: lowercased and whitespace collapsed."""
    scorer = content_similarity()
    result = (await scorer.run(input=asked("  Hello\t\tWorld "), output=(
        said("assistant", "ignored", "HELLO world"), said("tool", "x")))).unwrap()
    assert result.preprocess_step_result == {
        "processed_input": "hello world", "processed_output": "hello world, x"}


@pytest.mark.parametrize(
    ("source", "answer", "expected"),
    [
        ("dormitory", "dirty room", 2 * 4 / 19),  # LCS d,r,t,y... = 4: difflib says 0.3157
        ("kitten", "sitting", 2 * 4 / 13),  # LCS ittn
        ("abc", "abc", 1.0),
        ("abc", "", 0.0),
        ("a😀", "😀", 2 * 2 / 5),  # the emoji is two shared units of five
    ],
)
async def test_textual_difference_formula(source: str, answer: str, expected: float) -> None:
    """textual_difference is 2·LCS / (|a| + |b|) over UTF-16 units."""
    scorer = textual_difference(shape=TEXT)
    assert score_of(await scorer.run(input=source, output=answer)) == pytest.approx(expected)


async def test_textual_difference_details() -> None:
    """The preprocess result has Mastra's informational confidence, changes and length_diff."""
    result = (await textual_difference(shape=TEXT).run(
        input="the cat sat", output="the dog sat down")).unwrap()
    assert result.preprocess_step_result["length_diff"] == pytest.approx(5 / 16)
    assert result.preprocess_step_result["confidence"] == pytest.approx(11 / 16)
    assert result.preprocess_step_result["changes"] == 2  # 4 words, "the" and "sat" shared


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello! The <b>Eiffel</b> tower", ["eiffel", "tower"]),  # hello is a stop word
        ("3.14 42 x3", ["x3"]),  # "3.14" loses its period and is all digits
        ("'quoted' it's \u2018curly\u2019", ["quoted", "curly"]),  # it's is a stop word
        ("see https://Example.com/A?b=1, now", ["https://Example.com/A?b=1,"]),
        ("state-of-the-art state-of-the-art", ["state-of-the-art"]),
        ("# @ zebra", ["zebra"]),  # 1-character junk goes; single letters are stop words
        ("multi\n\nline", ["multi", "line"]),
    ],
)
def test_keywords(text: str, expected: list[str]) -> None:
    """Keywords follow keyword-extractor: tags, punctuation, digits and stop words removed."""
    assert keywords(text) == expected


async def test_keyword_coverage_formula_and_missing_inputs() -> None:
    """Coverage is matched / reference keywords; a reference without keywords is not scorable
    (Mastra scores it 1)."""
    scorer = keyword_coverage(shape=TEXT)
    result = (await scorer.run(input="photosynthesis in green plants",
                               output="Plants are green")).unwrap()
    assert result.score == pytest.approx(2 / 3)
    assert result.preprocess_step_result["matched_keywords"] == ["green", "plants"]
    assert "no input keywords" in missing_of(await scorer.run(input="the and of", output="x"))
    assert "no input text" in missing_of(await scorer.run(input="", output="x"))
    assert score_of(await scorer.run(input="photosynthesis", output="")) == 0.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I love it", 3 / 3),  # love +3
        ("I do not love it", -3 / 5),  # negated by the previous token
        ("not, love", -3 / 2),  # punctuation is a space, negation still applies
        ("good\tbad", 0.0),  # a lone tab stays inside the token: no word matches
        ("good  \t bad", (3 - 3) / 2),  # a run of whitespace is one space
        ("😍 😭", (3 - 1) / 2),  # emoji valences from sentiment's table
        ("", 0.0),  # one empty token
    ],
)
def test_comparative(text: str, expected: float) -> None:
    """The comparative is sentiment's: valences over tokens, negation by the previous token."""
    assert comparative(text) == pytest.approx(expected)


def test_sentences_keep_an_unterminated_tail() -> None:
    """Text after the last terminator is a sentence (Mastra drops it); blank tails are not."""
    assert sentences("Good. Bad") == ["Good.", " Bad"]
    assert sentences("Good. ") == ["Good."]
    assert sentences("no terminator") == ["no terminator"]
    assert sentences("?!") == ["?!"]


async def test_tone_formulas() -> None:
    """With a reference: 1 - |difference|; without: 1 - variance of sentence comparatives."""
    steady = await tone(shape=TEXT).run(input=None, output="I love it. I love it.")
    assert score_of(steady) == 1.0
    # comparatives 3/3 = 1 and -3/3 = -1: mean 0, variance 1
    swing = (await tone(shape=TEXT).run(input=None, output="I love it. I hate it.")).unwrap()
    assert swing.score == 0.0
    assert swing.preprocess_step_result["sentiment_variance"] == pytest.approx(1.0)
    # "Good work." 3/2 against "This is wonderful!" 4/3: 1 - 1/6
    matched = await tone(reference_tone="This is wonderful!", shape=TEXT).run(
        input=None, output="Good work.")
    assert score_of(matched) == pytest.approx(5 / 6)
    agent = await tone().run(input=AgentInput(), output=(said("assistant", "Great."),
                                                         said("assistant", "Awful.")))
    # one text "Great., Awful.": sentences "Great." 3/1 and ", Awful." -3/1 → variance 9
    assert score_of(agent) == 0.0


async def test_tone_missing_inputs_and_bad_reference() -> None:
    """A blank output or no output messages is not scorable; a blank reference is refused."""
    assert "no output text" in missing_of(await tone(shape=TEXT).run(input=None, output=" \n"))
    assert "no output" in missing_of(await tone().run(input=AgentInput(), output=()))
    with pytest.raises(ScorerDefinitionError, match="reference_tone") as raised:
        tone(reference_tone="  ")
    assert raised.value.field == "reference_tone"
    with pytest.raises(ScorerDefinitionError, match="reference_tone"):
        tone(reference_tone=3)  # type: ignore[call-overload]


@pytest.mark.parametrize("factory", [completeness, content_similarity, textual_difference,
                                     keyword_coverage, tone])
async def test_shapes(factory: Any) -> None:
    """The default reads agent runs (a plain string is an input mismatch); shape=TEXT reads
    strings; any other shape is refused when the scorer is built."""
    agent = factory()
    assert agent.type == "agent"
    mismatch = (await agent.run(input="a question", output="an answer")).failure()
    assert isinstance(mismatch.cause, InputMismatch)
    assert factory(shape=TEXT).type is None
    with pytest.raises(ScorerDefinitionError, match="shape must be AGENT or TEXT"):
        factory(shape="text")
    assert factory(id="mine").id == "mine"


async def test_mastra_json_runs() -> None:
    """Mastra-shaped JSON is structured into an agent run, as for any agent scorer."""
    message = {"id": "m", "role": "assistant", "createdAt": "2025-01-01T00:00:00Z",
               "content": {"format": 2, "parts": [{"type": "text", "text": "kitten"}]}}
    question = {"inputMessages": [{**message, "role": "user"}]}
    outcome = await textual_difference().run(input=question, output=[message])
    assert score_of(outcome) == 1.0


@pytest.mark.parametrize("factory", [completeness, content_similarity, textual_difference,
                                     keyword_coverage, tone])
async def test_text_shape_refuses_other_types(factory: Any) -> None:
    """shape=TEXT takes strings only: a number is an input mismatch naming the output."""
    failure = (await factory(shape=TEXT).run(input="question", output=42)).failure()
    assert isinstance(failure.cause, InputMismatch)
    assert failure.cause.which == "output"


async def test_long_texts() -> None:
    """50,000-character texts score quickly (Mastra's LCS table would hold 2.5 billion cells)."""
    source = "the quick brown fox jumps over the lazy dog " * 1_150
    answer = source.replace("fox", "cat")
    for factory in (textual_difference, content_similarity, keyword_coverage, completeness):
        result = (await factory(shape=TEXT).run(input=source, output=answer)).unwrap()
        assert result.score is not None
        assert 0.8 < result.score < 1.0  # only "fox" differs
