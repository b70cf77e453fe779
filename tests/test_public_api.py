"""The curated public surface: each namespace sorted, documented, and the kernel kept small."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import scorecore
import scorecore_adapters

ROOT = Path(__file__).resolve().parent.parent
CORE_NAMESPACES = [
    "scorecore",
    "scorecore.agent",
    "scorecore.composite",
    "scorecore.evals",
    "scorecore.evals.engine",
    "scorecore.evals.results",
    "scorecore.evals.store",
    "scorecore.judge",
    "scorecore.judge.economics",
    "scorecore.judge.retry",
    "scorecore.live",
    "scorecore.scorers",
    "scorecore.scorers.checks",
    "scorecore.traces",
    "scorecore.validators",
]
ADAPTER_MODULES = [
    f"scorecore_adapters.{m.name}"
    for m in pkgutil.iter_modules(scorecore_adapters.__path__)
    if not m.name.startswith("_") and m.name != "__main__"
]
PUBLIC_MODULES = CORE_NAMESPACES + ADAPTER_MODULES


def _private_core_modules() -> list[str]:
    """Every ``_x`` module of the core, in the kernel and in the application subpackages."""
    return [
        info.name
        for info in pkgutil.walk_packages(scorecore.__path__, "scorecore.")
        if any(part.startswith("_") for part in info.name.split(".")[1:])
    ]


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_resolves_once(module_name: str) -> None:
    """Every public module's __all__ (kept sorted by ruff's RUF022) names existing objects once."""
    module = importlib.import_module(module_name)
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"{module_name}.__all__ has duplicates"
    for name in names:
        assert hasattr(module, name), f"{module_name}.__all__ names missing {name!r}"


def test_kernel_surface_is_the_scorer_api() -> None:
    """The top level exports the scorer API only: at most 50 names."""
    assert len(scorecore.__all__) <= 50, sorted(scorecore.__all__)
    for app_name in ("run_evals", "Span", "LiveScorer", "Registry", "JudgeRequest"):
        assert app_name not in scorecore.__all__


EVALS_NAMESPACES = [
    "scorecore.evals",
    "scorecore.evals.engine",
    "scorecore.evals.results",
    "scorecore.evals.store",
]


def test_evals_keeps_the_users_names() -> None:
    """``scorecore.evals`` holds the user's names (at most 26); what store implementers and
    runners need is in ``scorecore.evals.store`` and ``scorecore.evals.engine``."""
    evals = importlib.import_module("scorecore.evals")
    assert len(evals.__all__) <= 26, sorted(evals.__all__)
    spi = {"ScoreStore", "CompletedScore", "BatchCatalog", "storable_row", "row_id", "decode_row",
           "ItemScorer", "ReportFold", "RunIds", "item_key", "read_item", "TrustFold"}
    assert not spi & set(evals.__all__)


def test_statistics_helpers_are_private() -> None:
    """The statistics only tests call are in no public namespace."""
    exported = {name for ns in PUBLIC_MODULES for name in importlib.import_module(ns).__all__}
    for name in ("bootstrap_mean_interval", "mcnemar_p_value", "krippendorff_alpha",
                 "bootstrap_interval", "AlphaLevel"):
        assert name not in exported, name


@pytest.mark.parametrize("module_name", EVALS_NAMESPACES)
def test_evals_names_have_one_home(module_name: str) -> None:
    """A name of an evals namespace is exported by no other core namespace, unless docs/api.md
    documents one of them as the re-export."""
    text = (ROOT / "docs" / "api.md").read_text()
    names = set(importlib.import_module(module_name).__all__)
    for other in CORE_NAMESPACES:
        if other == module_name:
            continue
        for name in sorted(names & set(importlib.import_module(other).__all__)):
            documented = re.findall(rf"^- \*\*`{name}\b.*$", text, re.MULTILINE)
            assert any("re-export" in line for line in documented), (
                f"{name} is exported by {module_name} and {other}")


def test_version_is_the_installed_distribution() -> None:
    """``scorecore.__version__`` is the version pip installed."""
    assert scorecore.__version__ == importlib.metadata.version("scorecore")


def test_every_private_public_name_has_a_public_home() -> None:
    """A name a private core module declares public is exported by some public namespace."""
    exported = {name for ns in CORE_NAMESPACES for name in importlib.import_module(ns).__all__}
    for module_name in _private_core_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            assert name in exported, f"{module_name}.{name} is in no public namespace"


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_public_callables_have_docstrings(module_name: str) -> None:
    """Every public class and function carries a docstring."""
    module = importlib.import_module(module_name)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{module_name}.{name} has no docstring"


def _section(text: str, heading: str) -> str:
    """The text of one ``## heading`` section of a docs page."""
    start = text.index(heading)
    rest = text[start + len(heading) :]
    end = re.search(r"^## ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


@pytest.mark.parametrize("module_name", CORE_NAMESPACES)
def test_api_reference_matches_each_namespace(module_name: str) -> None:
    """docs/api.md has a section per namespace listing exactly that namespace's __all__."""
    text = (ROOT / "docs" / "api.md").read_text()
    section = _section(text, f"## `{module_name}`")
    documented = set(re.findall(r"^- \*\*`([A-Za-z_]+)", section, re.MULTILINE))
    exported = set(importlib.import_module(module_name).__all__)
    assert documented == exported, (
        f"undocumented: {sorted(exported - documented)}; "
        f"not exported: {sorted(documented - exported)}"
    )


@pytest.mark.parametrize("module_name", [*ADAPTER_MODULES, "scorecore_adapters"])
def test_adapters_reference_lists_every_public_name(module_name: str) -> None:
    """docs/adapters-api.md documents every public name of every adapters module."""
    text = (ROOT / "docs" / "adapters-api.md").read_text()
    assert f"## `{module_name}`" in text
    module = importlib.import_module(module_name)
    missing = [name for name in module.__all__ if f"`{name}" not in text]
    assert not missing, f"docs/adapters-api.md does not mention {module_name}.{missing}"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found.extend(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
    return found


@pytest.mark.parametrize(
    "folder", ["adapters/scorecore_adapters", "examples", "benchmarks"], ids=lambda f: f
)
def test_no_private_core_imports_outside_the_core(folder: str) -> None:
    """Adapters, examples and benchmarks use the core's public namespaces only."""
    offenders = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "scorecore" and any(p.startswith("_") for p in parts[1:]):
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert not offenders, offenders


KERNEL = ["scorecore._core", "scorecore.agent", "scorecore.composite", "scorecore.judge",
          "scorecore.validators"]
APPLICATION = ["scorecore.evals", "scorecore.live", "scorecore.scorers", "scorecore.traces"]


def test_layers_contract_covers_the_whole_kernel() -> None:
    """Every kernel module is under ``scorecore._core`` or is one of its public namespaces, so
    the one-line import-linter contract keeping the kernel below its layers covers it all."""
    text = (ROOT / "pyproject.toml").read_text()
    sources = ", ".join(f'"{name}"' for name in KERNEL)
    assert f"source_modules = [{sources}]" in text
    top_level = sorted(
        info.name for info in pkgutil.iter_modules(scorecore.__path__, "scorecore.")
    )
    kernel = [name for name in top_level if name not in APPLICATION]
    assert kernel == KERNEL, (
        f"move {sorted(set(kernel) - set(KERNEL))} under scorecore/_core/ (the kernel) or into "
        f"an application namespace"
    )
