"""The quick schema check (:func:`holistic.core.schema_check.conforms`) says yes only where
``jsonschema`` finds no error: keyword by keyword, and on the repository's own run specs and
models files, changed at random (a value swapped, a key removed or added)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holistic.core.schema_check import conforms

REPO = Path(__file__).resolve().parents[2]
RUNSPEC = json.loads((REPO / "schemas" / "runspec.schema.json").read_text(encoding="utf-8"))
MODELS = json.loads((REPO / "schemas" / "models.schema.json").read_text(encoding="utf-8"))


def _valid(instance: Any, schema: Any) -> bool:
    return not list(jsonschema.Draft202012Validator(schema).iter_errors(instance))


CASES: list[tuple[Any, Any]] = [
    ({"type": "integer"}, 3),
    ({"type": "integer"}, 3.0),  # a whole float is an integer
    ({"type": "integer"}, 3.5),
    ({"type": "integer"}, True),  # a boolean is not
    ({"type": "number"}, False),
    ({"type": ["string", "null"]}, None),
    ({"type": "object"}, []),
    ({"type": "array"}, {}),
    ({"enum": [1, "a"]}, True),  # True is not 1
    ({"enum": [1, "a"]}, 1.0),  # but 1.0 is
    ({"enum": [[1, 2]]}, [1, 2]),
    ({"enum": [{"a": 1}]}, {"a": True}),
    ({"const": False}, 0),
    ({"const": None}, None),
    ({"minimum": 1}, 0),
    ({"minimum": 1}, 1),
    ({"maximum": 2}, 2),
    ({"exclusiveMaximum": 2}, 2),
    ({"exclusiveMaximum": 2}, 1.5),
    ({"minimum": 1}, math.nan),  # a NaN fails no bound
    ({"exclusiveMinimum": 0}, 0),
    ({"maximum": 2}, 2.5),
    ({"minimum": 1}, "text"),  # bounds apply to numbers only
    ({"minLength": 2, "maxLength": 3}, "ab"),
    ({"minLength": 2}, "a"),
    ({"minItems": 1}, []),
    ({"maxItems": 1}, [1, 2]),
    ({"minProperties": 1}, {}),
    ({"pattern": "^a"}, "ba"),
    ({"pattern": "b"}, "ab"),  # a search, not a match
    ({"required": ["a"]}, {"b": 1}),
    ({"required": ["a"]}, ["a"]),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x"}),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x", "b": 1}),
    ({"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False}, {"x-a": 1}),
    ({"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False}, {"x-a": "1"}),
    ({"additionalProperties": {"type": "integer"}}, {"a": 1, "b": "2"}),
    ({"items": {"type": "integer"}}, [1, 2, "3"]),
    ({"items": False}, []),
    ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, 1.5),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1),  # both: not one
    ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1.0),
    ({"allOf": [{"minimum": 1}, {"maximum": 3}]}, 4),
    ({"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"type": "string"}}, 2.0),
    ({"if": {"type": "integer"}, "then": {"minimum": 5}}, "text"),
    ({"$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}}, [1, "x"]),
    ({"$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}}, [1, 2]),
    ({"type": "object", "x-path": True, "description": "text"}, {}),
    (True, {"anything": 1}),
    (False, None),
]


@pytest.mark.parametrize(("schema", "instance"), CASES)
def test_each_keyword_decides_as_jsonschema_does(schema: Any, instance: Any) -> None:
    assert conforms(instance, schema) == _valid(instance, schema)


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"uniqueItems": True}, [1, 2]),  # a keyword it does not implement
        ({"not": {"type": "string"}}, 1),
        ({"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, [1, "a"]),
        ({"$ref": "https://example.invalid/schema.json"}, 1),  # a $ref outside the schema
        ({"properties": {"a": {"$id": "https://example.invalid/a", "type": "integer"}}}, {"a": 1}),
        ({"type": "array"}, (1, 2)),  # not JSON: jsonschema says no, and so does it
        ({"type": "integer"}, {1, 2}),
        ({"patternProperties": {"^a": True}}, {1: "one"}),
        ({"pattern": "("}, "x"),  # a broken pattern
    ],
)
def test_what_it_does_not_know_is_never_a_yes(schema: Any, instance: Any) -> None:
    assert conforms(instance, schema) is False


def _documents() -> list[tuple[dict[str, Any], Any]]:
    docs: list[tuple[dict[str, Any], Any]] = []
    for path in sorted((REPO / "runspecs").glob("*.yaml")):
        docs.append((RUNSPEC, yaml.safe_load(path.read_text(encoding="utf-8"))))
    docs.append((MODELS, yaml.safe_load((REPO / "holistic" / "models" / "models.yaml").read_text(encoding="utf-8"))))
    return docs


DOCUMENTS = _documents()


def test_the_shipped_documents_are_accepted_at_once() -> None:
    assert len(DOCUMENTS) >= 5
    for schema, doc in DOCUMENTS:
        assert _valid(doc, schema)
        assert conforms(doc, schema)  # so a run of them never imports jsonschema to say so


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*at, i))
    return found


WORDS = st.sampled_from(["name", "scenario", "models", "args", "metrics", "provider", "model_id", "x", "first", ""])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.0, math.nan]),
    WORDS,
    st.text(max_size=4),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(WORDS, inner, max_size=3)),
    max_leaves=6,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_changed_document_is_accepted_only_if_jsonschema_accepts_it(data: st.DataObject) -> None:
    schema, original = data.draw(st.sampled_from(DOCUMENTS))
    doc = json.loads(json.dumps(original))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        if not path:
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        how = data.draw(st.sampled_from(["replace", "remove", "add"]))
        if how == "replace":
            parent[path[-1]] = data.draw(VALUES)
        elif how == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(WORDS)] = data.draw(VALUES)
        else:
            parent.insert(path[-1], data.draw(VALUES))
    if conforms(doc, schema):
        assert _valid(doc, schema)
