"""Benchmark: what LocalModel's worker process costs, and LocalModel against raw llama-cpp-python.

One request to the bundled SmolLM2-135M model (a short grading prompt, greedy, seed 0, the same
arguments everywhere, so every variant generates the same tokens; each call checks its token
count against the first) goes through three variants:

- ``process``: ``LocalModel()`` (llama.cpp in a worker process, the default);
- ``in_process``: ``LocalModel(isolation="in_process")``;
- ``raw``: ``llama_cpp.Llama(...).create_chat_completion(...)`` with the same load options and
  arguments, no scorecore at all.

Rounds alternate the variants (A/B/C, B/C/A, C/A/B, …) because the machine is shared and noisy; each
variant is warmed up (loaded, one call) before timing. It prints, per variant, the median and
spread of the seconds per call and of the completion tokens per second, then the two ratios:
``process`` against ``in_process`` per call (goal: within 5 %), and LocalModel's tokens per
second against raw llama-cpp-python's (goal: at least 95 %).

    .venv/bin/python benchmarks/local_overhead.py [--rounds 15] [--tokens 64]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import anyio

from scorecore import ModelSettings
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters.local import LocalModel, bundled_model_path

PROMPT = (
    "Context: The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall.\n"
    "Answer: The Eiffel Tower is in Rome and was completed in 1950.\n"
    "Is the answer supported by the context? Explain claim by claim."
)


def _settings(tokens: int) -> dict[str, Any]:
    # The same tokens every time in every variant: greedy, seed 0, LocalModel's own penalty.
    return {"temperature": 0.0, "top_p": 1.0, "seed": 0, "max_output_tokens": tokens}


def _local(model: LocalModel, tokens: int) -> Callable[[], int]:
    settings = _settings(tokens)
    request = JudgeRequest(messages=[JudgeMessage(role="user", content=PROMPT)],
                           settings=ModelSettings(**settings))

    def call() -> int:
        reply = anyio.run(model.generate, request).unwrap()
        return int(reply.usage.output_tokens or 0)

    return call


def _raw(tokens: int) -> Callable[[], int]:
    import os  # noqa: PLC0415

    import llama_cpp  # noqa: PLC0415

    from scorecore_adapters._llama.run import load_parameters  # noqa: PLC0415

    threads = max(1, (os.cpu_count() or 1) // 2)  # LocalModel's default
    with load_parameters(repack_weights=False):  # the same load as LocalModel's
        llama = llama_cpp.Llama(model_path=str(bundled_model_path()), n_ctx=4096,
                                n_threads=threads, n_threads_batch=threads, seed=0,
                                last_n_tokens_size=256, verbose=False)

    def call() -> int:
        reply: Any = llama.create_chat_completion(
            messages=[{"role": "user", "content": PROMPT}], temperature=0.0, top_p=1.0, seed=0,
            max_tokens=tokens, repeat_penalty=1.1)
        return int(reply["usage"]["completion_tokens"])

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()
    variants: dict[str, Callable[[], int]] = {
        "process": _local(LocalModel(), args.tokens),
        "in_process": _local(LocalModel(isolation="in_process"), args.tokens),
        "raw": _raw(args.tokens),
    }
    counts = {name: call() for name, call in variants.items()}  # load and warm up
    if len(set(counts.values())) != 1:
        raise SystemExit(f"the variants generated different token counts: {counts}")
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    rates: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for round_index in range(args.rounds):
        # Each round starts with the next variant (A/B/C, B/C/A, C/A/B, ...): no variant always
        # runs right after another one.
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            call = variants[name]
            started = time.perf_counter()
            generated = call()
            if generated != counts[name]:
                raise SystemExit(f"{name} generated {generated} tokens, then {counts[name]}")
            elapsed = time.perf_counter() - started
            seconds[name].append(elapsed)
            rates[name].append(generated / elapsed)
    print(f"{args.rounds} rounds, {args.tokens} reply tokens per call, variants alternated")
    print(f"{'variant':<12}{'s/call p50':>12}{'min':>9}{'max':>9}{'tok/s p50':>11}")
    for name in variants:
        print(f"{name:<12}{statistics.median(seconds[name]):>12.3f}{min(seconds[name]):>9.3f}"
              f"{max(seconds[name]):>9.3f}{statistics.median(rates[name]):>11.1f}")
    per_call = statistics.median(seconds["process"]) / statistics.median(seconds["in_process"])
    print(f"process / in_process, seconds per call (median): {per_call:.3f} "
          f"({(per_call - 1) * 100:+.1f} %; goal within 5 %)")
    for name in ("process", "in_process"):
        share = statistics.median(rates[name]) / statistics.median(rates["raw"])
        print(f"{name} / raw llama-cpp-python, tokens per second (median): {share:.3f} "
              f"(goal >= 0.95)")


if __name__ == "__main__":
    main()
