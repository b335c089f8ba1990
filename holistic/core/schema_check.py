"""A quick yes to "does this document conform to this JSON Schema?", without ``jsonschema``.

Importing ``jsonschema`` (with ``referencing``, ``attrs`` and the bundled metaschemas) and
building its validator is a noticeable part of a short ``helm-run``, spent to say that a run spec
and a models file are valid, which they nearly always are. :func:`conforms` answers that for
the keywords holistic's own schemas use (``schemas/*.schema.json``), so a valid document is
accepted without importing it; the callers go on to ``jsonschema`` whenever it does not answer
yes, and that finds and explains the errors as it always has.

So :func:`conforms` answers ``True`` only where ``jsonschema`` (Draft 2020-12, no format
assertion) finds no error. Each keyword it implements decides exactly as ``jsonschema`` does
(its type checks, its equality, where ``True`` is not ``1`` but ``1.0`` is, its regular
expressions), since a looser or a stricter answer inside ``if`` or ``oneOf`` would turn the
whole answer around; for anything else it answers ``False`` ("not shown valid"): a keyword it
does not implement, a ``$ref`` other than ``#/...`` in the same schema, a nested ``$id``, a
value that is not JSON (a ``set``, a ``Decimal``), a non-text key under ``patternProperties``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",  # an annotation only: the validators holistic builds assert no format
        "then",  # applied by "if"; alone, ignored as by jsonschema
        "else",
    }
)

_MAX_DEPTH = 200


class _Unsure(Exception):
    """Something :func:`conforms` does not decide: the caller asks ``jsonschema``."""


def conforms(instance: Any, schema: Mapping[str, Any] | bool, root: Mapping[str, Any] | None = None) -> bool:
    """Whether ``instance`` is valid against ``schema`` (its ``$ref`` resolved in ``root``, by
    default ``schema`` itself); ``False`` also when it cannot tell (see the module)."""
    if root is None:
        root = schema if isinstance(schema, Mapping) else {}
    try:
        return _valid(instance, schema, root, 0)
    except (_Unsure, RecursionError, re.error, TypeError, ValueError):
        return False


_JSON = (dict, list, str, bool, int, float, type(None))


def _valid(x: Any, schema: Any, root: Mapping[str, Any], depth: int) -> bool:
    if not isinstance(x, _JSON) or depth > _MAX_DEPTH:
        raise _Unsure
    if schema is True:
        return True
    if schema is False:
        return False
    if not isinstance(schema, Mapping) or ("$id" in schema and schema is not root):
        raise _Unsure
    for keyword, value in schema.items():
        check = _KEYWORDS.get(keyword)
        if check is None:
            if keyword in _ANNOTATIONS or keyword.startswith("x-"):  # jsonschema ignores extensions too
                continue
            raise _Unsure
        if not check(x, value, schema, root, depth + 1):
            return False
    return True


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _is_type(x: Any, kind: Any) -> bool:
    if kind == "object":
        return isinstance(x, dict)
    if kind == "array":
        return isinstance(x, list)
    if kind == "string":
        return isinstance(x, str)
    if kind == "boolean":
        return isinstance(x, bool)
    if kind == "null":
        return x is None
    if kind == "integer":
        return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())
    if kind == "number":
        return _is_number(x)
    raise _Unsure


def _same(a: Any, b: Any) -> bool:
    """``jsonschema``'s equality of JSON values: ``True`` is not ``1``, but ``1.0`` is ``1``."""
    if isinstance(a, str) or isinstance(b, str):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and _same(a[k], b[k]) for k in a)
    if isinstance(a, list | dict) or isinstance(b, list | dict):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def _type(x: Any, value: Any, schema: Any, root: Any, depth: int) -> bool:
    return any(_is_type(x, kind) for kind in value) if isinstance(value, list) else _is_type(x, value)


def _properties(x: Any, value: Any, schema: Any, root: Any, depth: int) -> bool:
    if not isinstance(x, dict):
        return True
    return all(_valid(x[name], sub, root, depth) for name, sub in value.items() if name in x)


def _pattern_properties(x: Any, value: Any, schema: Any, root: Any, depth: int) -> bool:
    if not isinstance(x, dict):
        return True
    for key, item in x.items():
        if not isinstance(key, str):
            raise _Unsure
        for pattern, sub in value.items():
            if re.search(pattern, key) and not _valid(item, sub, root, depth):
                return False
    return True


def _additional_properties(x: Any, value: Any, schema: Any, root: Any, depth: int) -> bool:
    if not isinstance(x, dict):
        return True
    named = schema.get("properties", {})
    patterns = "|".join(schema.get("patternProperties", {}))  # as jsonschema joins them
    for key, item in x.items():
        if key in named:
            continue
        if patterns:
            if not isinstance(key, str):
                raise _Unsure
            if re.search(patterns, key):
                continue
        if not _valid(item, value, root, depth):
            return False
    return True


def _ref(x: Any, value: Any, schema: Any, root: Any, depth: int) -> bool:
    if not isinstance(value, str) or not value.startswith("#/") or "%" in value:
        raise _Unsure
    target: Any = root
    for part in value[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            raise _Unsure
        target = target[part]
    return _valid(x, target, root, depth)


def _if(x: Any, value: Any, schema: Any, root: Any, depth: int) -> bool:
    branch = "then" if _valid(x, value, root, depth) else "else"
    return branch not in schema or _valid(x, schema[branch], root, depth)


def _sized(kind: str, least: bool) -> Any:
    def check(x: Any, value: Any, schema: Any, root: Any, depth: int) -> bool:
        if not _is_type(x, kind):
            return True
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Unsure
        return len(x) >= value if least else len(x) <= value

    return check


def _bound(fails: Any) -> Any:
    """A bound that a number ``fails`` (as jsonschema words it: a NaN fails none)."""

    def check(x: Any, value: Any, schema: Any, root: Any, depth: int) -> bool:
        if not _is_number(x):
            return True
        if not _is_number(value):
            raise _Unsure
        return not fails(x, value)

    return check


_KEYWORDS: dict[str, Any] = {
    "type": _type,
    "properties": _properties,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "required": lambda x, value, schema, root, depth: not isinstance(x, dict) or all(k in x for k in value),
    "enum": lambda x, value, schema, root, depth: any(_same(x, option) for option in value),
    "const": lambda x, value, schema, root, depth: _same(x, value),
    "allOf": lambda x, value, schema, root, depth: all(_valid(x, s, root, depth) for s in value),
    "anyOf": lambda x, value, schema, root, depth: any(_valid(x, s, root, depth) for s in value),
    "oneOf": lambda x, value, schema, root, depth: [_valid(x, s, root, depth) for s in value].count(True) == 1,
    "if": _if,
    "items": lambda x, value, schema, root, depth: (
        not isinstance(x, list) or all(_valid(i, value, root, depth) for i in x)
    ),
    "$ref": _ref,
    "pattern": lambda x, value, schema, root, depth: not isinstance(x, str) or re.search(value, x) is not None,
    "minItems": _sized("array", True),
    "maxItems": _sized("array", False),
    "minLength": _sized("string", True),
    "maxLength": _sized("string", False),
    "minProperties": _sized("object", True),
    "maxProperties": _sized("object", False),
    "minimum": _bound(lambda x, b: x < b),
    "maximum": _bound(lambda x, b: x > b),
    "exclusiveMinimum": _bound(lambda x, b: x <= b),
    "exclusiveMaximum": _bound(lambda x, b: x >= b),
}
