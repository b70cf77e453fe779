"""The API reference: one page per public module, generated from its ``__all__``.

A public module is one whose dotted path has no ``_``-prefixed part, under ``scorecore`` or
``scorecore_adapters``. Each name of its ``__all__`` is rendered by autodoc on that page, once:
an object exported by several modules is rendered at its home (the first of them in sorted
order: ``scorecore`` before ``scorecore.judge``, the core before the adapters) and listed as a
re-export on the others.

References are resolved in three more ways than Sphinx's own (every one to a real object, so a
typo still fails the nitpicky build):

- a short name (``:class:`ScoreRow```) written in a docstring of another module resolves when
  exactly one rendered object has that name;
- a private path (``scorecore._core._values.ScoreResult``, what annotations name) resolves to
  where that same object is rendered;
- a name outside the project (``collections.abc.Callable``, ``returns.result.Result``) that
  imports is rendered as text: the build fetches nothing, so there is no inventory to link to.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import pkgutil
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ParamSpec, TypeVar

from docutils import nodes
from sphinx.addnodes import desc, desc_signature, pending_xref
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

PACKAGES = ("scorecore", "scorecore_adapters")
FOLDER = "reference"
# Values that equal by identity only by accident (small ints, interned strings) are never
# re-exports of each other.
_SCALARS = (int, float, str, bytes, bool, type(None))


def public_modules() -> list[str]:
    """Every public module of the two packages, sorted."""
    names: set[str] = set()
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.add(package_name)
        for info in pkgutil.walk_packages(package.__path__, f"{package_name}."):
            parts = info.name.split(".")
            if any(part.startswith("_") for part in parts):
                continue
            names.add(info.name)
    return sorted(names)


def _exported(module_name: str) -> list[str]:
    return list(getattr(importlib.import_module(module_name), "__all__", ()))


def homes(modules: list[str]) -> dict[int, str]:
    """``{id(object): "module.name"}``: where each exported object is rendered in full."""
    home: dict[int, str] = {}
    # An object's own name first: ``PartialResult = ScoreResult`` is rendered at ScoreResult.
    for own_name_only in (True, False):
        for module_name in modules:
            module = importlib.import_module(module_name)
            for name in _exported(module_name):
                obj = getattr(module, name)
                if isinstance(obj, _SCALARS):
                    continue
                if not own_name_only or getattr(obj, "__name__", None) == name:
                    home.setdefault(id(obj), f"{module_name}.{name}")
    return home


def _kind(obj: object) -> str:
    """The autodoc / Python-domain directive for an exported object."""
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return "function"
    if isinstance(obj, ModuleType):
        return "module"
    return "data"


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def render(module_name: str, home: dict[int, str], children: Sequence[str] = ()) -> str:
    """The reStructuredText page of one module, its public submodules listed at the end."""
    module = importlib.import_module(module_name)
    lines = [
        f".. This page is generated from {module_name}.__all__ (docs/_ext/reference.py).",
        "",
        _title(f"``{module_name}``"),
        f".. automodule:: {module_name}",
        "   :no-members:",
        "",
    ]
    names = _exported(module_name)
    if not names:
        lines += ["This module exports no names of its own.", ""]
    for name in names:
        obj = getattr(module, name)
        kind = _kind(obj)
        full = f"{module_name}.{name}"
        where = home.get(id(obj), full)
        if kind == "module":
            lines += [f"``{name}``: the module :py:mod:`{obj.__name__}`.", ""]
        elif where != full:
            role = {"exception": "py:exc", "function": "py:func"}.get(kind, f"py:{kind}")
            lines += [
                f".. py:{kind}:: {name}",
                f"   :module: {module_name}",
                "",
                f"   Re-exported: the same object as :{role}:`{where}`."
                if where.rpartition(".")[2] == name
                else f"   Another name for :{role}:`{where}`: the same object.",
                "",
            ]
        else:
            lines += [f".. auto{kind}:: {full}"]
            if inspect.isclass(obj) and any(
                _private(base) and id(base) not in home for base in obj.__mro__[1:]
            ):
                # What a private base defines is this class's API: rendered here.
                lines.append("   :inherited-members:")
            lines.append("")
    if children:
        lines += [".. rubric:: Modules", "", ".. toctree::", "   :maxdepth: 1", ""]
        lines += [f"   {child}" for child in children] + [""]
    return "\n".join(lines)


def _write_if_changed(path: Path, text: str) -> None:
    # Rewriting an unchanged page would make Sphinx read it again on every build.
    if not path.exists() or path.read_text("utf-8") != text:
        path.write_text(text, "utf-8")


def generate(app: Sphinx) -> None:
    """Write ``reference/<module>.rst`` for every public module and drop stale pages."""
    modules = public_modules()
    home = homes(modules)
    folder = Path(app.srcdir) / FOLDER
    folder.mkdir(exist_ok=True)
    wanted = {f"{name}.rst" for name in modules}
    for stale in folder.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    for name in modules:
        children = [m for m in modules if m.rpartition(".")[0] == name]
        _write_if_changed(folder / f"{name}.rst", render(name, home, children))
    app.env.scorecore_homes = home  # type: ignore[attr-defined]
    app.env.scorecore_reexports = {  # type: ignore[attr-defined]
        f"{module_name}.{name}"
        for module_name in modules
        for name in _exported(module_name)
        if home.get(id(getattr(importlib.import_module(module_name), name)))
        not in (None, f"{module_name}.{name}")
    }


def _resolve_object(path: str) -> object | None:
    """The object a dotted path names (a module, then attributes), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                return None
        return obj
    return getattr(builtins, path, None) if len(parts) == 1 else None


