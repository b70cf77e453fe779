"""The built-in LLM-judged scorers, one module each, driven by one engine.

Each module (``faithfulness.py``, ``rubric.py``, …) declares its scorer: the judge's persona,
the task, numbered principles, one worked example, the reply class, what it reads from the run,
the score function and the reason function. ``scorecore.scorers.llm._engine`` turns that
declaration into a typed :class:`~scorecore.Scorer`; the factories are exported by
:mod:`scorecore.scorers`. Adding a built-in LLM scorer is writing one such module (see
docs/builtin-scorers.md, "Adding a built-in LLM scorer").
"""

__all__: list[str] = []  # the factories' public home is scorecore.scorers
