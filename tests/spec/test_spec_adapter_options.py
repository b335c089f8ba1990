"""Every AdapterSpec option with a fixed set of values: its Literal, the values validation
accepts and the run spec schema's enum are the same list."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from holistic.adaptation import validate_adapter_spec
from holistic.core.errors import SpecError
from holistic.core.types import AdapterSpec

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "runspec.schema.json"
FIXED_OPTIONS = (
    "method",
    "instruction_placement",
    "chat_examples",
    "selection",
    "eval_instances",
    "protocol",
    "eval_sampling",
    "answer_parsing",
    "length_normalization",
    "truncation_side",
)


def _literal_values(option: str) -> tuple[str, ...]:
    hint = typing.get_type_hints(AdapterSpec)[option]
    assert typing.get_origin(hint) is typing.Literal, f"AdapterSpec.{option} is {hint}, not a Literal"
    return typing.get_args(hint)


@pytest.mark.parametrize("option", FIXED_OPTIONS)
def test_the_schema_enum_is_the_literal(option: str) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    # A protocol is chosen beside the adaptation (at the top, in defaults or per run), not inside it.
    where = schema["properties"] if option == "protocol" else schema["$defs"]["adaptation"]["properties"]
    enum = where[option]["anyOf"][0]["enum"] if "anyOf" in where[option] else where[option]["enum"]
    assert tuple(enum) == _literal_values(option)


@pytest.mark.parametrize("option", FIXED_OPTIONS)
def test_validation_accepts_every_value_of_the_literal_and_names_the_nearest(option: str) -> None:
    values = _literal_values(option)
    for value in values:
        validate_adapter_spec(AdapterSpec().replace(**{option: value}))
    typo = values[-1][:-1] + "x"
    with pytest.raises(SpecError) as raised:
        validate_adapter_spec(AdapterSpec().replace(**{option: typo}))
    assert f"valid: {', '.join(values)}" in str(raised.value)
    assert raised.value.path == f"adaptation.{option}"
