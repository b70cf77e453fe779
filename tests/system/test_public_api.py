"""The curated public surface: each namespace sorted, documented, and the kernel kept small."""

from __future__ import annotations

import html
import importlib
import importlib.metadata
import inspect
import pkgutil
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import attrs
import pytest

import scorecore
import scorecore_adapters
from tests.module_checks import imported_names

ROOT = Path(__file__).resolve().parents[2]
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
def test_evals_names_have_one_home(module_name: str, reference: Reference) -> None:
    """A name of an evals namespace is exported by no other core namespace, unless it is the
    same object and the reference renders it once, the other entry saying "Re-exported"."""
    names = set(importlib.import_module(module_name).__all__)
    for other in CORE_NAMESPACES:
        if other == module_name:
            continue
        other_module = importlib.import_module(other)
        for name in sorted(names & set(other_module.__all__)):
            here = getattr(importlib.import_module(module_name), name)
            assert here is getattr(other_module, name), (
                f"{module_name}.{name} and {other}.{name} are different objects")
            entries = [reference.entry(m, name) for m in (module_name, other)]
            assert sum("Re-exported" in entry for entry in entries) == 1, (
                f"{name}: exported by {module_name} and {other}, rendered twice or never")


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


@attrs.frozen
class Reference:
    """The built API reference: its object inventory and its pages."""

    html: Path
    inventory: dict[str, str]  # "scorecore.evals.run_evals" -> "py:function"
    warnings: list[str]

    def page(self, module_name: str) -> str:
        return (self.html / "reference" / f"{module_name}.html").read_text("utf-8")

    def entry(self, module_name: str, name: str) -> str:
        """The rendered text of ``module_name.name``'s entry on its module's page."""
        page = self.page(module_name)
        anchor = page.index(f'id="{module_name}.{name}"')
        end = page.find("</dl>", anchor)
        return re.sub(r"<[^>]+>", "", page[anchor:end])


def _inventory(path: Path) -> dict[str, str]:
    """Sphinx's objects.inv: four header lines, then zlib-compressed ``name role ...`` lines."""
    data = path.read_bytes()
    body = zlib.decompress(data.split(b"\n", 4)[4]).decode("utf-8")
    rows = (line.split(" ") for line in body.splitlines() if line)
    return {name: role for name, role, *_ in rows}


# A page of references built with the reference: the broken ones must be reported (an unknown
# name fails `make docs`), the others must link.
PROBE = f"""# probe

- broken: {{py:func}}`scorecore.no_such_function`, {{py:class}}`NoSuchClass`,
  {{py:meth}}`ScoreRow.no_such_method`
- linked: {{py:class}}`ScoreRow`, {{py:meth}}`ScoreRow.from_record`,
  {{py:class}}`{scorecore.ScoreResult.__module__}.ScoreResult`
"""
PROBE_BROKEN = ["scorecore.no_such_function", "NoSuchClass", "ScoreRow.no_such_method"]


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """The reference built once as ``make docs`` builds it (nitpicky), from a copy of the
    docs' configuration and reference index and a probe page: the guides are ``make docs``'s
    and the examples' tests' to check."""
    root = tmp_path_factory.mktemp("site")
    docs = root / "docs"
    shutil.copytree(ROOT / "docs" / "_ext", docs / "_ext",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "docs" / "conf.py", docs / "conf.py")
    (docs / "reference").mkdir()
    shutil.copy(ROOT / "docs" / "reference" / "index.md", docs / "reference" / "index.md")
    (docs / "probe.md").write_text(PROBE)
    (docs / "index.md").write_text("# scorecore\n\n```{toctree}\nreference/index\nprobe\n```\n")
    for package in ("scorecore", "adapters"):  # conf.py puts these folders on sys.path
        (root / package).symlink_to(ROOT / package)
    html = root / "html"
    warnings = root / "warnings.txt"
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", "sphinx", "-E", "-n", "--keep-going", "-q", "-b", "html",
         "-w", str(warnings), str(docs), str(html)],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    return Reference(html=html, inventory=_inventory(html / "objects.inv"),
                     warnings=warnings.read_text("utf-8").splitlines())


def test_reference_builds_clean(reference: Reference) -> None:
    """Building the reference warns of nothing but the probe's broken references: each of
    them, so an unknown name in a docstring fails ``make docs`` (-W)."""
    broken = [w for w in reference.warnings if "probe.md" in w]
    others = [w for w in reference.warnings if "probe.md" not in w]
    assert not others, "\n".join(others)
    for target in PROBE_BROKEN:
        assert any(f"reference target not found: {target} " in w for w in broken), (target, broken)
    assert len(broken) == len(PROBE_BROKEN), broken


def test_reference_resolves_short_and_private_names(reference: Reference) -> None:
    """A short name and a private module path link to the public entry of their object."""
    probe = (reference.html / "probe.html").read_text("utf-8")
    for anchor in ("scorecore.evals.ScoreRow", "scorecore.evals.ScoreRow.from_record",
                   "scorecore.ScoreResult"):
        assert f'.html#{anchor}"' in probe, anchor


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_reference_renders_every_public_name(module_name: str, reference: Reference) -> None:
    """The built reference has a page per public module with an entry for each name of its
    __all__, and every object there is rendered in full at exactly one home."""
    module = importlib.import_module(module_name)
    assert reference.inventory.get(module_name) == "py:module", f"no page for {module_name}"
    page = reference.page(module_name)
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            if reference.inventory.get(obj.__name__) != "py:module":
                missing.append(name)
        elif f"{module_name}.{name}" not in reference.inventory or (
            f'id="{module_name}.{name}"' not in page
        ):
            missing.append(name)
    assert not missing, f"the reference does not render {module_name}.{missing}"


def _words(text: str) -> str:
    return " ".join(re.findall(r"[A-Za-z0-9]+", text))


def _role_title(match: re.Match[str]) -> str:
    """What a role renders: its explicit title, else its target (the last part after ``~``)."""
    title = match.group(1).strip()
    return title.rsplit(".", 1)[-1] if title.startswith("~") else title


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_reference_entries_carry_the_docstrings(module_name: str, reference: Reference) -> None:
    """Each public class and function is rendered with its docstring's first words, at its
    home or behind an entry that names where ("Re-exported", "Another name for")."""
    module = importlib.import_module(module_name)
    for name in module.__all__:
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        entry = reference.entry(module_name, name)
        if "the same object" in entry:  # a re-export or another name: rendered at its home
            continue
        first = (inspect.getdoc(obj) or "").split("\n")[0]
        first = re.sub(r":[\w:]+:`([^`<]+?)(?: <[^>]+>)?`", _role_title, first)
        words = " ".join(_words(first).split()[:4])
        assert words in _words(html.unescape(entry)), f"{module_name}.{name}: {words!r}"


@pytest.mark.parametrize(
    "folder", ["adapters/scorecore_adapters", "examples", "benchmarks"], ids=lambda f: f
)
def test_no_private_core_imports_outside_the_core(folder: str) -> None:
    """Adapters, examples and benchmarks use the core's public namespaces only."""
    offenders = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for name in imported_names(path):
            parts = name.split(".")
            if parts[0] == "scorecore" and any(p.startswith("_") for p in parts[1:]):
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert not offenders, offenders


KERNEL = ["scorecore._core", "scorecore.agent", "scorecore.composite", "scorecore.judge",
          "scorecore.validators"]
APPLICATION = ["scorecore.datasets", "scorecore.evals", "scorecore.live", "scorecore.scorers",
               "scorecore.traces"]


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
