"""Read one model registry file: YAML with line numbers (:mod:`holistic.core.located_yaml`,
as for run specs), schema validation, deployments.

A registry file (the built-in ``models.yaml`` or a user's ``--models-file``) holds
``models`` (one deployment per name) and ``patterns`` (families of names such as
``openai/{model_id}``). It is checked against ``schemas/models.schema.json`` and then
semantically (known provider, unique names, no secrets). Every error names the file,
the line, the field path and, where a name is wrong, the nearest valid one.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holistic.core.errors import SpecError, did_you_mean
from holistic.core.located_yaml import DocPath, Locations, load_source
from holistic.core.resources import project_path
from holistic.core.schema_check import conforms
from holistic.core.secrets import is_secret_name
from holistic.core.types import Capabilities, ModelDeployment, ReasoningSupport
from holistic.models.batch_spec import BATCH_PROVIDERS, no_batch_api

if TYPE_CHECKING:
    import jsonschema

SCHEMA_PATH = project_path("schemas", "models.schema.json")
"""The registry file schema, in the repository's ``schemas/`` folder."""

PLACEHOLDER = "{model_id}"


def model_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a model name (``None`` when it can): the character rules of suite and
    run names. A control character, NUL or a bidi override (U+202E shows ``acme/\u202e4-tpg-ianepo``
    as ``acme/openai-gpt-4`` and bleeds into the next name on a page) is refused."""
    bad = next((ch for ch in name if unicodedata.category(ch).startswith("C")), None)
    if bad is not None:
        return (
            f"a model name must not contain control or formatting characters (found U+{ord(bad):04X} "
            f"{unicodedata.name(bad, 'control')}: newlines, NUL and direction marks are refused)"
        )
    if not name.strip() or name != name.strip():
        return "a model name must not be empty or start or end with spaces"
    return None


@dataclass(frozen=True)
class Pattern:
    """A family of deployments: ``openai/{model_id}`` matches ``openai/gpt-4.1``."""

    pattern: str
    """The name with one ``{model_id}`` placeholder."""
    template: ModelDeployment
    """The deployment every match gets, with ``{model_id}`` still in its fields."""
    file: str
    line: int

    def match(self, name: str) -> ModelDeployment | None:
        """The deployment for ``name``, or ``None`` when the name does not fit (or has characters
        no model name may have: see :func:`model_name_problem`)."""
        if model_name_problem(name) is not None:
            return None
        prefix, _, suffix = self.pattern.partition(PLACEHOLDER)
        if len(name) <= len(prefix) + len(suffix) or not name.startswith(prefix) or not name.endswith(suffix):
            return None
        model_id = name[len(prefix) : len(name) - len(suffix)]
        template = self.template
        return replace(
            template,
            name=name,
            model_id=template.model_id.replace(PLACEHOLDER, model_id),
            args={k: _fill(v, model_id) for k, v in template.args.items()},
            tokenizer=template.tokenizer.replace(PLACEHOLDER, model_id) if template.tokenizer else template.tokenizer,
        )


def _fill(value: Any, model_id: str) -> Any:
    return value.replace(PLACEHOLDER, model_id) if isinstance(value, str) else value


@dataclass(frozen=True)
class RegistryFile:
    """The content of one registry file."""

    path: Path
    deployments: dict[str, ModelDeployment] = field(default_factory=dict)
    patterns: tuple[Pattern, ...] = ()


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


@cache
def _schema() -> dict[str, Any]:
    """The registry schema (checked against its metaschema by the tests, not on every start: that
    took longer than reading the file)."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


@cache
def _validator() -> jsonschema.protocols.Validator:
    """The registry schema's validator: what finds and explains the errors of a file :func:`conforms`
    does not accept at once (``jsonschema``, imported only then)."""
    import jsonschema

    schema = _schema()
    validator: jsonschema.protocols.Validator = jsonschema.validators.validator_for(schema)(schema)
    return validator


def _schema_error(error: jsonschema.ValidationError, where: Locations) -> SpecError:
    path: DocPath = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        allowed = list(error.schema.get("properties", {}))
        unknown = [k for k in error.instance if k not in allowed]
        if unknown:
            name = unknown[0]
            hint = did_you_mean(name, allowed)
            msg = f"unknown field {name!r}"
            msg += (
                f"; did you mean {' or '.join(repr(h) for h in hint)}?"
                if hint
                else f" (valid: {', '.join(sorted(allowed))})"
            )
            return where.key(path, name).error(msg, path=(*path, name))
    if error.validator == "enum" and isinstance(error.instance, str):
        hint = did_you_mean(error.instance, [str(v) for v in error.validator_value])
        msg = f"{error.instance!r} is not one of {', '.join(repr(v) for v in error.validator_value)}"
        return where.error(path, msg + (f"; did you mean {hint[0]!r}?" if hint else ""))
    if error.validator == "pattern" and error.schema.get("description"):
        return where.error(path, f"{error.instance!r} is not valid here: {error.schema['description']}")
    if error.validator == "required":
        return where.error(path, error.message.replace("is a required property", "is required"))
    return where.error(path, error.message)


