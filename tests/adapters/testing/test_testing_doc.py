"""docs/testing.md: the examples that use the plugin's fixtures pass under pytest itself.

tests/system/test_adapter_docs.py runs every block and calls its argument-free tests; the tests
that take fixtures (``scripted_judge``, ``virtual_runtime``, ``memory_store`` …) need pytest to
provide them, so each such block is run here as a test file, on both anyio backends.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

DOC = Path(__file__).resolve().parents[3] / "docs" / "testing.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
FIXTURES = frozenset({"scripted_judge", "virtual_runtime", "memory_store", "memory_cache"})
BACKENDS = '''
import pytest

@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param
'''


def _tests(block: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in ast.parse(block).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test_")]


def _fixtures_used(block: str) -> set[str]:
    return {arg.arg for test in _tests(block) for arg in test.args.args} & FIXTURES


def _fixture_blocks() -> list[tuple[int, str]]:
    return [(index, block) for index, block in enumerate(BLOCK.findall(DOC.read_text()))
            if _fixtures_used(block)]


def test_the_guide_has_fixture_examples() -> None:
    """The guide still shows tests taking the plugin's fixtures (so the test below runs)."""
    used = set().union(*(_fixtures_used(block) for _, block in _fixture_blocks()))
    assert {"scripted_judge", "virtual_runtime", "memory_store"} <= used


@pytest.mark.parametrize(("index", "block"), _fixture_blocks(), ids=lambda v: str(v)[:12])
def test_fixture_examples_pass_under_pytest(
    pytester: pytest.Pytester, index: int, block: str
) -> None:
    """Each block with fixture-taking tests passes as a test file: every test it defines runs
    (async ones on asyncio and trio) and none fails, errors or is skipped."""
    pytester.makeconftest(BACKENDS)
    pytester.makepyfile(**{f"test_doc_block_{index}": block})
    result = pytester.runpytest("-p", "no:cacheprovider")
    expected = sum(2 if isinstance(t, ast.AsyncFunctionDef) else 1 for t in _tests(block))
    result.assert_outcomes(passed=expected)
