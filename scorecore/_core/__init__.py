"""The kernel's private modules: the scorer pipeline, the judge port, causes and economics.

Nothing here is public API; ``scorecore``, ``scorecore.judge`` (with ``.retry`` and
``.economics``), ``scorecore.agent`` and ``scorecore.validators`` re-export what users need.
The kernel imports none of the layers above it (``evals``, ``traces``, ``live``, ``scorers``)
and has no import cycle (``tests/test_import_graph.py``).
"""
