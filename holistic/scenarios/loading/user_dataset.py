"""What the two YAML-only user-dataset scenarios (``file``, ``huggingface``) share.

Both turn rows into instances with a :class:`~holistic.scenarios.loading.user_fields.FieldMapping`,
describe themselves the same way, and take their task and headline metric from
the mapping (a ``label`` field means classification, ``output`` means QA...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from holistic.core.arguments import arg
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterDefaults
from holistic.scenarios.base import ArgProblem, BaseScenario
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.user_fields import FIELDS_SCHEMA, LABEL_FORMATS, FieldMapping
from holistic.scenarios.loading.user_shaping import COLUMNS_SCHEMA, Column, add_columns, parse_columns
from holistic.scenarios.loading.user_tables import Row

PARTIAL_SCORING_METHOD: Final = "multiple_choice_separate_original"
USER_DEFAULT_ADAPTER: AdapterDefaults = prompt_format(input_prefix="Input: ", output_prefix="Output: ", max_tokens=50)


def user_dataset_info(name: str, description: str) -> ScenarioInfo:
    """The class-level info of a user-dataset scenario (an instance's says its mapping's task)."""
    return ScenarioInfo(
        name=name,
        description=description,
        task="classification",
        default_adapter=USER_DEFAULT_ADAPTER,
        main_metric="quasi_exact_match",
        **CLASSIFICATION,
        tags=("user",),
    )


@dataclass(frozen=True, kw_only=True)
class UserDatasetScenario(BaseScenario):
    """Base of the user-dataset scenarios: the field-mapping arguments (see :mod:`user_fields`),
    the mapping made of them and the info that follows from it."""

    fields: Mapping[str, Any] = arg(schema=FIELDS_SCHEMA)
    labels: Any = arg(
        None,
        schema={
            "type": ["array", "object"],
            "description": "Label names in order, or a mapping from raw label values to names.",
        },
    )
    template: str | None = arg(None, description="Jinja2 template of the input over the row's columns.")
    label_format: str | None = arg(
        None,
        enum=LABEL_FORMATS,
        description="How a multiple-choice answer key names its choice when there are no choice_labels: index0 "
        "(0 = first), index1 (1 = first), letter (A = first) or text (the choice's text).",
    )
    split_map: Mapping[str, str] | None = arg(
        None,
        description="Split name -> train (in-context pool), valid or test; overrides the built-in names "
        "(train/dev/few_shot -> train, val/validation -> valid, test/eval -> test).",
    )
    num_train: int = arg(
        0,
        minimum=0,
        description="When no training split is given, this many rows (a fixed seeded choice) become in-context "
        "examples.",
    )
    columns: Mapping[str, Any] | None = arg(None, schema=COLUMNS_SCHEMA)

    mapping: FieldMapping = field(init=False, repr=False, compare=False)
    """The validated field mapping (made from the arguments)."""
    computed_columns: tuple[Column, ...] = field(init=False, repr=False, compare=False)
    """Columns computed from each row before the mapping reads it (``columns`` argument)."""

    def __post_init__(self) -> None:
        mapping = FieldMapping.from_args(
            self.fields, self.labels, self.template, self.split_map, self.num_train, self.label_format
        )
        object.__setattr__(self, "mapping", mapping)
        object.__setattr__(self, "computed_columns", parse_columns(self.columns))
        # This dataset's own task and headline metric (the class info describes the general case).
        object.__setattr__(self, "info", replace(type(self).info, task=mapping.task, main_metric=mapping.main_metric))

    def shape(self, rows: Sequence[Row], source: Path | str | None = None) -> list[Row]:
        """``rows`` with the computed columns added (what the field mapping then reads); ``source``
        names the rows' file (or dataset), whose pattern time they share."""
        return add_columns(rows, self.computed_columns, source)

    def judge_fields(self) -> tuple[str, ...] | None:
        """The columns ``fields.metadata`` copies into every instance."""
        metadata = self.fields.get("metadata")
        return tuple(str(m) for m in metadata) if isinstance(metadata, list) else ()

    def adapter_defaults(self) -> AdapterDefaults:
        """Joint multiple choice when the mapping has choices; generation otherwise. Zero-shot
        when the data can have no in-context pool (no split field, no train file, no ``num_train``)."""
        adapter: AdapterDefaults = {**USER_DEFAULT_ADAPTER}
        if "continuation" in self.fields:
            # Partial scoring: the prompt is the choice's own context, the continuation follows it
            # after a space (lm-evaluation-harness's winogrande), with no prefixes around either.
            adapter.update(
                {
                    "method": PARTIAL_SCORING_METHOD,
                    "input_prefix": "",
                    "input_suffix": "",
                    "output_prefix": "",
                    "output_suffix": "\n",
                }
            )
        elif "choices" in self.fields:
            adapter.update({"method": "multiple_choice_joint", "output_prefix": "Answer: ", "max_tokens": 5})
        if not self.may_have_train_pool():
            adapter["max_train_instances"] = 0
        return adapter

    def adapter_problem(self, method: str) -> ArgProblem | None:
        """Partial scoring (``fields.continuation``) is scored choice by choice: any other
        method is an error at that field."""
        if "continuation" in self.fields and method != PARTIAL_SCORING_METHOD:
            return (
                ("fields", "continuation"),
                f"partial scoring (fields.continuation) scores each choice's context by log-likelihood: it needs "
                f"method {PARTIAL_SCORING_METHOD}, not {method}",
            )
        return None

    def may_have_train_pool(self) -> bool:
        """Whether these arguments can give in-context examples (a split field may hold train rows)."""
        return bool(self.num_train) or "split" in self.fields
