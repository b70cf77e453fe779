"""The built-in scorers are written with the public API only, as a user's scorer would be."""

from __future__ import annotations

from pathlib import Path

import scorecore.scorers
from tests.module_checks import imported_names

SCORERS = Path(scorecore.scorers.__file__).parent


def _private_imports(path: Path) -> list[str]:
    """Every ``scorecore._x`` module (or name) ``path`` imports, at any depth of the file."""
    return [name for name in imported_names(path) if name.split(".")[0] == "scorecore"
            and len(name.split(".")) > 1 and name.split(".")[1].startswith("_")]


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
