"""Turning rows of a user's dataset into instances: the field mapping shared by the
``file`` and ``huggingface`` scenarios.

A row is a mapping of column names to values. The mapping says which column is
the input (or a Jinja2 ``template`` over the columns), and where the answer is:

- ``label`` (classification): references are the label names, in the order of
  ``labels`` (a list of names, or a mapping from raw values such as ``0``/``1`` to
  names; by default the sorted distinct values), the row's label is correct;
- ``choices`` (multiple choice): one column holding a list, or a list of columns;
  ``label`` then names the correct choice by index (0-based), letter (``A``...) or text;
- ``output`` (question answering, generation): the answer text (a list means
  several correct answers).

Optional: ``id``, ``split`` (with ``splits`` mapping raw values to
train/valid/test), ``sub_split`` (a group column, e.g. a dialect, for fairness by
group) and ``metadata`` (columns copied into ``Instance.metadata``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from holistic.core.errors import DataSourceError, did_you_mean
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading import with_train_pool

SPLIT_ALIASES: dict[str, str] = {
    "train": TRAIN_SPLIT, "training": TRAIN_SPLIT,
    "valid": VALID_SPLIT, "validation": VALID_SPLIT, "val": VALID_SPLIT, "dev": VALID_SPLIT,
    "test": TEST_SPLIT, "eval": TEST_SPLIT,
}
FIELD_KEYS = ("input", "output", "label", "choices", "id", "split", "sub_split", "metadata")
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# The JSON Schema of the mapping arguments (shared by both scenarios' args_schema).
MAPPING_ARGS_SCHEMA: dict[str, Any] = {
    "fields": {
        "type": "object",
        "description": "Which column is what: input, output or label, choices, id, split, sub_split, metadata.",
        "properties": {
            "input": {"type": "string"},
            "output": {"type": "string"},
            "label": {"type": "string"},
            "choices": {"type": ["string", "array"], "items": {"type": "string"}},
            "id": {"type": "string"},
            "split": {"type": "string"},
            "sub_split": {"type": "string"},
            "metadata": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": False,
    },
    "labels": {
        "type": ["array", "object"],
        "description": "Label names in order, or a mapping from raw label values to names.",
    },
    "template": {"type": "string", "description": "Jinja2 template of the input over the row's columns."},
    "splits": {"type": "object", "description": "Raw split value -> train, valid or test."},
    "num_train": {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "When no training split is given, this many rows (a fixed seeded choice) become in-context examples.",
    },
}


@dataclass(frozen=True)
class Row:
    """One source row and where it came from (for error messages)."""

    values: Mapping[str, Any]
    where: str
    """``file:line`` or ``dataset[split][index]``."""
    split: str | None = None
    """The split given by the source (a file per split, a dataset split), if any."""


@dataclass(frozen=True)
class FieldMapping:
    """The validated mapping arguments."""

    fields: Mapping[str, Any]
    labels: Sequence[str] | Mapping[str, str] | None = None
    template: str | None = None
    splits: Mapping[str, str] | None = None
    num_train: int = 0

    @staticmethod
    def from_args(
        fields: Mapping[str, Any] | None,
        labels: Sequence[Any] | Mapping[Any, Any] | None,
        template: str | None,
        splits: Mapping[str, str] | None,
        num_train: int,
    ) -> FieldMapping:
        fields = dict(fields or {})
        unknown = [k for k in fields if k not in FIELD_KEYS]
        if unknown:
            near = did_you_mean(unknown[0], FIELD_KEYS)
            hint = f"; did you mean {near[0]!r}?" if near else f"; valid keys: {', '.join(FIELD_KEYS)}"
            raise ValueError(f"fields: unknown key {unknown[0]!r}{hint}")
        if "input" not in fields and template is None:
            raise ValueError("fields.input (a column name) or template (a Jinja2 template over the columns) is required")
        if not any(k in fields for k in ("output", "label")):
            raise ValueError("fields.output (the answer column) or fields.label (the label column) is required")
        if "output" in fields and ("label" in fields or "choices" in fields):
            raise ValueError("give fields.output (free-form answers) or fields.label/choices (classification), not both")
        if isinstance(labels, Mapping):
            labels = {str(k): str(v) for k, v in labels.items()}
        elif labels is not None:
            labels = [str(v) for v in labels]
        for raw, split in (splits or {}).items():
            if split not in (TRAIN_SPLIT, VALID_SPLIT, TEST_SPLIT):
                raise ValueError(f"splits: {raw!r} maps to {split!r}; use train, valid or test")
        if isinstance(num_train, bool) or not isinstance(num_train, int) or num_train < 0:
            raise ValueError(f"num_train must be a non-negative integer, got {num_train!r}")
        return FieldMapping(fields, labels, template, dict(splits) if splits else None, num_train)

    @property
    def main_metric(self) -> str:
        """The headline metric for this kind of answer."""
        return {"multiple_choice": "exact_match", "classification": "quasi_exact_match"}.get(self.task, "f1_score")

    @property
    def task(self) -> str:
        if "choices" in self.fields:
            return "multiple_choice"
        return "classification" if "label" in self.fields else "qa"


def build_instances(
    rows: Sequence[Row], mapping: FieldMapping, owner: str, *, seed_key: str | None = None
) -> list[Instance]:
    """Instances for ``rows``; raises :class:`DataSourceError` naming the row on bad data.

    ``seed_key`` seeds the in-context pool carved from the rows when no train split
    exists (default ``owner``); pass something that does not depend on where the data
    lives, so that the same dataset gives the same split on every machine.
    """
    render = _compile_template(mapping.template) if mapping.template is not None else None
    label_names = _label_names(rows, mapping)
    instances: list[Instance] = []
    seen: dict[str, str] = {}
    counters: dict[str, int] = {}
    for row in rows:
        split = _split_of(row, mapping)
        index = counters.get(split, 0)
        counters[split] = index + 1
        instance_id = str(_get(row, mapping.fields["id"])) if "id" in mapping.fields else f"{split}-{index:06d}"
        if instance_id in seen:
            raise DataSourceError(f"{row.where}: id {instance_id!r} repeats the id of {seen[instance_id]}")
        seen[instance_id] = row.where
        text = render(row) if render is not None else _text(_get(row, mapping.fields["input"]), row, "input")
        metadata = {col: _plain(_get(row, col)) for col in mapping.fields.get("metadata", [])}
        sub_split = mapping.fields.get("sub_split")
        instances.append(
            Instance(
                id=instance_id,
                input=text,
                references=_references(row, mapping, label_names),
                split=split,
                sub_split=str(_get(row, sub_split)) if sub_split else None,
                metadata=metadata,
            )
        )
    if not instances:
        raise DataSourceError(f"{owner}: the dataset has no rows")
    if not any(i.split == TRAIN_SPLIT for i in instances) and mapping.num_train:
        instances = with_train_pool(
            instances, min(mapping.num_train, len(instances) - 1), f"{seed_key or owner}-train-pool"
        )
    return instances


def _get(row: Row, column: str) -> Any:
    if column not in row.values:
        near = did_you_mean(column, list(row.values))
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise DataSourceError(
            f"{row.where}: no column {column!r}{hint} (columns: {', '.join(map(str, row.values))})"
        )
    return row.values[column]


def _text(value: Any, row: Row, what: str) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise DataSourceError(f"{row.where}: the {what} is empty")
    return value if isinstance(value, str) else str(value)


def _plain(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _split_of(row: Row, mapping: FieldMapping) -> str:
    column = mapping.fields.get("split")
    if not column:
        return SPLIT_ALIASES[row.split] if row.split is not None else TEST_SPLIT
    raw = str(_get(row, column))
    table = mapping.splits if mapping.splits is not None else SPLIT_ALIASES
    if raw in table:
        return table[raw]
    if raw.lower() in SPLIT_ALIASES and mapping.splits is None:
        return SPLIT_ALIASES[raw.lower()]
    raise DataSourceError(
        f"{row.where}: split {raw!r} is not mapped; add it to splits (known: {', '.join(sorted(table))})"
    )


def _label_names(rows: Sequence[Row], mapping: FieldMapping) -> list[str]:
    if mapping.task != "classification":
        return []
    if isinstance(mapping.labels, Mapping):
        return list(dict.fromkeys(mapping.labels.values()))
    if mapping.labels is not None:
        return list(mapping.labels)
    return sorted({str(_get(row, mapping.fields["label"])) for row in rows})


def _label_of(row: Row, mapping: FieldMapping, names: Sequence[str]) -> str:
    raw = str(_get(row, mapping.fields["label"]))
    if isinstance(mapping.labels, Mapping):
        if raw not in mapping.labels:
            raise DataSourceError(f"{row.where}: label {raw!r} is not in labels ({', '.join(mapping.labels)})")
        return mapping.labels[raw]
    if raw not in names:
        near = did_you_mean(raw, names)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise DataSourceError(f"{row.where}: label {raw!r} is not one of {list(names)}{hint}")
    return raw


def _references(row: Row, mapping: FieldMapping, label_names: Sequence[str]) -> tuple[Reference, ...]:
    if mapping.task == "classification":
        label = _label_of(row, mapping, label_names)
        return tuple(Reference(name, (CORRECT_TAG,) if name == label else ()) for name in label_names)
    if mapping.task == "multiple_choice":
        choices = _choices(row, mapping.fields["choices"])
        correct = _correct_choice(row, _get(row, mapping.fields["label"]), choices)
        return tuple(Reference(c, (CORRECT_TAG,) if i == correct else ()) for i, c in enumerate(choices))
    value = _get(row, mapping.fields["output"])
    answers = [value] if not isinstance(value, (list, tuple)) else list(value)
    texts = [_text(a, row, "output") for a in answers]
    return tuple(Reference(t, (CORRECT_TAG,)) for t in dict.fromkeys(texts))


def _choices(row: Row, spec: str | Sequence[str]) -> list[str]:
    if isinstance(spec, str):
        value = _get(row, spec)
        if not isinstance(value, (list, tuple)):
            raise DataSourceError(f"{row.where}: column {spec!r} should hold a list of choices, got {value!r}")
        return [_text(v, row, "choice") for v in value]
    return [_text(_get(row, column), row, f"choice {column!r}") for column in spec]


def _correct_choice(row: Row, raw: Any, choices: Sequence[str]) -> int:
    text = str(raw).strip()
    if isinstance(raw, int) or text.isdigit():
        index = int(text)
    elif len(text) == 1 and text.upper() in _LETTERS:
        index = _LETTERS.index(text.upper())
    elif text in choices:
        index = list(choices).index(text)
    else:
        raise DataSourceError(f"{row.where}: answer {raw!r} is not a choice index, letter or choice text")
    if not 0 <= index < len(choices):
        raise DataSourceError(f"{row.where}: answer {raw!r} is out of range for {len(choices)} choices")
    return index


def _compile_template(source: str) -> Any:
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)
    try:
        template = env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise ValueError(f"template: syntax error on line {exc.lineno}: {exc.message}") from None

    def render(row: Row) -> str:
        variables = {str(k): v for k, v in row.values.items()}
        try:
            return template.render(**variables, row=variables)
        except jinja2.UndefinedError as exc:
            raise DataSourceError(
                f"{row.where}: template: {exc.message}; columns: {', '.join(variables)} "
                "(use row['a column'] for names with spaces)"
            ) from None

    return render