def _xref(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.Element, target: str
) -> nodes.Element | None:
    domain = env.get_domain("py")
    for reftype in (node["reftype"], "obj"):
        found = domain.resolve_xref(
            env, node["refdoc"], app.builder, reftype, target, node, contnode
        )
        if found is not None:
            return found
    return None


def _rendered(env: BuildEnvironment) -> dict[str, Any]:
    """The Python domain's objects that are rendered in full (no aliases, no re-exports)."""
    objects: dict[str, Any] = env.get_domain("py").objects  # type: ignore[attr-defined]
    reexports: set[str] = getattr(env, "scorecore_reexports", set())
    return {
        name: entry
        for name, entry in objects.items()
        if not entry.aliased and name not in reexports
    }


def _private(obj: type) -> bool:
    """Whether a class is the project's but exported by no public module."""
    module = obj.__module__ or ""
    return module.split(".", 1)[0] in PACKAGES and any(
        part.startswith("_") for part in [*module.split("."), obj.__qualname__]
    )


def public_bases(
    app: Sphinx, name: str, obj: object, options: dict[str, Any], bases: list[type]
) -> None:
    """"Bases:" names public classes: a private base is replaced by its own bases."""
    home: dict[int, str] = getattr(app.env, "scorecore_homes", {})
    shown: list[type] = []
    pending = list(bases)
    while pending:
        base = pending.pop(0)
        # A subscripted base (``Generic[T]``) is shown as written.
        if inspect.isclass(base) and _private(base) and id(base) not in home:
            pending[:0] = [b for b in base.__bases__ if b is not object]
        elif base not in shown:
            shown.append(base)
    bases[:] = shown or [object]


def _signature(node: pending_xref) -> list[str] | None:
    """For a type that autodoc or napoleon wrote (an annotation, a field's type; not a role
    in a docstring, which says ``refwarn``), the modules whose names it may use: those
    defining the documented object and its class, then the public module."""
    if node.hasattr("refwarn"):
        return None
    parent = node.parent
    while parent is not None and not isinstance(parent, desc):
        parent = parent.parent
    signatures = [] if parent is None else list(parent.findall(desc_signature))
    if not signatures:
        return None
    module = signatures[0].get("module") or ""
    fullname = signatures[0].get("fullname") or ""
    modules = []
    for path in (f"{module}.{fullname}", f"{module}.{fullname.split('.')[0]}"):
        defining = getattr(_resolve_object(path), "__module__", None)
        if isinstance(defining, str):
            modules.append(defining)
    return [*modules, module]


