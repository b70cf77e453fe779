"""Quickstart: evaluate a handful of answers with three scorers and print the results.

Run: ``make demo`` (or ``.venv/bin/python examples/quickstart.py``).

The function scorers run offline. The LLM-judge scorer runs only when ``OPENAI_API_KEY`` or
``OPENAI_BASE_URL`` (any OpenAI-compatible server, e.g. Ollama) is set; otherwise it is
reported as skipped.
"""

from __future__ import annotations

import os
import re

import anyio

from scorecore import JudgeConfig, PromptStep, Scorer, create_scorer, not_scorable

STOPWORDS = {
    "the",
    "a",
    "an",
    "of",
    "is",
    "what",
    "how",
    "to",
    "in",
    "and",
    "does",
    "do",
    "why",
    "who",
    "have",
    "many",
    "has",
}


def keywords(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


keyword_coverage = (
    create_scorer(id="keyword-coverage", description="Share of the question's keywords answered")
    .preprocess(
        lambda ctx: {"question": keywords(ctx.run.input), "answer": keywords(ctx.run.output)}
    )
    .analyze(
        lambda ctx: sorted(
            ctx.results.preprocess_step_result["question"]
            & ctx.results.preprocess_step_result["answer"]
        )
    )
    .generate_score(
        lambda ctx: (
            len(ctx.results.analyze_step_result)
            / len(ctx.results.preprocess_step_result["question"])
            if ctx.results.preprocess_step_result["question"]
            else not_scorable("question has no keywords")
        )
    )
    .generate_reason(lambda ctx: f"covered {ctx.results.analyze_step_result}")
)

exact_match = (
    create_scorer(id="exact-match", description="Answer equals the ground truth (normalised)")
    .preprocess(
        lambda ctx: (
            not_scorable("no ground truth")
            if ctx.run.ground_truth is None
            else ctx.run.ground_truth.strip().lower()
        )
    )
    .generate_score(
        lambda ctx: float(ctx.run.output.strip().lower() == ctx.results.preprocess_step_result)
    )
)

conciseness = (
    create_scorer(id="conciseness", description="Penalises answers over 40 words")
    .preprocess(lambda ctx: len(ctx.run.output.split()))
    .generate_score(
        lambda ctx: (
            1.0
            if ctx.results.preprocess_step_result <= 40
            else max(0.0, 1 - (ctx.results.preprocess_step_result - 40) / 40)
        )
    )
    .generate_reason(lambda ctx: f"{ctx.results.preprocess_step_result} words")
)


def llm_judge_scorer() -> Scorer | None:
    if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        return None
    from scorecore_adapters.openai import OpenAIChatModel

    model = OpenAIChatModel(os.environ.get("SCORECORE_DEMO_MODEL", "gpt-4o-mini"))
    return (
        create_scorer(
            id="llm-faithfulness",
            description="An LLM judge lists unsupported claims",
            judge=JudgeConfig(model=model, instructions="You are a strict fact checker."),
        )
        .analyze(
            PromptStep(
                description="Find unsupported claims",
                output_schema={
                    "type": "object",
                    "required": ["claims"],
                    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
                },
                create_prompt=lambda ctx: (
                    f"Question: {ctx.run.input}\nAnswer: {ctx.run.output}\n"
                    "List the claims in the answer that are false or unsupported."
                ),
            )
        )
        .generate_score(
            lambda ctx: max(0.0, 1 - len(ctx.results.analyze_step_result["claims"]) / 3)
        )
        .generate_reason(
            PromptStep(
                description="Explain",
                create_prompt=lambda ctx: (
                    f"In one sentence, explain a score of {ctx.score:.2f} "
                    f"given these unsupported claims: {ctx.results.analyze_step_result}"
                ),
            )
        )
    )


DATA = [
    {
        "input": "What is the capital of France?",
        "output": "Paris is the capital of France.",
        "ground_truth": "Paris is the capital of France.",
    },
    {
        "input": "How many legs does a spider have?",
        "output": "Spiders have eight legs.",
        "ground_truth": "Eight",
    },
    {
        "input": "Why is the sky blue?",
        "output": "Sunlight scatters off air molecules; blue light scatters most "
        "(Rayleigh scattering), so the sky looks blue.",
    },
    {"input": "What is 2 + 2?", "output": "4", "ground_truth": "4"},
    {
        "input": "Who wrote Hamlet?",
        "output": "It was written by Christopher Marlowe in 1850, "
        "according to many scholars who have long debated the authorship of the plays attributed "
        "to William Shakespeare, though the consensus strongly favours Shakespeare himself as the "
        "sole author of the tragedy of the prince of Denmark.",
    },
]


async def main() -> None:
    scorers: list[Scorer] = [keyword_coverage, exact_match, conciseness]
    judge_scorer = llm_judge_scorer()
    if judge_scorer is None:
        print("skipped: llm-faithfulness (set OPENAI_API_KEY or OPENAI_BASE_URL to run it)\n")
    else:
        scorers.append(judge_scorer)
    for item in DATA:
        print(f"Q: {item['input']}")
        for scorer in scorers:
            result = await scorer.run(**item)
            outcome = result.value_or(None)
            if outcome is None:
                print(f"  {scorer.id:18} FAILED  {result.failure()}")
            elif outcome.not_scorable is not None:
                print(f"  {scorer.id:18} n/a     {outcome.not_scorable.reason}")
            else:
                reason = f"  ({outcome.reason})" if outcome.reason else ""
                print(f"  {scorer.id:18} {outcome.score:.2f}{reason}")
        print()


if __name__ == "__main__":
    anyio.run(main)
