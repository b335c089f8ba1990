"""What the two YAML-only user-dataset scenarios (``file``, ``huggingface``) share.

Both turn rows into instances with a :class:`~holistic.scenarios.loading.user_fields.FieldMapping`,
describe themselves the same way, and take their task and headline metric from
the mapping (a ``label`` field means classification, ``output`` means QA...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from holistic.core.interfaces import ScenarioInfo
from holistic.scenarios.base import ArgProblem, BaseScenario
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import object_schema
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.user_fields import MAPPING_ARGS_SCHEMA, FieldMapping
from holistic.scenarios.loading.user_shaping import COLUMNS_SCHEMA, Column, add_columns, parse_columns
from holistic.scenarios.loading.user_tables import Row

PARTIAL_SCORING_METHOD = "multiple_choice_separate_original"
USER_DEFAULT_ADAPTER: dict[str, Any] = prompt_format(input_prefix="Input: ", output_prefix="Output: ", max_tokens=50)


def user_dataset_info(
    name: str, description: str, properties: Mapping[str, Any], required: Sequence[str]
) -> ScenarioInfo:
    """The class-level info of a user-dataset scenario: ``properties`` are its own
    arguments (the field-mapping arguments are added after them)."""
    return ScenarioInfo(
        name=name,
        description=description,
        task="classification",
        default_adapter=USER_DEFAULT_ADAPTER,
        main_metric="quasi_exact_match",
        **CLASSIFICATION,
        args_schema=object_schema(
            {**properties, **MAPPING_ARGS_SCHEMA, "columns": COLUMNS_SCHEMA}, required=list(required)
        ),
        tags=("user",),
    )


class UserDatasetScenario(BaseScenario):
    """Base of the user-dataset scenarios: the mapping and the info that follows from it."""

    info: ScenarioInfo
    mapping: FieldMapping
    columns: tuple[Column, ...] = ()
    """Columns computed from each row before the mapping reads it (``columns`` argument)."""

    def _set_mapping(
        self,
        fields: Mapping[str, Any],
        *,
        labels: Any = None,
        template: str | None = None,
        splits: Mapping[str, str] | None = None,
        num_train: int = 0,
        label_format: str | None = None,
        split_map: Mapping[str, str] | None = None,
        columns: Mapping[str, Any] | None = None,
    ) -> None:
        """The field-mapping arguments both user-dataset scenarios take (see :mod:`user_fields`)."""
        if splits is not None and split_map is not None:
            raise ValueError("give split_map (splits is its older name), not both")
        self.columns = parse_columns(columns)
        self.mapping = FieldMapping.from_args(
            fields, labels, template, split_map if split_map is not None else splits, num_train, label_format
        )
        # This dataset's own task and headline metric (the class info describes the general case).
        self.info = replace(type(self).info, task=self.mapping.task, main_metric=self.mapping.main_metric)

    def shape(self, rows: Sequence[Row]) -> list[Row]:
        """``rows`` with the computed columns added (what the field mapping then reads)."""
        return add_columns(rows, self.columns)

    @classmethod
    def judge_fields_for(cls, args: dict[str, Any]) -> tuple[str, ...] | None:
        """The columns ``fields.metadata`` copies into every instance."""
        fields = args.get("fields")
        metadata = fields.get("metadata") if isinstance(fields, Mapping) else None
        return tuple(str(m) for m in metadata) if isinstance(metadata, list) else ()

    @classmethod
    def default_adapter_for(cls, args: Mapping[str, Any]) -> dict[str, Any]:
        """Joint multiple choice when the mapping has choices; generation otherwise. Zero-shot
        when the data can have no in-context pool (no split field, no train file, no ``num_train``)."""
        fields = args.get("fields") or {}
        adapter = dict(USER_DEFAULT_ADAPTER)
        if isinstance(fields, Mapping) and "continuation" in fields:
            # Partial scoring: the prompt is the choice's own context, the continuation follows it
            # after a space (lm-evaluation-harness's winogrande), with no prefixes around either.
            adapter.update(
                method=PARTIAL_SCORING_METHOD, input_prefix="", input_suffix="", output_prefix="", output_suffix="\n"
            )
        elif isinstance(fields, Mapping) and "choices" in fields:
            adapter.update(method="multiple_choice_joint", output_prefix="Answer: ", max_tokens=5)
        if not cls.may_have_train_pool(args):
            adapter["max_train_instances"] = 0
        return adapter

    @classmethod
    def adapter_problem(cls, args: Mapping[str, Any], method: str) -> ArgProblem | None:
        """Partial scoring (``fields.continuation``) is scored choice by choice: any other
        method is an error at that field."""
        fields = args.get("fields") or {}
        if isinstance(fields, Mapping) and "continuation" in fields and method != PARTIAL_SCORING_METHOD:
            return (
                ("fields", "continuation"),
                f"partial scoring (fields.continuation) scores each choice's context by log-likelihood: it needs "
                f"method {PARTIAL_SCORING_METHOD}, not {method}",
            )
        return None

    @classmethod
    def may_have_train_pool(cls, args: Mapping[str, Any]) -> bool:
        """Whether these arguments can give in-context examples (a split field may hold train rows)."""
        fields = args.get("fields") or {}
        return bool(args.get("num_train")) or (isinstance(fields, Mapping) and "split" in fields)
