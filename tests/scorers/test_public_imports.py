"""The built-in scorers are written with the public API only, as a user's scorer would be."""

from __future__ import annotations

import ast
from pathlib import Path

import scorecore.scorers

SCORERS = Path(scorecore.scorers.__file__).parent


def _private_imports(path: Path) -> list[str]:
    """Every ``scorecore._x`` module (or name) ``path`` imports, at any depth of the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n for n in names if n.split(".")[0] == "scorecore"
                  and len(n.split(".")) > 1 and n.split(".")[1].startswith("_")]
    return found


def test_builtin_scorers_import_no_private_module() -> None:
    """No module of ``scorecore.scorers`` imports a private ``scorecore._…`` module."""
    offenders = {str(path.relative_to(SCORERS)): names
                 for path in sorted(SCORERS.rglob("*.py")) if (names := _private_imports(path))}
    assert offenders == {}


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    """The check finds a private import however it is spelt (so the test above can fail)."""
    module = tmp_path / "m.py"
    module.write_text("import scorecore._core._keys\n"
                      "def f():\n    from scorecore._core import _values\n"
                      "from scorecore import Scorer\nfrom scorecore.scorers._panel import panel\n")
    assert _private_imports(module) == ["scorecore._core._keys", "scorecore._core",
                                        "scorecore._core._values"]
