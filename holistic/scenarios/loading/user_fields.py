"""Turning rows of a user's dataset into instances: the field mapping shared by the
``file`` and ``huggingface`` scenarios.

A row is a mapping of column names to values. Every field is a *field path*
(:mod:`holistic.scenarios.loading.field_paths`): a column, ``question.stem`` inside an
object, ``question.choices[*].text`` across a list. The mapping says which field is
the input (or a Jinja2 ``template`` over the columns, where ``{{ question.stem }}``
reads nested objects too), and where the answer is:

- ``label`` (classification): references are the label names, in the order of
  ``labels`` (a list of names, or a mapping from raw values such as ``0``/``1`` to
  names; by default the sorted distinct values), the row's label is correct;
- ``choices`` (multiple choice): one field holding a list, or a list of fields;
  ``label`` holds the answer key. With ``choice_labels`` (the labels the data gives
  its choices, e.g. ``question.choices[*].label``) the key is looked up among them;
  otherwise ``label_format`` says how to read it: ``index0`` (0 = first choice),
  ``index1`` (1 = first choice), ``letter`` (A = first) or ``text`` (the choice's
  text). Without either, a letter or a choice's text is read as such and a number
  is an error (0- or 1-based is the dataset's convention, not something to guess);
- ``output`` (question answering, generation): the answer text (a list means
  several correct answers).

Optional: ``id``, ``split``, ``sub_split`` (a group field, e.g. a dialect, for
fairness by group; the run's overall score still counts every row), ``metadata``
(fields copied into ``Instance.metadata``) and ``continuation`` (partial scoring, as
lm-evaluation-harness scores WinoGrande: each choice is its own context, and this
one text is scored after each).

Split names (the ``split`` field's values, a file mapping's keys, a Hugging Face
dataset's splits) map by :data:`SPLIT_ALIASES`: ``train``, ``dev``, ``few_shot``
are the in-context pool (MMLU calls its few-shot pool ``dev``); ``val``,
``valid``, ``validation`` are validation; ``test``, ``eval`` are test. ``split_map``
overrides or adds entries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from holistic.core.errors import DataSourceError, did_you_mean
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.common import with_train_pool
from holistic.scenarios.loading.field_paths import FieldPath, FieldPathError
from holistic.scenarios.loading.user_tables import Row

SPLIT_ALIASES: dict[str, str] = {
    "train": TRAIN_SPLIT,
    "training": TRAIN_SPLIT,
    "dev": TRAIN_SPLIT,
    "few_shot": TRAIN_SPLIT,
    "fewshot": TRAIN_SPLIT,
    "valid": VALID_SPLIT,
    "validation": VALID_SPLIT,
    "val": VALID_SPLIT,
    "test": TEST_SPLIT,
    "eval": TEST_SPLIT,
}
"""Split name (lower case) -> train (the in-context pool), valid or test."""
FIELD_KEYS = (
    "input",
    "output",
    "label",
    "choices",
    "choice_labels",
    "continuation",
    "id",
    "split",
    "sub_split",
    "metadata",
)
LABEL_FORMATS = ("index0", "index1", "letter", "text")
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# The JSON Schema of the ``fields`` argument (a nested mapping, too rich to derive from a type).
FIELDS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Which field is what (a column, a dotted path such as question.stem, or a list projection "
    "such as question.choices[*].text): input, output or label, choices, choice_labels, id, split, sub_split, "
    "metadata.",
    "properties": {
        "input": {"type": "string"},
        "output": {"type": "string"},
        "label": {"type": "string"},
        "choices": {"type": ["string", "array"], "items": {"type": "string"}},
        "choice_labels": {"type": "string"},
        "continuation": {
            "type": "string",
            "description": "Partial scoring (WinoGrande): the text scored after each choice, where each "
            "choice is its own context.",
        },
        "id": {"type": "string"},
        "split": {"type": "string"},
        "sub_split": {"type": "string"},
        "metadata": {"type": "array", "items": {"type": "string"}},
    },
    "additionalProperties": False,
}


@dataclass(frozen=True)
class FieldMapping:
    """The validated mapping arguments."""

    fields: Mapping[str, Any]
    labels: Sequence[str] | Mapping[str, str] | None = None
    template: str | None = None
    split_map: Mapping[str, str] | None = None
    """Split names the user mapped (``split_map``), on top of :data:`SPLIT_ALIASES`."""
    num_train: int = 0
    label_format: str | None = None

    @staticmethod
    def from_args(
        fields: Mapping[str, Any] | None,
        labels: Sequence[Any] | Mapping[Any, Any] | None,
        template: str | None,
        split_map: Mapping[str, str] | None,
        num_train: int,
        label_format: str | None = None,
    ) -> FieldMapping:
        fields = dict(fields or {})
        unknown = [k for k in fields if k not in FIELD_KEYS]
        if unknown:
            near = did_you_mean(unknown[0], FIELD_KEYS)
            hint = f"; did you mean {near[0]!r}?" if near else f"; valid keys: {', '.join(FIELD_KEYS)}"
            raise ValueError(f"fields: unknown key {unknown[0]!r}{hint}")
        if "input" not in fields and template is None:
            raise ValueError(
                "fields.input (a column name) or template (a Jinja2 template over the columns) is required"
            )
        if not any(k in fields for k in ("output", "label")):
            raise ValueError("fields.output (the answer column) or fields.label (the label column) is required")
        if "output" in fields and ("label" in fields or "choices" in fields):
            raise ValueError(
                "give fields.output (free-form answers) or fields.label/choices (classification), not both"
            )
        if "choice_labels" in fields and "choices" not in fields:
            raise ValueError("fields.choice_labels needs fields.choices (the choice texts they label)")
        if "continuation" in fields and "choices" not in fields:
            raise ValueError(
                "fields.continuation (partial scoring) needs fields.choices: each choice is a context, and the "
                "continuation is scored after each"
            )
        for key, path in field_paths(fields):
            try:
                FieldPath.parse(path)
            except ValueError as exc:
                raise ValueError(f"fields.{key}: {exc}") from None
        if label_format is not None:
            if label_format not in LABEL_FORMATS:
                raise ValueError(f"label_format {label_format!r} is not one of {', '.join(LABEL_FORMATS)}")
            if "choices" not in fields:
                raise ValueError(
                    "label_format applies to multiple choice (fields.choices); for classification "
                    "map raw labels to names with labels: {raw: name}"
                )
        if isinstance(labels, Mapping):
            labels = {str(k): str(v) for k, v in labels.items()}
        elif labels is not None:
            labels = [str(v) for v in labels]
        mapped: dict[str, str] = {}
        for raw, split in (split_map or {}).items():
            target = SPLIT_ALIASES.get(str(split).lower())
            if target is None:
                raise ValueError(f"split_map: {raw!r} maps to {split!r}; use train, valid or test")
            mapped[str(raw)] = target
        if isinstance(num_train, bool) or not isinstance(num_train, int) or num_train < 0:
            raise ValueError(f"num_train must be a non-negative integer, got {num_train!r}")
        return FieldMapping(fields, labels, template, mapped or None, num_train, label_format)

    @property
    def main_metric(self) -> str:
        """The headline metric for this kind of answer."""
        return {"multiple_choice": "exact_match", "classification": "quasi_exact_match"}.get(self.task, "f1_score")

    @property
    def task(self) -> str:
        if "choices" in self.fields:
            return "multiple_choice"
        return "classification" if "label" in self.fields else "qa"

    def split_name(self, raw: str) -> str | None:
        """train, valid or test for a split name, or ``None`` when it is not mapped."""
        if self.split_map is not None and raw in self.split_map:
            return self.split_map[raw]
        return SPLIT_ALIASES.get(raw.lower())

    def check(self, values: Mapping[str, Any]) -> list[tuple[str, str, str]]:
        """``(key, path, problem)`` for every field path that does not fit the row ``values``."""
        problems = []
        for key, path in field_paths(self.fields):
            try:
                FieldPath.parse(path).get(values)
            except FieldPathError as exc:
                problems.append((key, path, str(exc)))
        return problems


def field_paths(fields: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(key, path)`` for every field path of a mapping (``choices.1`` for the second of a list)."""
    out: list[tuple[str, str]] = []
    for key, value in fields.items():
        if isinstance(value, str):
            out.append((key, value))
        elif isinstance(value, (list, tuple)):
            out.extend((f"{key}.{i}", str(v)) for i, v in enumerate(value))
    return out


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
        continuation = mapping.fields.get("continuation")
        instances.append(
            Instance(
                id=instance_id,
                input=text,
                references=_references(row, mapping, label_names),
                split=split,
                sub_split=str(_get(row, sub_split)) if sub_split else None,
                metadata=metadata,
                continuation=_text(_get(row, continuation), row, "continuation") if continuation else None,
            )
        )
    if not instances:
        raise DataSourceError(f"{owner}: the dataset has no rows")
    if not any(i.split == TRAIN_SPLIT for i in instances) and mapping.num_train:
        instances = with_train_pool(
            instances, min(mapping.num_train, len(instances) - 1), f"{seed_key or owner}-train-pool"
        )
    return instances


