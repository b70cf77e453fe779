"""A scorer's fingerprint: a stable hash of its definition (``Scorer.fingerprint``).

What goes in: the id, the ``version=`` given to ``create_scorer``, the scorer type and its
input/output types, and per step its name, kind and description; a prompt step's judge (model
id and provider, instructions, how the schema is conveyed, settings, processors by class,
retry budget), its output schema and type; every function — step functions, ``create_prompt``,
``calculate_score``, ``prepare_run`` — by its code: bytecode, constants (nested code objects
included), the names it reads, default arguments and the plain values it closes over.

What stays out, so that moving code around does not look like an edit: file names, line
numbers, the values of the globals a function reads (only their names count), and anything
that differs between processes (object addresses, ``hash()`` seeds). Bytecode differs
between Python versions, and so does the fingerprint.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Iterable, Mapping, Sequence

from scorecore._core._cache import canonical_digest
from scorecore._core._config import PromptStep, ResolvedJudge, ScorePromptStep
from scorecore._core._definition import StepInfo

# Scorer.fingerprint is the public face of the rest; function_identity is re-exported by
# scorecore.judge.economics.
__all__ = ["function_identity"]

_VERSION = "scorecore-fingerprint/1"
_PLAIN = (str, int, float, bool, bytes, type(None))
_MAX_DEPTH = 8


def _type_name(tp: object) -> str:
    if tp is None:
        return "None"
    module = getattr(tp, "__module__", "")
    name = getattr(tp, "__qualname__", None)
    return f"{module}.{name}" if name else repr(tp)


def _code(code: types.CodeType, depth: int) -> dict[str, object]:
    return {
        "code": code.co_code,
        "consts": [_value(c, depth + 1) for c in code.co_consts],
        "names": list(code.co_names),
        "varnames": list(code.co_varnames),
        "freevars": list(code.co_freevars),
        "argcount": (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount),
        "flags": code.co_flags,
    }


def _function(fn: object, depth: int = 0) -> object:
    """A function (or callable object) by its code and the plain values it carries."""
    if depth > _MAX_DEPTH:
        return ["deep", _type_name(type(fn))]
    if isinstance(fn, functools.partial):
        return ["partial", _function(fn.func, depth + 1),
                [_value(a, depth + 1) for a in fn.args],
                {k: _value(v, depth + 1) for k, v in fn.keywords.items()}]
    if inspect.ismethod(fn):
        return ["method", _function(fn.__func__, depth + 1), _type_name(type(fn.__self__))]
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        call = inspect.getattr_static(type(fn), "__call__", None)
        inner = getattr(call, "__code__", None)
        # A callable object: its class and its __call__'s code.
        return ["callable", _type_name(type(fn)),
                _code(inner, depth + 1) if isinstance(inner, types.CodeType) else None]
    closure = getattr(fn, "__closure__", None) or ()
    cells: list[object] = []
    for cell in closure:
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            cells.append(["empty"])
            continue
        cells.append(_value(contents, depth + 1))
    return {
        "function": _code(code, depth),
        "defaults": [_value(d, depth + 1) for d in (getattr(fn, "__defaults__", None) or ())],
        "kwdefaults": {k: _value(v, depth + 1)
                       for k, v in (getattr(fn, "__kwdefaults__", None) or {}).items()},
        "closure": cells,
    }


def _value(value: object, depth: int) -> object:
    """Plain data as itself, code by its code, anything else by its type's name."""
    if isinstance(value, _PLAIN):
        return value
    if depth > _MAX_DEPTH:
        return ["deep", _type_name(type(value))]
    if isinstance(value, types.CodeType):
        return _code(value, depth)
    if isinstance(value, list | tuple | frozenset | set):
        items = [_value(v, depth + 1) for v in value]
        return ["set", sorted(map(repr, items))] if isinstance(value, set | frozenset) else items
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): _value(v, depth + 1)
                for k, v in value.items()}
    if isinstance(value, type):
        return ["type", _type_name(value)]
    if callable(value):
        return _function(value, depth + 1)
    return ["object", _type_name(type(value))]


def _judge(judge: ResolvedJudge | None) -> dict[str, object] | None:
    if judge is None:
        return None
    settings = judge.model_settings
    return {
        "model_id": judge.model.model_id,
        "provider": judge.model.provider,
        "instructions": judge.instructions,
        "json_prompt_injection": judge.json_prompt_injection,
        "settings": {
            "temperature": settings.temperature, "top_p": settings.top_p,
            "max_output_tokens": settings.max_output_tokens, "seed": settings.seed,
            "timeout": settings.timeout, "extra": dict(settings.extra),
        },
        "processors": [
            [_type_name(type(p)) for p in group]
            for group in (judge.input_processors, judge.output_processors,
                          judge.error_processors)
        ],
        "max_processor_retries": judge.max_processor_retries,
    }


def _step(info: StepInfo) -> dict[str, object]:
    step: dict[str, object] = {
        "name": info.name, "kind": info.kind, "description": info.description,
    }
    definition = info.definition
    if not isinstance(definition, PromptStep | ScorePromptStep):  # a function step
        step["function"] = _function(definition)
        return step
    output_type = getattr(definition, "output_type", None)
    step |= {
        "prompt_description": definition.description,
        "create_prompt": _function(definition.create_prompt),
        "output_schema": definition.output_schema,
        "output_type": _type_name(output_type) if isinstance(output_type, type) else repr(
            output_type),
        "calculate_score": (
            None if getattr(definition, "calculate_score", None) is None
            else _function(getattr(definition, "calculate_score", None))
        ),
        "judge": _judge(info.judge),
    }
    example = getattr(definition, "example", None)
    if example is not None:  # absent without one: a step's fingerprint stays as it was
        step["example"] = {"text": example.text, "statements": list(example.statements)}
    return step


def fingerprint(
    *,
    scorer_id: str,
    version: str | None,
    scorer_type: str | None,
    input_type: object,
    output_type: object,
    prepare_run: object,
    steps: Iterable[StepInfo],
) -> str:
    """The fingerprint of a scorer definition: 64 hex characters (SHA-256)."""
    canonical = {
        "id": scorer_id,
        "version": version,
        "type": scorer_type,
        "input_type": _type_name(input_type) if input_type is not None else None,
        "output_type": _type_name(output_type) if output_type is not None else None,
        "prepare_run": None if prepare_run is None else _function(prepare_run),
        "steps": [_step(info) for info in steps],
    }
    return canonical_digest(_VERSION, canonical)


def function_identity(fn: object) -> str:
    """A stable digest of a function's code, hashed as a scorer's fingerprint hashes its
    functions (bytecode, constants, names read, defaults, plain closed-over values): 64 hex
    characters. A judge model that answers with a user's function gives it in its
    ``cache_identity``, so an edited function never reads the old function's cached replies.

    >>> function_identity(lambda r: 1) == function_identity(lambda r: 1)
    True
    >>> function_identity(lambda r: 1) == function_identity(lambda r: 2)
    False
    """
    return canonical_digest(_VERSION, {"function": _function(fn)})


def composite_fingerprint(
    *,
    kind: str,
    scorer_id: str,
    version: str | None,
    policy: Mapping[str, object],
    members: Sequence[str],
) -> str:
    """The fingerprint of a scorer made of scorers: its kind, id, policy (plain values, and
    functions by their code) and its members' fingerprints in order."""
    canonical = {
        "kind": kind,
        "id": scorer_id,
        "version": version,
        "policy": {name: _value(value, 0) for name, value in policy.items()},
        "members": list(members),
    }
    return canonical_digest(_VERSION, canonical)
