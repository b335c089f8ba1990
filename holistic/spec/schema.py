"""Validate a merged run spec against ``schemas/runspec.schema.json`` (JSON Schema 2020-12).

A violation becomes a :class:`SpecError` at the offending value's file, line and
column, naming its document path, what was found and what was expected (unknown
keys get a "did you mean" from the valid ones).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from holistic.core.errors import SpecError, did_you_mean
from holistic.core.resources import project_path
from holistic.core.schema_check import conforms
from holistic.spec.source import DocPath, Locations

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

SCHEMA_PATH = project_path("schemas", "runspec.schema.json")
"""The run-spec schema, in the repository's ``schemas/`` folder."""

RETIRED_FIELDS: Mapping[str, str] = {"splits": "split_map", "on": "key", "right_on": "right_key"}
"""Field names earlier versions accepted -> the name that replaced them (a user file's ``splits``; a
join's ``on`` and ``right_on``, since YAML 1.1 reads a bare ``on:`` as ``true:``)."""
RETIRED_VALUES: Mapping[str, Mapping[str, str]] = {"selection": {"fixed": "first"}}
"""Field -> values earlier versions accepted -> the value that replaced them."""


def retired_field(key: object, allowed: Collection[str]) -> str | None:
    """The message for a field name earlier versions accepted, when its new name is allowed here."""
    if key in (True, "True") and "key" in allowed:  # a join's bare `on:`, read by YAML 1.1 as `true:`
        return (
            "True (YAML 1.1 reads a bare 'on:' as true) is no longer accepted: a join's key column is now "
            "named 'key' (key: qid, and right_key: for the joined file's column)"
        )
    new = RETIRED_FIELDS.get(key) if isinstance(key, str) else None
    return f"{key!r} is no longer accepted: it is now named {new!r}" if new in allowed else None


@lru_cache(maxsize=1)
def runspec_schema() -> dict[str, Any]:
    """The parsed run-spec schema."""
    try:
        schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(f"the run-spec schema is missing (looked for {SCHEMA_PATH})") from None
    return schema


def validate_document(data: Any, locations: Locations, schema: Mapping[str, Any] | None = None) -> None:
    """Raise a :class:`SpecError` for the first (in file order) schema violation, if any (a
    document :func:`conforms` accepts has none, and ``jsonschema`` is not even imported)."""
    root = dict(schema) if schema is not None else runspec_schema()
    if conforms(data, root):
        return
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(root)
    errors = list(validator.iter_errors(data))
    if not errors:
        return
    # A misspelt key also makes a required key "missing": report the misspelling first.
    ranked = sorted(errors, key=lambda e: e.validator == "required")
    found = [explain(err, root, locations) for err in ranked]
    missing = [e for e, err in zip(found, ranked, strict=True) if err.validator == "required"]
    others = [e for e, err in zip(found, ranked, strict=True) if err.validator != "required"]
    others.sort(key=lambda e: (e.file or "", e.line or 0, e.column or 0))
    found = others + missing
    first = found[0]
    if len(found) > 1:
        first = SpecError(
            f"{first.message} (and {len(found) - 1} more problem{'s' if len(found) > 2 else ''})",
            file=first.file,
            line=first.line,
            column=first.column,
            path=first.path,
        )
    raise first


def validate_value(
    value: Any, schema: Mapping[str, Any], locations: Locations, path: DocPath, *, what: str = "value"
) -> None:
    """Validate one value (e.g. scenario args) against a sub-schema; errors point under ``path``."""
    if conforms(value, schema):
        return
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(dict(schema))
    errors = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise explain(errors[0], dict(schema), locations, prefix=path, what=what)


