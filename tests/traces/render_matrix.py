"""Write the instrumentation matrix of docs/otel.md from the conformance checks' results.

    python tests/traces/render_matrix.py          # rewrite the table in docs/otel.md
    python tests/traces/render_matrix.py --check  # exit 1 if the page's table is stale

Each row of ``tests/traces/fixtures/instrumentations/`` is scored by ``scorecore eval-traces``
exactly as ``test_instrumentation_conformance.py`` scores it; a row is supported when every
variant and encoding gives the recorded agent run and the recorded run's scores. The table sits
between two HTML comments in the page, so the prose around it stays hand-written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: the repository and the adapters on the path
    ROOT = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(ROOT), str(ROOT / "adapters")]

from tests.traces.conformance import (
    ENCODINGS,
    VARIANTS,
    expected,
    meta,
    reading,
    rows,
    run_differences,
    score_differences,
)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "otel.md"
START = "<!-- instrumentation-matrix:start (tests/traces/render_matrix.py writes this) -->"
END = "<!-- instrumentation-matrix:end -->"
HEADER = ("| library | version | mode | spans the harness made | supported | not read |\n"
          "|---|---|---|---|---|---|")


def _missing(row: str) -> list[str]:
    """What the reader gets wrong on ``row``, per variant (the same from every encoding is
    said once)."""
    wrong: dict[str, list[str]] = {}
    for variant in VARIANTS:
        for encoding in ENCODINGS:
            read = reading(row, variant, encoding)
            want = expected(row, variant)
            found = run_differences(want, read) or [
                f"score {d.split(' ')[0]}" for d in score_differences(want, read)]
            for what in found:
                variants = wrong.setdefault(what, [])
                if variant not in variants:
                    variants.append(variant)
    # Wrong in every variant: said once; else with the variant it is wrong in.
    return [what if len(variants) == len(VARIANTS) else f"{what} ({', '.join(variants)})"
            for what, variants in wrong.items()]


def matrix() -> str:
    """The markdown table: one line per recorded row."""
    lines = [HEADER]
    described = [(meta(row), row) for row in rows()]
    described.sort(key=lambda pair: (pair[0]["library"], pair[0]["version"], pair[1]))
    for about, row in described:
        missing = _missing(row)
        lines.append(f"| {about['library']} | {about['version']} | {about['mode']} | "
                     f"{about.get('harness_spans') or 'none'} | "
                     f"{'no' if missing else 'yes'} | {'; '.join(missing) or '—'} |")
    return "\n".join(lines) + "\n"


def page_with(table: str, page: str) -> str:
    """``page`` with the text between the markers replaced by ``table``."""
    head, _, rest = page.partition(START)
    _, found, tail = rest.partition(END)
    if not found:
        raise SystemExit(f"{PAGE}: the markers {START!r} and {END!r} are missing")
    return f"{head}{START}\n{table}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/otel.md's table is not the generated one")
    args = parser.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    updated = page_with(matrix(), page)
    if args.check:
        if updated != page:
            sys.stderr.write(f"{PAGE} is stale: run python tests/traces/render_matrix.py\n")
            return 1
        return 0
    PAGE.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
