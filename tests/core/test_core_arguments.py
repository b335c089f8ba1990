"""Arguments declared once, as dataclass fields: the JSON Schema a spec's ``args`` are checked
against is derived from them (types, defaults, constraints, overrides), and a scenario's
recommended adaptation is typed with exactly AdapterSpec's fields."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal, get_type_hints

import jsonschema
import pytest

from holistic.core.arguments import arg, args_schema, unknown_argument
from holistic.core.specs import ADAPTER_FIELDS
from holistic.core.types import AdapterDefaults, AdapterSpec

NESTED = {"type": "object", "properties": {"input": {"type": "string"}}, "additionalProperties": False}


@dataclass(frozen=True, kw_only=True)
class _Example:
    subject: str = arg(enum=("anatomy", "virology"), description="Which subject.")
    shots: int = arg(4, minimum=0)
    share: float = 0.5
    careful: bool = False
    mode: Literal["open", "closed"] = "closed"
    lengths: tuple[int, ...] = arg((512, 1024), minItems=1)
    tokenizer: str | None = None
    fields: dict[str, Any] = arg(schema=NESTED)


def test_the_schema_is_derived_from_the_fields() -> None:
    schema = args_schema(_Example)
    jsonschema.Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    assert schema["required"] == ["subject", "fields"] and schema["additionalProperties"] is False
    assert props["subject"] == {"enum": ["anatomy", "virology"], "description": "Which subject."}
    assert props["shots"] == {"type": "integer", "minimum": 0, "default": 4}
    assert props["share"] == {"type": "number", "default": 0.5}
    assert props["careful"] == {"type": "boolean", "default": False}
    assert props["mode"] == {"enum": ["open", "closed"], "default": "closed"}
    assert props["lengths"] == {"type": "array", "items": {"type": "integer"}, "minItems": 1, "default": [512, 1024]}
    assert props["tokenizer"] == {"type": "string"}
    assert props["fields"] == NESTED  # too rich to derive: stated whole, still once


def test_the_derived_schema_checks_what_the_constructor_takes() -> None:
    schema = args_schema(_Example)
    jsonschema.validate({"subject": "anatomy", "fields": {"input": "q"}}, schema)
    bad: dict[str, Any]
    for bad in ({"fields": {}}, {"subject": "law", "fields": {}}, {"subject": "anatomy", "fields": {}, "shots": -1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    example = _Example(subject="anatomy", fields={"input": "q"})
    assert (example.shots, example.lengths) == (4, (512, 1024))  # the defaults the schema states


def test_a_class_without_fields_takes_no_arguments() -> None:
    assert args_schema(object) == {"type": "object", "properties": {}, "additionalProperties": False}


def test_an_unknown_argument_names_the_nearest() -> None:
    message = unknown_argument("scenario", "mmlu", "subjet", ["subject", "hf_revision"])
    assert message == (
        "unknown argument 'subjet' of scenario 'mmlu'; did you mean 'subject'? (arguments: hf_revision, subject)"
    )


def test_adapter_defaults_has_exactly_adapter_specs_options_and_types() -> None:
    declared = get_type_hints(AdapterDefaults)
    spec = get_type_hints(AdapterSpec)
    assert list(declared) == list(ADAPTER_FIELDS)  # every option a spec may write, in order
    assert set(ADAPTER_FIELDS) <= {f.name for f in fields(AdapterSpec)}
    assert {name: spec[name] for name in declared} == declared
