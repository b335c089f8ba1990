"""Schema violations: the offending field's path, its line, and what was expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from holistic.core.errors import SpecError
from holistic.core.specs import ADAPTER_FIELDS
from holistic.spec import compile_spec
from holistic.spec.schema import SCHEMA_PATH


def compile_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    compile_spec(path)


BASE = "suite: demo\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetic\n"


def test_schema_is_valid_draft_2020_12_and_covers_every_adapter_field() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"].endswith("2020-12/schema")
    adaptation = schema["$defs"]["adaptation"]["properties"]
    # the protocol is written per run (`protocol:`), not inside adaptation
    # every option a spec may write (not the behaviours the protocol resolves into)
    assert set(adaptation) == set(ADAPTER_FIELDS) - {"protocol"}
    assert schema["$defs"]["run"]["properties"]["protocol"]["enum"] == ["helm", "holistic"]
    # tuple-valued fields are arrays themselves; the others may also be lists (which multiply)
    assert adaptation["stop_sequences"]["type"] == "array"
    assert "anyOf" in adaptation["max_train_instances"]


def test_unknown_field_suggests_the_nearest_valid_key(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, BASE + "    adaptation:\n      max_train_instance: 2\n")
    err = info.value
    assert err.line == 6 and err.column == 7
    assert err.path == "runs[0].adaptation.max_train_instance"
    assert "did you mean 'max_train_instances'" in str(err)


def test_wrong_type_names_path_line_and_expectation(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, BASE + "    adaptation: {temperature: hot}\n")
    err = info.value
    assert err.path == "runs[0].adaptation.temperature"
    assert err.line == 5
    assert "got the string 'hot'" in str(err)
    assert "expected a number >= 0" in str(err)


def test_bad_enum_value_inside_a_multiplying_list(tmp_path: Path) -> None:
    text = BASE + "    adaptation:\n      method:\n        - generation\n        - multiple_choice_jiont\n"
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    err = info.value
    assert err.path == "runs[0].adaptation.method[1]"
    assert err.line == 8
    assert "did you mean 'multiple_choice_joint'" in str(err)


def test_missing_required_field(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="missing required field 'suite'") as info:
        compile_text(tmp_path, "models: [simple/echo]\nruns:\n  - scenario: arithmetic\n")
    assert info.value.exit_code == 2
    with pytest.raises(SpecError, match="missing required field 'scenario'") as info:
        compile_text(tmp_path, "suite: demo\nruns:\n  - args: {digits: 1}\n")
    assert info.value.path == "runs[0]" and info.value.line == 3


def test_shorthand_given_twice_at_one_level(tmp_path: Path) -> None:
    text = BASE + "    max_eval_instances: 5\n    adaptation: {max_eval_instances: 6}\n"
    with pytest.raises(SpecError, match="given twice") as info:
        compile_text(tmp_path, text)
    assert info.value.path == "runs[0].max_eval_instances"


def test_misspelt_key_inside_a_perturbation_mapping(tmp_path: Path) -> None:
    text = BASE + "    perturbations:\n      - {nam: dialect}\n"
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    assert info.value.path == "runs[0].perturbations[0].nam"
    assert info.value.line == 6
    assert "did you mean 'name'" in str(info.value)