def _get(row: Row, path: str) -> Any:
    try:
        return FieldPath.parse(path).get(row.values)
    except FieldPathError as exc:
        raise DataSourceError(f"{row.where}: {exc}") from None


def _text(value: Any, row: Row, what: str) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise DataSourceError(f"{row.where}: the {what} is empty")
    return value if isinstance(value, str) else str(value)


def _plain(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _split_of(row: Row, mapping: FieldMapping) -> str:
    column = mapping.fields.get("split")
    if not column:
        return row.split if row.split is not None else TEST_SPLIT
    raw = str(_get(row, column))
    split = mapping.split_name(raw)
    if split is None:
        known = sorted({*SPLIT_ALIASES, *(mapping.split_map or {})})
        raise DataSourceError(
            f"{row.where}: split {raw!r} is not a known split name; map it with split_map: {{{raw}: train|valid|test}} "
            f"(known: {', '.join(known)})"
        )
    return split


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
        labels = _choice_labels(row, mapping, len(choices))
        correct = _correct_choice(row, _get(row, mapping.fields["label"]), choices, labels, mapping.label_format)
        return tuple(Reference(c, (CORRECT_TAG,) if i == correct else ()) for i, c in enumerate(choices))
    value = _get(row, mapping.fields["output"])
    answers = [value] if not isinstance(value, (list, tuple)) else list(value)
    texts = [_text(a, row, "output") for a in answers]
    return tuple(Reference(t, (CORRECT_TAG,)) for t in dict.fromkeys(texts))


def _choices(row: Row, spec: str | Sequence[str]) -> list[str]:
    if isinstance(spec, str):
        value = _get(row, spec)
        if not isinstance(value, (list, tuple)):
            raise DataSourceError(f"{row.where}: field {spec!r} should hold a list of choices, got {value!r}")
        return [_text(v, row, "choice") for v in value]
    return [_text(_get(row, column), row, f"choice {column!r}") for column in spec]


def _choice_labels(row: Row, mapping: FieldMapping, n_choices: int) -> list[str] | None:
    path = mapping.fields.get("choice_labels")
    if path is None:
        return None
    value = _get(row, path)
    if not isinstance(value, (list, tuple)) or len(value) != n_choices:
        raise DataSourceError(
            f"{row.where}: choice_labels {path!r} should hold one label per choice ({n_choices}), got {value!r}"
        )
    labels = [str(v).strip() for v in value]
    if len(set(labels)) != len(labels):
        raise DataSourceError(f"{row.where}: choice_labels {path!r} repeat a label: {labels}")
    return labels


def _correct_choice(
    row: Row, raw: Any, choices: Sequence[str], labels: Sequence[str] | None, label_format: str | None
) -> int:
    """The index of the correct choice; never a guess (see the module docstring)."""
    if raw is None or isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
        raise DataSourceError(f"{row.where}: answer key {raw!r} is not a choice label, index, letter or text")
    text = str(int(raw)) if isinstance(raw, float) else str(raw).strip()
    if labels is not None:
        if text not in labels:
            raise DataSourceError(f"{row.where}: answer key {raw!r} is not one of the choice labels {list(labels)}")
        return labels.index(text)
    if label_format in ("index0", "index1"):
        if not text.lstrip("-").isdigit():
            raise DataSourceError(f"{row.where}: answer key {raw!r} is not a number (label_format: {label_format})")
        index = int(text) - (1 if label_format == "index1" else 0)
    elif label_format == "letter" or (label_format is None and _is_letter(text)):
        if not _is_letter(text):
            raise DataSourceError(f"{row.where}: answer key {raw!r} is not a letter (label_format: letter)")
        index = _LETTERS.index(text.upper())
        clash = [i for i, c in enumerate(choices) if c.strip() == text and i != index]
        if label_format is None and clash:
            raise DataSourceError(
                f"{row.where}: answer key {raw!r} is both letter {text} (choice {index + 1}) and the text of choice "
                f"{clash[0] + 1}; set label_format: letter or text"
            )
    elif label_format == "text" or not text.lstrip("-").isdigit():
        matches = [i for i, c in enumerate(choices) if c.strip() == text]
        if len(matches) != 1:
            found = "matches no choice's text" if not matches else f"matches {len(matches)} choices' text"
            fix = "" if label_format else "; set label_format (index0, index1, letter, text) or fields.choice_labels"
            raise DataSourceError(f"{row.where}: answer key {raw!r} {found}{fix}")
        index = matches[0]
    else:
        raise DataSourceError(
            f"{row.where}: answer key {raw!r} is a number, which could count choices from 0 or from 1; set "
            "label_format: index0 (0 = first choice) or index1 (1 = first choice), or fields.choice_labels"
        )
    if not 0 <= index < len(choices):
        raise DataSourceError(
            f"{row.where}: answer key {raw!r} is out of range for {len(choices)} choices (label_format: "
            f"{label_format or 'letter'})"
        )
    return index


def _is_letter(text: str) -> bool:
    return len(text) == 1 and text.upper() in _LETTERS


def compile_row_template(source: str, where: str = "template") -> Callable[[Mapping[str, Any]], str]:
    """A sandboxed Jinja2 template over a row's columns (``row['a column']`` reads any name).

    A template that does not compile is a ``ValueError`` naming ``where`` and the line;
    one that fails on a row is a :class:`DataSourceError` (the caller adds the row).
    """
    import jinja2

    from holistic.core.templates import TemplateProblem, compile_template
    from holistic.core.templates import render as render_sandboxed

    try:
        template = compile_template(source)
    except TemplateProblem as exc:
        raise ValueError(f"{where}: line {exc.line}: {exc.message}") from None

    def render(values: Mapping[str, Any]) -> str:
        variables = {str(k): v for k, v in values.items()}
        try:
            return render_sandboxed(template, {**variables, "row": variables})
        except TemplateProblem as exc:
            raise DataSourceError(exc.message) from None
        except jinja2.UndefinedError as exc:
            raise DataSourceError(
                f"{where}: {exc.message}; columns: {', '.join(variables)} (use row['a column'] for names with spaces)"
            ) from None
        except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
            raise DataSourceError(f"{where}: failed on this row: {type(exc).__name__}: {exc}") from None

    return render


def _compile_template(source: str) -> Callable[[Row], str]:
    # one trailing newline of the source is dropped (YAML's `template: |` adds one)
    render = compile_row_template(source[:-1] if source.endswith("\n") else source)

    def render_row(row: Row) -> str:
        from holistic.core.templates import TemplateLimitError

        try:
            return render(row.values)
        except DataSourceError as exc:
            raise DataSourceError(f"{row.where}: {exc}") from None
        except TemplateLimitError as exc:
            raise TemplateLimitError(f"{row.where}: {exc}") from None

    return render_row
