"""Demo scorers for ``make demo``: three function scorers, two built-in code scorers and the
built-in LLM-judged faithfulness scorer.

Run them over the bundled dataset and keep every score in SQLite::

    scorecore eval examples/demo_scorers.py --data examples/data/demo.jsonl \
        --store sqlite:demo.sqlite --threshold keyword-coverage=0.5 --max-failures 2 \
        --labels examples/data/demo_labels.jsonl

``llm-faithfulness`` (``scorecore.scorers.faithfulness`` against the reference answer) is
judged by a real model:

- with ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` set, by that OpenAI-compatible server (OpenAI,
  vLLM, Ollama, llama.cpp …; ``OPENAI_MODEL`` picks the model, ``gpt-4o-mini`` by default);
- otherwise by the bundled local model (``scorecore_adapters.local.LocalModel``: SmolLM2-135M
  run by llama.cpp in a worker process, from the ``local`` extra), its replies decoded under the
  scorer's JSON schema. Without that extra either, the command reports the scorer as skipped.

``SCORECORE_DEMO_JUDGE=none`` skips the scorer (the test suite's fast runs of the demo).

A 135M-parameter model is a weak judge: its faithfulness scores are shown, not gated (the
command's only threshold is on ``keyword-coverage``), and ``--labels`` prints its agreement with
human labels of the demo items (``data/demo_labels.jsonl``: is the answer faithful to its
reference answer?), with a caveat when that agreement cannot be told from chance.
"""

from __future__ import annotations

import os
import re
from typing import Any

from scorecore import JudgeModel, Scorer, StepContext, create_scorer, not_scorable
from scorecore import scorers as builtin
from scorecore.scorers import TEXT

_WORD = re.compile(r"[a-z0-9]+(?:[-'.][a-z0-9]+)*")


def _words(text: object) -> list[str]:
    return _WORD.findall(str(text).lower())


# --- keyword coverage: which expected keywords does the answer mention? --------------------


def _keywords(ctx: StepContext[Any, Any, None, None]) -> Any:
    keywords = ctx.run.extra.get("keywords")
    if not keywords:
        return not_scorable("the item lists no keywords")
    text = " ".join(_words(ctx.run.output))
    found = [k for k in keywords if " ".join(_words(k)) in text]
    missing = [k for k in keywords if k not in found]
    return {"found": found, "missing": missing}


keyword_coverage: Scorer[Any, Any] = (
    create_scorer(id="keyword-coverage", description="Share of the keywords the answer mentions")
    .analyze(_keywords)
    .generate_score(lambda ctx: len(ctx.results.analyze_step_result["found"])
                    / (len(ctx.results.analyze_step_result["found"])
                       + len(ctx.results.analyze_step_result["missing"])))
    .generate_reason(lambda ctx: "missing: " + ", ".join(ctx.results.analyze_step_result["missing"])
                     if ctx.results.analyze_step_result["missing"] else "every keyword mentioned")
)


# --- answer match: does the answer state the reference answer? ----------------------------


def _answer_match(ctx: StepContext[Any, Any, None, None]) -> Any:
    if ctx.run.ground_truth is None:
        return not_scorable("no ground truth")
    expected = " ".join(_words(ctx.run.ground_truth))
    said = " ".join(_words(ctx.run.output))
    return 1.0 if f" {expected} " in f" {said} " else 0.0


answer_match: Scorer[Any, Any] = (
    create_scorer(id="answer-match", description="The answer contains the reference answer")
    .generate_score(_answer_match)
    .generate_reason(lambda ctx: "states the reference answer" if ctx.score == 1.0
                     else f"does not state {ctx.run.ground_truth!r}")
)


# --- length sanity: neither a fragment nor an essay ----------------------------------------

MIN_WORDS, MAX_WORDS = 4, 80


def _length_score(ctx: StepContext[Any, Any, int, None]) -> float:
    n = ctx.results.preprocess_step_result
    if n < MIN_WORDS:
        return n / MIN_WORDS
    if n > MAX_WORDS:
        return max(0.0, 1.0 - (n - MAX_WORDS) / MAX_WORDS)
    return 1.0


length_sanity: Scorer[Any, Any] = (
    create_scorer(id="length-sanity", description=f"Answers of {MIN_WORDS}-{MAX_WORDS} words")
    .preprocess(lambda ctx: len(_words(ctx.run.output)))
    .generate_score(_length_score)
    .generate_reason(lambda ctx: f"{ctx.results.preprocess_step_result} words")
)


# --- built-in code scorers: the answer reuses the question's keywords, in a steady tone -------

question_keywords = builtin.keyword_coverage(shape=TEXT, id="question-keywords")
steady_tone = builtin.tone(shape=TEXT, id="steady-tone")


# --- built-in LLM faithfulness: a real judge, local unless a server is configured ------------


def _judge() -> tuple[JudgeModel | None, str]:
    """The judge model and a line saying which it is (``None``: no judge available, and why)."""
    if os.environ.get("SCORECORE_DEMO_JUDGE", "").lower() == "none":  # the fast tests' switch
        return None, "SCORECORE_DEMO_JUDGE=none"
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        # Imported lazily: each judge's adapter is only needed when it is the one used.
        from scorecore_adapters.openai import OpenAIChatModel

        model = OpenAIChatModel(os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
        return model, f"OpenAI-compatible server {model.base_url}, model {model.model_id}"
    try:
        from scorecore_adapters.local import LocalModel

        local = LocalModel()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        return None, f"no judge: set OPENAI_API_KEY or OPENAI_BASE_URL, or {exc}"
    return local, f"the bundled local model {local.model_id} (llama.cpp, in a worker process)"


def _faithfulness(judge: JudgeModel) -> Scorer[Any, Any]:
    # The reference answer is the context: every claim of the answer must follow from it.
    return builtin.faithfulness(
        judge, shape=TEXT,
        get_context=lambda ctx: [str(ctx.run.ground_truth)] if ctx.run.ground_truth else [],
        id="llm-faithfulness",
    )


scorers: list[Scorer[Any, Any]] = [
    keyword_coverage, answer_match, length_sanity, question_keywords, steady_tone,
]
skipped_scorers: dict[str, str] = {}

_model, _which = _judge()
if _model is not None:
    scorers.append(_faithfulness(_model))
    print(f"demo: llm-faithfulness is judged by {_which}", flush=True)
else:
    skipped_scorers["llm-faithfulness"] = _which
