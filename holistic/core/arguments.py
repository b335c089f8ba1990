"""Arguments declared once: the fields of a frozen dataclass, their JSON Schema derived.

A scenario's or a perturbation's arguments are the fields of a frozen dataclass (the class
itself), so a run spec's ``args`` map one-to-one onto them: the constructor, the defaults and
the JSON Schema the spec is validated against all come from the one declaration.

- a field's type gives its JSON type: ``int``, ``float``, ``str``, ``bool``, ``Literal[...]``
  (an ``enum``), ``tuple[T, ...]``/``list[T]`` (an array), ``X | None``;
- its default becomes the schema's ``default``; a field without one is required;
- what a type cannot say (``minimum``, ``enum`` of a runtime tuple, ``pattern``, a
  ``description``...) is given with :func:`arg`, whose ``schema=`` replaces the derived
  property entirely where it is too rich to derive (a nested field mapping).

:func:`args_schema` derives the object schema; :func:`unknown_argument` is the one message for
an argument name a class does not have.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, overload

from holistic.core.errors import did_you_mean

T = TypeVar("T")
_SCHEMA_KEY = "json_schema"
_OVERRIDE_KEY = "json_schema_override"


@overload
def arg(default: T, *, description: str = ..., schema: Mapping[str, Any] | None = ..., **constraints: Any) -> T: ...
@overload
def arg(*, description: str = ..., schema: Mapping[str, Any] | None = ..., **constraints: Any) -> Any: ...
def arg(
    default: Any = dataclasses.MISSING,
    *,
    description: str = "",
    schema: Mapping[str, Any] | None = None,
    **constraints: Any,
) -> Any:
    """A dataclass field (an argument) with what its type cannot say for the JSON Schema.

    ``constraints`` are JSON Schema keywords added to the derived property (``minimum=1``,
    ``enum=SUBJECTS``, ``pattern=...``, ``minItems=1``); ``schema`` replaces the derived
    property entirely (still the one statement of the argument). A list or dict default is
    copied for each instance."""
    extra: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v for k, v in constraints.items()}
    if description:
        extra["description"] = description
    metadata: dict[str, Any] = {_SCHEMA_KEY: extra}
    if schema is not None:
        metadata[_OVERRIDE_KEY] = dict(schema)
    if isinstance(default, (list, dict)):
        value = default
        return dataclasses.field(default_factory=lambda: type(value)(value), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def argument_fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    """The arguments ``cls`` declares (none when it is not a dataclass)."""
    if not dataclasses.is_dataclass(cls):
        return ()
    return tuple(f for f in dataclasses.fields(cls) if f.init)


@functools.cache
def args_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema (an object, nothing else accepted) of the arguments ``cls`` declares."""
    fields = argument_fields(cls)
    hints = typing.get_type_hints(cls) if fields else {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in fields:
        properties[f.name] = _property(f, hints.get(f.name, Any))
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def argument_defaults(cls: type) -> dict[str, Any]:
    """Each argument that has a default -> that default."""
    out: dict[str, Any] = {}
    for f in argument_fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def unknown_argument(kind: str, name: str, key: str, known: Collection[str]) -> str:
    """The message for an argument ``key`` that ``kind`` ``name`` does not take (nearest names suggested)."""
    message = f"unknown argument {key!r} of {kind} {name!r}"
    hint = did_you_mean(key, sorted(known))
    if hint:
        message += "; did you mean " + " or ".join(repr(h) for h in hint) + "?"
    return message + f" (arguments: {', '.join(sorted(known)) or 'none'})"


def _property(f: dataclasses.Field[Any], hint: Any) -> dict[str, Any]:
    override = f.metadata.get(_OVERRIDE_KEY)
    if override is not None:
        return dict(override)
    prop = _type_schema(hint)
    prop.update(f.metadata.get(_SCHEMA_KEY, {}))
    if "enum" in prop:
        prop.pop("type", None)
    default = _default(f)
    if default is not None:
        prop["default"] = default
    return prop


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return None
    return list(value) if isinstance(value, tuple) else value


_SCALARS: Mapping[Any, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of a type annotation (``{}``: anything)."""
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    origin, params = get_origin(hint), get_args(hint)
    if origin is Literal:
        return {"enum": list(params)}
    if origin in (Union, types.UnionType):
        options = [p for p in params if p is not type(None)]
        return _type_schema(options[0]) if len(options) == 1 else {"anyOf": [_type_schema(p) for p in options]}
    if origin in (tuple, list, Sequence, Collection) and params:
        return {"type": "array", "items": _type_schema(params[0])}
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return {"type": "object"}
    return {}