def explain(
    err: ValidationError,
    root: Mapping[str, Any],
    locations: Locations,
    *,
    prefix: DocPath = (),
    what: str = "value",
) -> SpecError:
    """Turn one jsonschema error into a located, readable :class:`SpecError`."""
    err = _deepest(err)
    path: DocPath = (*prefix, *err.absolute_path)
    schema = err.schema if isinstance(err.schema, Mapping) else {}
    kind = err.validator

    if kind == "additionalProperties" and isinstance(err.instance, Mapping):
        allowed = sorted(_properties(schema, root))
        bad = sorted(k for k in err.instance if k not in allowed)
        key = bad[0] if bad else "?"
        msg = f"unknown field {key!r}"
        hint = did_you_mean(key, allowed)
        retired = retired_field(key, allowed)
        if retired:
            msg = f"field {retired}"
        elif hint:
            msg += "; did you mean " + " or ".join(repr(h) for h in hint) + "?"
        else:
            msg += f" (valid fields: {', '.join(allowed)})"
        return locations.key(path, key).error(msg, path=(*locations.display_path(path), key))
    if kind == "required":
        missing = [k for k in err.validator_value if isinstance(err.instance, Mapping) and k not in err.instance]
        name = missing[0] if missing else "?"
        if what == "value":
            return locations.error(path, f"missing required field {name!r}")
        return locations.error(path, f"missing required {name!r} ({what})")
    got = _describe_value(err.instance)
    if kind == "enum":
        options = [str(v) for v in err.validator_value]
        msg = f"got {got}; expected one of {', '.join(repr(o) for o in options)}"
        field = next((str(p) for p in reversed(path) if isinstance(p, str)), "")
        new = RETIRED_VALUES.get(field, {}).get(err.instance) if isinstance(err.instance, str) else None
        if new in options:
            msg = f"{field} {err.instance!r} is no longer accepted: it is now spelled {new!r}"
        elif isinstance(err.instance, str):
            hint = did_you_mean(err.instance, options)
            if hint:
                msg += "; did you mean " + " or ".join(repr(h) for h in hint) + "?"
        return locations.error(path, msg)
    expected = describe_schema(schema, root)
    return locations.error(path, f"invalid {what}: got {got}; expected {expected}")


def _deepest(err: ValidationError) -> ValidationError:
    """For ``anyOf``/``oneOf`` failures, the branch error that got furthest into the value."""
    while err.validator in ("anyOf", "oneOf") and err.context:
        # A branch that failed only on the type is the wrong branch; the others say more.
        fitting = [e for e in err.context if e.validator != "type" or len(e.relative_path) > 0]
        if not fitting:
            break
        err = max(fitting, key=lambda e: (len(e.relative_path), e.validator != "required"))
    return err


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part]
        return dict(node)
    return schema


def _properties(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[str]:
    props = _resolve(schema, root).get("properties", {})
    return list(props) if isinstance(props, Mapping) else []


_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "a mapping",
}


def describe_schema(schema: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    """A short English description of what a (sub)schema accepts."""
    schema = _resolve(schema, root)
    if "anyOf" in schema or "oneOf" in schema:
        branches = schema.get("anyOf") or schema.get("oneOf") or []
        return " or ".join(describe_schema(b, root) for b in branches)
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    types = schema.get("type")
    names = [types] if isinstance(types, str) else list(types or [])
    text = " or ".join(_TYPE_NAMES.get(t, t) for t in names) or "a value"
    if "array" in names and isinstance(schema.get("items"), Mapping):
        text = text.replace("a list", f"a list of ({describe_schema(schema['items'], root)})")
    if "minItems" in schema:
        text += f" with at least {schema['minItems']} item(s)"
    if "minLength" in schema:
        text += " (not empty)"
    if "maxLength" in schema:
        text += f" of at most {schema['maxLength']} characters"
    if "minimum" in schema and "maximum" in schema:
        text += f" from {schema['minimum']} to {schema['maximum']}"
    elif "minimum" in schema:
        text += f" >= {schema['minimum']}"
    elif "maximum" in schema:
        text += f" <= {schema['maximum']}"
    if "pattern" in schema:
        text += f" matching {schema['pattern']}"
    return text


def _describe_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, Mapping):
        return "a mapping"
    return f"a {type(value).__name__}"