def missing_reference(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    """Resolve what Sphinx could not, or leave it to fail the build."""
    if node.get("refdomain") != "py":
        return None
    target: str = node["reftarget"]
    home: dict[int, str] = getattr(env, "scorecore_homes", {})
    signature = _signature(node)
    obj = _resolve_object(target)
    if obj is None and signature is not None and "." not in target:
        # A bare name in a signature is one of the defining module's names.
        for module_name in signature:
            obj = _resolve_object(f"{module_name}.{target}")
            if obj is not None:
                break
    # A type parameter (``Scorer[In, Out]``) is no documented object.
    if isinstance(obj, TypeVar | ParamSpec):
        return contnode
    # A signature may name what no public module exports (a private alias or class): its
    # name, as text.
    if signature is not None and obj is not None and id(obj) not in home:
        defining = getattr(obj, "__module__", None) or target
        if defining.split(".")[0] not in PACKAGES or any(
            part.startswith("_") for part in [*defining.split("."), *target.split(".")]
        ):
            return contnode
    top = target.split(".", 1)[0]
    if top in PACKAGES:
        # A private path (annotations name the defining module): the object's rendered home,
        # or the home of the class whose member it is.
        parts = target.split(".")
        for cut in range(len(parts), 1, -1):
            obj = _resolve_object(".".join(parts[:cut]))
            if obj is not None and id(obj) in home:
                public = ".".join([home[id(obj)], *parts[cut:]])
                if public != target:
                    return _xref(app, env, node, contnode, public)
                return None
        return None
    # A name relative to some module (``ScoreRow`` or ``ScoreRow.from_record``).
    rendered = _rendered(env)
    suffix = f".{target}"
    module = node.get("py:module") or ""
    candidates = [name for name in rendered if name.endswith(suffix)]
    # Prefer the object of the docstring's own module, then any unique one.
    local = [name for name in candidates if name.startswith(f"{module}.")]
    for group in (local, candidates):
        objects = {id(_resolve_object(name)) for name in group}
        if group and len(objects) == 1:
            return _xref(app, env, node, contnode, min(group, key=len))
    # Outside the project (``collections.abc.Callable``, ``reprlib``): text, once the name is
    # known to exist. Builtins (``int``) are Sphinx's own to resolve.
    if ("." in target or node["reftype"] == "mod") and _resolve_object(target) is not None:
        return contnode
    return None


class BuiltinsAsText(SphinxPostTransform):
    """A builtin in an annotation (``type[I]``) stays text.

    Sphinx looks annotation names up loosely and falls back to attributes, so ``type`` would
    match every documented ``.type`` attribute; its own resolver only makes a builtin text
    once nothing matched.
    """

    default_priority = 5  # before the references are resolved (10)

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(pending_xref)):
            target = node.get("reftarget", "")
            if (
                node.get("refdomain") == "py"
                and node.get("reftype") == "class"
                and inspect.isclass(getattr(builtins, target, None))
            ):
                node.replace_self(node.children)


# The docstrings of attributes, properties and constants are prose whose first line often has a
# colon ("The counts: offered, running, ..."); napoleon would read it as "type: description".
# Their types come from the annotations, so napoleon is kept off them: their lines are kept
# before it runs and put back after.
_PROSE = ("attribute", "property", "data")
_kept: dict[str, list[str]] = {}


def _words(lines: list[str]) -> list[str]:
    return " ".join(lines).split()


def _keep_prose(  # noqa: PLR0917 - autodoc-process-docstring's signature
    app: Sphinx, what: str, name: str, obj: object, options: Any, lines: list[str]
) -> None:
    if what == "data" and _words(lines) == _words((type(obj).__doc__ or "").splitlines()):
        # A constant with no docstring of its own would show its type's (``dict``'s, say).
        lines.clear()
    if what in _PROSE:
        _kept[name] = list(lines)


def _restore_prose(  # noqa: PLR0917 - autodoc-process-docstring's signature
    app: Sphinx, what: str, name: str, obj: object, options: Any, lines: list[str]
) -> None:
    if what in _PROSE and name in _kept:
        lines[:] = _kept.pop(name)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the generator and the resolver."""
    app.connect("builder-inited", generate)
    # napoleon listens at the default priority, 500.
    app.connect("autodoc-process-docstring", _keep_prose, priority=400)
    app.connect("autodoc-process-docstring", _restore_prose, priority=600)
    app.connect("missing-reference", missing_reference)
    app.connect("autodoc-process-bases", public_bases)
    app.add_post_transform(BuiltinsAsText)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
