"""Judge prices from a TOML or JSON file, for ``run_evals(pricing=...)`` and ``--pricing``.

The file maps model ids (``JudgeModel.model_id``) to prices in USD per million tokens::

    # prices.toml
    [models."gpt-4o-mini"]
    input = 0.15
    output = 0.60
    cached_input = 0.075   # optional: input tokens served from the provider's prompt cache

JSON is the same shape: ``{"models": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}}`` (the
``models`` level may be left out). See :meth:`scorecore.judge.economics.Pricing.from_mapping`.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from scorecore.judge.economics import Pricing

__all__ = ["load_pricing"]


def load_pricing(path: str | Path) -> Pricing:
    """Read a pricing file: TOML (``.toml``) or JSON (anything else).

    Raises:
        ValueError: the file cannot be read or parsed, or a price is missing or bad; the
            message names the file (and the model and field).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "prices.toml"
    >>> _ = path.write_text('[models."gpt-4o-mini"]\\ninput = 0.15\\noutput = 0.6\\n')
    >>> load_pricing(path).price("gpt-4o-mini").output
    0.6
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"pricing file {str(file)!r}: {exc.strerror or exc}") from None
    kind = "TOML" if file.suffix.lower() == ".toml" else "JSON"
    try:
        data = tomllib.loads(text) if kind == "TOML" else json.loads(text)
    except RecursionError:
        # Both parsers recurse per level: a file nested thousands deep exhausts the stack.
        raise ValueError(f"pricing file {str(file)!r} is not usable {kind}: it is nested too "
                         f"deeply to read (a pricing file is two levels deep)") from None
    except ValueError as exc:  # a syntax error, or an int longer than Python reads
        raise ValueError(f"pricing file {str(file)!r} is not valid {kind}: "
                         f"{str(exc).split(';')[0]}") from None
    try:
        return Pricing.from_mapping(data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"pricing file {str(file)!r}: {exc}") from None