def _validate(data: Any, where: Locations, known_providers: Collection[str], *, schema: bool = True) -> None:
    _check_no_secrets(data, where)
    checked = schema and not conforms(data, _schema())
    errors = [_deepest(e) for e in _validator().iter_errors(data)] if checked else []
    if errors:
        # Report the first problem in file order; at one place an unknown field (with its
        # did-you-mean) explains more than the "required" error it usually causes.
        shown = [_schema_error(e, where) for e in errors]
        rank = {"additionalProperties": 0, "enum": 1}
        best = min(
            range(len(errors)),
            key=lambda i: (_line(where, errors[i]), rank.get(str(errors[i].validator), 2), shown[i].line or 0),
        )
        raise shown[best]
    seen: dict[str, int] = {}
    for section in ("models", "patterns"):
        for i, entry in enumerate(data.get(section) or []):
            _check_price(entry.get("price") or {}, where, (section, i, "price"))
            if entry["provider"] not in known_providers:
                hint = did_you_mean(entry["provider"], known_providers)
                msg = f"unknown provider {entry['provider']!r}"
                msg += f"; did you mean {hint[0]!r}?" if hint else f" (known: {', '.join(sorted(known_providers))})"
                raise where.error((section, i, "provider"), msg)
            if entry.get("batch") and entry["provider"] not in BATCH_PROVIDERS:
                raise where.error((section, i, "batch"), f"batch: true: {no_batch_api(entry['provider'])}")
            label = entry.get("name") if section == "models" else entry.get("pattern")
            if isinstance(label, str):
                problem = model_name_problem(label)
                if problem is not None:
                    field_name = "name" if section == "models" else "pattern"
                    raise where.error((section, i, field_name), f"invalid model name {label!r}: {problem}")
            if section == "models":
                name = entry["name"]
                if name in seen:
                    raise where.error(
                        (section, i, "name"), f"duplicate model name {name!r} (first at models[{seen[name]}])"
                    )
                seen[name] = i


def _check_price(price: Mapping[str, Any], where: Locations, path: DocPath) -> None:
    """A price is a finite number (the schema lets NaN and infinity through: YAML's ``.nan``, ``.inf``)."""
    for key, value in price.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise where.error((*path, key), f"price {key} must be a finite number of dollars, not {value}")


def _check_no_secrets(data: Any, where: Locations) -> None:
    """A string under a secret-looking arg name is refused before anything else is said."""
    if not isinstance(data, Mapping):
        return
    for section in ("models", "patterns"):
        entries = data.get(section)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            args = entry.get("args") if isinstance(entry, Mapping) else None
            for arg, value in args.items() if isinstance(args, Mapping) else ():
                if isinstance(value, str) and is_secret_name(arg):
                    raise where.key((section, i, "args"), arg).error(
                        "secrets do not belong in a model file: put the key in an environment "
                        "variable and name it in api_key_env",
                        path=(section, i, "args", arg),
                    )


def _line(where: Locations, error: jsonschema.ValidationError) -> int:
    return where.find(tuple(error.absolute_path)).line


def _deepest(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """Inside ``anyOf``/``oneOf``, the most specific sub-error explains best."""
    while error.context:
        error = max(error.context, key=lambda e: len(e.absolute_path))
    return error


# ---------------------------------------------------------------------------
# Conversion
# ---------------------------------------------------------------------------


def _deployment(entry: Mapping[str, Any], name: str, default_model_id: str) -> ModelDeployment:
    price = entry.get("price") or {}
    return ModelDeployment(
        name=name,
        provider=entry["provider"],
        model_id=entry.get("model_id", default_model_id),
        args={**dict(entry.get("args") or {}), **({"batch": True} if entry.get("batch") else {})},
        tokenizer=entry.get("tokenizer"),
        context_window=int(entry.get("context_window", 2048)),
        max_output_tokens=int(entry.get("max_output_tokens", 512)),
        capabilities=Capabilities(**dict(entry.get("capabilities") or {})),
        price_input_per_million=float(price.get("input_per_million", 0.0)),
        price_output_per_million=float(price.get("output_per_million", 0.0)),
        price_cached_input_per_million=_optional_float(price.get("cached_input_per_million")),
        price_batch_discount=_optional_float(price.get("batch_discount")),
        priced=bool(price),
        api_key_env=entry.get("api_key_env"),
        description=str(entry.get("description", "")).strip(),
        reasoning=_reasoning(entry.get("reasoning") or {}),
    )


def _reasoning(entry: Mapping[str, Any]) -> ReasoningSupport:
    """The ``reasoning:`` mapping (checked by the schema) as a :class:`ReasoningSupport`."""
    tags = entry.get("think_tags")
    return ReasoningSupport(
        style=entry.get("style", "none"),
        field=entry.get("field"),
        think_tags=(str(tags[0]), str(tags[1])) if tags else None,
    )


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def read_registry_file(
    path: Path, known_providers: Collection[str], display: str | None = None, *, shipped: bool = False
) -> RegistryFile:
    """Load and validate one registry file (see the module docstring).

    ``shipped``: the registry file that ships with holistic. It is parsed by libyaml when present and
    not checked against the schema here (the tests check it), so that a run without a models file of
    its own imports no JSON Schema validator; every other check still applies."""
    shown = display if display is not None else str(path)
    if not path.exists():
        raise SpecError("model registry file not found", file=shown)
    source = load_source(path, shown, fast=shipped)
    data, where = source.data, source.locations
    if data is None:
        return RegistryFile(path=path)
    _validate(data, where, known_providers, schema=not shipped)
    deployments: dict[str, ModelDeployment] = {}
    for entry in data.get("models") or []:
        name = entry["name"]
        deployments[name] = _deployment(entry, name, name.split("/", 1)[-1])
    patterns = []
    for i, entry in enumerate(data.get("patterns") or []):
        template = _deployment(entry, entry["pattern"], PLACEHOLDER)
        patterns.append(Pattern(entry["pattern"], template, shown, where.find(("patterns", i)).line))
    return RegistryFile(path=path, deployments=deployments, patterns=tuple(patterns))
