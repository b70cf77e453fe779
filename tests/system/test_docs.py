"""The README and guide examples run as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="mypy is a dev dependency")

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
# docs/agents-and-traces.md builds one program across blocks: tests/traces/test_docs_page.py
# The built-in scorers: the overview page and a page per scorer, check and option type.
BUILTIN_PAGES = ["docs/builtin-scorers.md", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "builtin-scorers").glob("*.md"))]
RUNNABLE_DOCS = ["README.md", "docs/scorers.md", "docs/evals.md", "docs/datasets.md",
                 "docs/storage.md",
                 *BUILTIN_PAGES, "docs/economics.md", "docs/calibration.md", "docs/juries.md"]


# Pages whose blocks share one namespace (a reader's REPL): type-checked as one module.
PROGRAM_DOCS = ["docs/agents-and-traces.md"]


def _is_sketch(block: str) -> bool:
    return "await " in block and "anyio.run" not in block  # a signature sketch, not a program


def _blocks(names: list[str] = RUNNABLE_DOCS) -> list[tuple[str, int, str]]:
    return [
        (name, index, block)
        for name in names
        for index, block in enumerate(BLOCK.findall((ROOT / name).read_text()))
        if not _is_sketch(block)
    ]


def _typed_pages() -> list[str]:
    pages = ["README.md", *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").rglob("*.md"))
                            if "_build" not in p.parts)]
    return [page for page in pages if BLOCK.search((ROOT / page).read_text())]


def _typed_modules() -> dict[str, str]:
    """``{module file name: source}`` for every ```python example of every page."""
    modules: dict[str, str] = {}
    for page in _typed_pages():
        slug = re.sub(r"\W", "_", str(Path(page).with_suffix("")).removeprefix("docs/"))
        blocks = _blocks([page])
        if page in PROGRAM_DOCS:
            # Later blocks reuse earlier names; `main` is defined anew in several blocks.
            header = '# mypy: disable-error-code="no-redef"\n'
            modules[f"doc_{slug}.py"] = header + "\n\n".join(code for _, _, code in blocks)
        else:
            modules.update({f"doc_{slug}_{index}.py": code for _, index, code in blocks})
    return modules


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """mypy --strict (the project's mypy.ini) on every example at once, errors by file."""
    folder = tmp_path_factory.mktemp("doc_examples")
    modules = _typed_modules()
    for name, code in modules.items():
        (folder / name).write_text(code)
    stdout, stderr, _ = mypy_api.run([
        "--config-file", str(ROOT / "mypy.ini"), "--cache-dir", str(ROOT / ".mypy_cache"),
        "--no-error-summary", "--show-error-codes", *(str(folder / name) for name in modules),
    ])
    assert not stderr, stderr
    errors: dict[str, list[str]] = {name: [] for name in modules}
    for line in stdout.splitlines():
        name, _, message = line.partition(":")
        errors.setdefault(Path(name).name, []).append(message)
    return errors


@pytest.mark.parametrize("module", sorted(_typed_modules()))
def test_doc_example_type_checks(module: str, mypy_errors: dict[str, list[str]]) -> None:
    """Each ```python example passes mypy --strict as a user's module would."""
    assert not mypy_errors[module], "\n".join(mypy_errors[module])


def _runnable() -> list[Any]:
    """The blocks to run; those using the local judge run the real model (``real_model``)."""
    return [
        pytest.param(*block, marks=pytest.mark.real_model)
        if "scorecore_adapters.local" in block[2] else block
        for block in _blocks()
    ]


@pytest.mark.parametrize(("doc", "index", "code"), _runnable(), ids=lambda v: str(v)[:30])
def test_doc_example_runs(
    doc: str, index: int, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each runnable python block of the docs executes without error."""
    run_as_module(code, f"{doc}[{index}]")


def run_as_module(code: str, filename: str) -> dict[str, Any]:
    """Execute ``code`` as a reader's module would run: its own future flags (not this file's)
    and registered in ``sys.modules``, so ``typing.get_type_hints`` finds its names."""
    module = types.ModuleType("__doc_example__")
    sys.modules[module.__name__] = module
    try:
        exec(compile(code, filename, "exec", dont_inherit=True), module.__dict__)  # noqa: S102
    finally:
        del sys.modules[module.__name__]
    return module.__dict__
