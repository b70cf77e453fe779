"""Loading the user's scorers and target from a reference, for the command line and for Ray.

One grammar for both (documented in docs/cli.md, "References to scorers and targets")::

    REFERENCE := SOURCE [":" NAMES]
    SOURCE    := a Python file (path/to/scorers.py, or any path with a separator)
               | a dotted module name (my_pkg.scorers)
    NAMES     := NAME ("," NAME)*
    NAME      := a scorer id | an attribute path (attr or attr.attr)

A named attribute may be a scorer, a list of scorers, or a zero-argument factory returning
either. Without ``NAMES`` the module's ``scorers`` list is taken if it has one, else every
module-level scorer. A target is ``SOURCE ":" ATTRIBUTE``, the attribute a callable.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Final, final

import attrs

from scorecore import Scorer

__all__ = [
    "LoadError",
    "LoadedScorers",
    "NotScorersError",
    "absolute_reference",
    "load_scorers",
    "load_target",
    "scorers_of",
    "split_reference",
]

_CLIP: Final = 200


class LoadError(ValueError):
    """A reference that names nothing loadable (a missing file, module or name, a module that
    fails to import, a malformed reference); the message says which and why, in one line."""


class NotScorersError(LoadError, TypeError):
    """A reference, or a factory, that gives something other than scorers."""


def _clip(text: str) -> str:
    return text if len(text) <= _CLIP else text[: _CLIP - 1] + "…"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" ({last.filename}:{last.lineno})"


def _is_file(source: str) -> bool:
    return source.endswith(".py") or os.sep in source or "/" in source


def _import(spec: str, what: str) -> ModuleType:
    """Import a module by file path (``x/y.py``) or dotted name."""
    if _is_file(spec):
        return _import_file(Path(spec), what)
    if str(Path.cwd()) not in sys.path and "" not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    return _import_name(spec, what, spec)


def _import_name(name: str, what: str, shown: str) -> ModuleType:
    """Import the module ``name`` (shown as ``shown`` in errors)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Only the module asked for (or a parent package) is "not found"; a module it imports
        # that is missing is an import failure of the user's module, named as such.
        if exc.name and (exc.name == name or name.startswith(exc.name + ".")):
            raise LoadError(f"{what} module not found: {shown}") from None
        raise LoadError(
            f"importing {what} {shown} failed: {type(exc).__name__}: {exc}{_where(exc)}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's module is the boundary
        raise LoadError(
            f"importing {what} {shown} failed: {type(exc).__name__}: {exc}{_where(exc)}"
        ) from None


def _in_package(path: Path) -> tuple[Path, str] | None:
    """For a file inside a package (its directory holds ``__init__.py``, and maybe the ones
    above): the directory above the outermost package and the file's dotted module name."""
    if not (path.parent / "__init__.py").is_file():
        return None
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.append(folder.name)
        folder = folder.parent
    if not all(part.isidentifier() for part in parts):
        return None  # a directory such as "my-evals" cannot be imported by name
    top = sys.modules.get(parts[-1])
    if top is not None and all(Path(p).resolve() != folder / parts[-1]
                               for p in getattr(top, "__path__", ())):
        return None  # another package of that name is imported already
    return folder, ".".join(reversed(parts))


def _import_file(path: Path, what: str) -> ModuleType:
    if not path.is_file():
        raise LoadError(f"{what} file not found: {path}")
    resolved = path.resolve()
    package = _in_package(resolved)
    if package is not None:
        # Imported by its dotted name from the project root, as `python -m` would: the file's
        # own package (`from myeval.common import …`) and its relative imports resolve.
        root, name = package
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        module = _import_name(name, what, str(path))
        found = getattr(module, "__file__", None)
        if found is not None and Path(found).resolve() == resolved:
            return module
        # Another package of that name came first on the path: load the file itself.
    name = "scorecore_user_" + "".join(c if c.isalnum() else "_" for c in path.stem)
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise LoadError(f"cannot import {what} file {path}")
    module = importlib.util.module_from_spec(module_spec)
    # Let the file import its siblings, as `python path/to/file.py` would.
    parent = str(resolved.parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's module is the boundary
        del sys.modules[name]
        raise LoadError(
            f"importing {what} {path} failed: {type(exc).__name__}: {exc}{_where(exc)}"
        ) from None
    return module


def split_reference(spec: str) -> tuple[str, str | None]:
    """A reference's ``SOURCE`` and the ``NAMES`` after its last colon (``None`` if none).

    >>> split_reference("evals/scorers.py:exact,half")
    ('evals/scorers.py', 'exact,half')
    >>> split_reference("C:/evals/scorers.py")  # a drive letter is no separator
    ('C:/evals/scorers.py', None)
    """
    head, sep, tail = spec.rpartition(":")
    if not sep or not head or (len(head) == 1 and head.isalpha()):  # no ':' or a drive letter
        return spec, None
    return head, tail


def absolute_reference(spec: str) -> str:
    """``spec`` with a file ``SOURCE`` made absolute (Ray actors may not share the caller's
    directory); a module name is left as it is."""
    source, names = split_reference(spec)
    if not _is_file(source):
        return spec
    return str(Path(source).resolve()) + ("" if names is None else f":{names}")


def _attribute(module: ModuleType, path: str) -> tuple[bool, Any]:
    """The object the dotted attribute ``path`` names in ``module``, if there is one."""
    value: Any = module
    for part in path.split("."):
        if not part or not hasattr(value, part):
            return False, None
        value = getattr(value, part)
    return True, value


def scorers_of(value: object, shown: str) -> tuple[Scorer[Any, Any], ...]:
    """The scorers ``value`` gives: a scorer, an iterable of scorers, or a zero-argument
    callable returning either (called once). ``shown`` names it in errors.

    Raises:
        NotScorersError: it gives something else.
    """
    if callable(value) and not isinstance(value, Scorer):
        try:
            value = value()
        except Exception as exc:  # noqa: BLE001 - the user's factory is the boundary
            raise LoadError(f"scorers {shown} failed: {type(exc).__name__}: {exc}"
                            f"{_where(exc)}") from None
    found = (value,) if isinstance(value, Scorer) else value
    if isinstance(found, str | bytes | Mapping) or not isinstance(found, Iterable):
        raise NotScorersError(
            f"scorers {shown} gave {type(value).__name__}, not a scorer or scorers")
    scorers = tuple(found)
    for scorer in scorers:
        if not isinstance(scorer, Scorer):
            raise NotScorersError(f"scorers {shown} gave {type(scorer).__name__} among the scorers")
    return scorers


@final
@attrs.frozen(kw_only=True)
class LoadedScorers:
    """The scorers picked from a module, and the ones it reported as skipped."""

    scorers: tuple[Scorer[Any, Any], ...]
    skipped: Mapping[str, str]


def load_scorers(spec: str) -> LoadedScorers:
    """Load the scorers the reference ``spec`` names (see the module docstring).

    Raises:
        LoadError: the file or module is missing or fails to import, a selected name is
            unknown (the message lists the available ones), or no scorer is found.
        NotScorersError: a selected attribute gives something other than scorers.
    """
    target, selection = split_reference(spec)
    module = _import(target, "scorers")
    namespace = vars(module)
    skipped_raw = namespace.get("skipped_scorers") or {}
    if not isinstance(skipped_raw, Mapping):
        raise LoadError(
            f"skipped_scorers in {target} must be a mapping of scorer id to reason, "
            f"got {type(skipped_raw).__name__} {_clip(repr(skipped_raw))}"
        )
    skipped = {str(k): str(v) for k, v in skipped_raw.items()}
    by_name: dict[str, Scorer[Any, Any]] = {}
    for attr, value in namespace.items():
        if isinstance(value, Scorer):
            by_name.setdefault(attr, value)
            by_name.setdefault(value.id, value)
    listed = namespace.get("scorers")
    default: list[Scorer[Any, Any]]
    if isinstance(listed, list | tuple):
        default = [s for s in listed if isinstance(s, Scorer)]
        for scorer in default:
            by_name.setdefault(scorer.id, scorer)
    else:
        default = [v for v in namespace.values() if isinstance(v, Scorer)]
    if selection is None:
        chosen = list({id(s): s for s in default}.values())
        picked_skips = skipped
    else:
        chosen = []
        picked_skips = {}
        for name in (n.strip() for n in selection.split(",")):
            if not name:
                continue
            if name in skipped:
                picked_skips[name] = skipped[name]
                continue
            found = by_name.get(name)
            if found is not None:
                picked: tuple[Scorer[Any, Any], ...] = (found,)
            else:
                exists, value = _attribute(module, name)
                if not exists:
                    available = sorted({s.id for s in by_name.values()} | set(skipped))
                    raise LoadError(
                        f"unknown scorer {name!r} in {target}; available: "
                        f"{', '.join(available) or '(none)'}"
                    )
                picked = scorers_of(value, f"{target}:{name}")
            chosen.extend(p for p in picked if all(p is not s for s in chosen))
    if not chosen and not picked_skips:
        raise LoadError(
            f"no scorers found in {target}: define Scorer values at module level "
            f"or a module-level 'scorers' list"
        )
    return LoadedScorers(scorers=tuple(chosen), skipped=picked_skips)


def load_target(spec: str) -> Callable[..., Any]:
    """Load the target ``SOURCE:ATTRIBUTE`` names (``module:function``,
    ``path/file.py:function``, ``module:Class.method``).

    Raises:
        LoadError: malformed spec, missing module or attribute, or not callable.
    """
    module_spec, name = split_reference(spec)
    if not name:
        raise LoadError(f"target must look like module:function or path/file.py:function, "
                        f"got {spec!r}")
    module = _import(module_spec, "target")
    exists, target = _attribute(module, name)
    if not exists:
        raise LoadError(f"target {name!r} not found in {module_spec}")
    if not callable(target):
        raise LoadError(f"target {spec} is not callable")
    return target  # type: ignore[no-any-return]
