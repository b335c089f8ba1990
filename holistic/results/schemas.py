"""The results tables: every column, its Arrow type and what it means.

This module is the single source of truth for the Parquet layout;
``schemas/results.schema.json`` is generated from it (``python -m
holistic.results.schemas > schemas/results.schema.json``) and a test keeps the two
equal. A change that breaks old readers (a removed or retyped column) bumps
:data:`SCHEMA_VERSION`; adding a nullable column does not.

Every table starts with the :data:`JOIN_COLUMNS`, so all the shards of a suite can be
read as one table without looking at paths::

    import glob, pyarrow.dataset as ds
    stats = ds.dataset(glob.glob("output/core/runs/*/stats.parquet")).to_table()
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pyarrow as pa

from holistic.core.errors import StoreError

SCHEMA_VERSION = 2
"""Version of the results store layout (suite.json, file names, table columns)."""


def check_schema_version(found: object, *, newer: str, other: str) -> None:
    """Raise :class:`StoreError` with ``newer`` when ``found`` (a suite file's ``schema_version``) is
    later than :data:`SCHEMA_VERSION`, with ``other`` when it is any other version (or none)."""
    if found == SCHEMA_VERSION:
        return
    raise StoreError(newer if isinstance(found, int) and found > SCHEMA_VERSION else other)


INSTANCES_TABLE = "instances"
"""A run's table of evaluated instances (and the in-context examples used)."""
REQUESTS_TABLE = "requests"
"""A run's table of requests: prompts, completions, tokens."""
PER_INSTANCE_STATS_TABLE = "per_instance_stats"
"""A run's table of metric values per instance and trial."""
STATS_TABLE = "stats"
"""A run's table of aggregated metric values."""
ANNOTATIONS_TABLE = "annotations"
"""A run's table of judges' verdicts (only in runs that name judges)."""


@dataclass(frozen=True)
class Column:
    """One column of a results table."""

    name: str
    type: pa.DataType
    description: str
    nullable: bool = False

    def field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)


TOKEN_TYPE = pa.struct(
    [
        pa.field("text", pa.string(), nullable=False),
        pa.field("logprob", pa.float64(), nullable=False),
        pa.field("top_logprobs", pa.map_(pa.string(), pa.float64()), nullable=True),
    ]
)
COMPLETION_TYPE = pa.struct(
    [
        pa.field("text", pa.string(), nullable=False),
        pa.field("logprob", pa.float64(), nullable=False),
        pa.field("finish_reason", pa.string(), nullable=True),
        pa.field("is_greedy", pa.bool_(), nullable=True),
        pa.field("num_tokens", pa.int64(), nullable=False),
    ]
)
REFERENCE_TYPE = pa.struct(
    [
        pa.field("output", pa.string(), nullable=False),
        pa.field("tags", pa.list_(pa.string()), nullable=False),
        pa.field("relevance", pa.int64(), nullable=True),
        pa.field("first_stage_rank", pa.int64(), nullable=True),
    ]
)
"""A reference; ``relevance`` and ``first_stage_rank`` (ranking judgements, null elsewhere) were
added in place of tags, so older files lack them (:mod:`holistic.results.references` reads both)."""
MESSAGE_TYPE = pa.struct(
    [pa.field("role", pa.string(), nullable=False), pa.field("content", pa.string(), nullable=False)]
)

JOIN_COLUMNS: tuple[Column, ...] = (
    Column("suite", pa.string(), "Suite name (the output folder under --output-dir)."),
    Column("run_id", pa.string(), "Stable run id: readable scenario/model slug plus a short hash of the run spec."),
    Column("run_name", pa.string(), "Readable run name (scenario, args, method, model)."),
    Column("scenario", pa.string(), "Registered scenario name."),
    Column("scenario_args", pa.string(), "Scenario arguments as canonical JSON (sorted keys)."),
    Column("model", pa.string(), "Model deployment name from the model registry."),
    Column("method", pa.string(), "Adaptation method (generation, multiple_choice_joint, ...)."),
)

_METRIC_NAME_COLUMNS: tuple[Column, ...] = (
    Column("metric", pa.string(), "Metric value name (e.g. exact_match, ece_10_bin)."),
    Column("split", pa.string(), "Split the value was computed on (valid or test)."),
    Column("sub_split", pa.string(), "Finer partition (e.g. an identity group), or null.", nullable=True),
    Column(
        "perturbation",
        pa.string(),
        "Null on originals; a perturbation name; or 'robustness'/'fairness' for worst-case values.",
        nullable=True,
    ),
)

RAW_COLUMN = Column(
    "raw",
    pa.string(),
    "What the row's source recorded that this schema has no column for, as canonical JSON; null for "
    "runs holistic executed (helm-import keeps the rest of HELM's record here).",
    nullable=True,
)
"""Imported runs keep what could not be mapped here (``helm-import``); null in native runs."""

INSTANCES: tuple[Column, ...] = (
    *JOIN_COLUMNS,
    Column("instance_id", pa.string(), "Instance id, unique within the scenario; perturbed variants share it."),
    Column("role", pa.string(), "'eval' (evaluated) or 'train' (an in-context example used by some prompt)."),
    Column("split", pa.string(), "train, valid or test."),
    Column("sub_split", pa.string(), "Finer partition, or null.", nullable=True),
    Column("perturbation", pa.string(), "Perturbation name of a variant; null on an original.", nullable=True),
    Column(
        "perturbation_args",
        pa.string(),
        "Perturbation arguments as canonical JSON; null on an original.",
        nullable=True,
    ),
    Column("robustness", pa.bool_(), "The variant counts toward the robustness category."),
    Column("fairness", pa.bool_(), "The variant counts toward the fairness category."),
    Column("input", pa.string(), "Input text (after perturbation)."),
    Column(
        "references",
        pa.list_(REFERENCE_TYPE),
        "References in order: output text, tags ('correct') and, for ranking, the graded relevance "
        "and the first-stage rank (null otherwise).",
    ),
    Column(
        "continuation",
        pa.string(),
        "Partial scoring: the continuation scored after each choice's own context (the references); null otherwise.",
        nullable=True,
    ),
    Column("metadata", pa.string(), "Per-instance metadata as canonical JSON."),
    RAW_COLUMN,
)

REQUESTS: tuple[Column, ...] = (
    *JOIN_COLUMNS,
    Column("instance_id", pa.string(), "Instance the request belongs to."),
    Column("split", pa.string(), "Split of that instance."),
    Column("sub_split", pa.string(), "Sub-split of that instance, or null.", nullable=True),
    Column("perturbation", pa.string(), "Perturbation of that instance, or null.", nullable=True),
    Column("trial", pa.int64(), "Trial index (independent draw of in-context examples)."),
    Column("request_index", pa.int64(), "Position among the instance's requests in this trial."),
    Column(
        "reference_index", pa.int64(), "Reference scored by this request (separate/ranking methods).", nullable=True
    ),
    Column("role", pa.string(), "main, calibration or window."),
    Column("kind", pa.string(), "generate, loglikelihood or rolling_loglikelihood."),
    Column(
        "prompt",
        pa.string(),
        "The prompt exactly as sent (plain text); for chat requests the messages joined for display.",
    ),
    Column("messages", pa.list_(MESSAGE_TYPE), "Chat messages as sent, or null for plain prompts.", nullable=True),
    Column("continuation", pa.string(), "Text scored by loglikelihood requests ('' otherwise)."),
    Column("max_tokens", pa.int64(), "Decoding: maximum new tokens."),
    Column("temperature", pa.float64(), "Decoding: temperature."),
    Column("stop", pa.list_(pa.string()), "Decoding: stop sequences."),
    Column("num_completions", pa.int64(), "Completions asked for."),
    Column("top_k_logprobs", pa.int64(), "Top-k alternatives asked per generated token."),
    Column("trial_tag", pa.string(), "Tag distinguishing otherwise identical requests in the cache."),
    Column("train_ids", pa.list_(pa.string()), "Ids of the in-context examples in prompt order."),
    Column("num_train_instances", pa.int64(), "In-context examples actually in the prompt (after fitting)."),
    Column("prompt_truncated", pa.bool_(), "The prompt was cut to fit the context window."),
    Column(
        "output_mapping",
        pa.map_(pa.string(), pa.string()),
        "Joint multiple choice: letter -> reference text.",
        nullable=True,
    ),
    Column("success", pa.bool_(), "The model answered; false rows carry error and error_kind."),
    Column("error", pa.string(), "Error message of a failed request.", nullable=True),
    Column("error_kind", pa.string(), "rate_limit, server, timeout, client, fatal...", nullable=True),
    Column("completion", pa.string(), "Text of the first completion (null when the request failed).", nullable=True),
    Column("logprob", pa.float64(), "Summed logprob of the first completion (null when failed).", nullable=True),
    Column("tokens", pa.list_(TOKEN_TYPE), "Tokens of the first completion with logprobs and top alternatives."),
    Column("completions", pa.list_(COMPLETION_TYPE), "Every completion (for @k metrics)."),
    Column("post_processed", pa.list_(pa.string()), "Completions after the adapter's post-processing.", nullable=True),
    Column("parse_error", pa.string(), "Why a completion could not be mapped to an answer, or null.", nullable=True),
    Column(
        "prompt_logprobs", pa.list_(TOKEN_TYPE), "Prompt tokens with logprobs (echo requests), or null.", nullable=True
    ),
    Column("has_logprobs", pa.bool_(), "The model returned real logprobs."),
    Column("prompt_tokens", pa.int64(), "Prompt length in the model's tokens."),
    Column("completion_tokens", pa.int64(), "Generated tokens over all completions (reasoning tokens included)."),
    Column(
        "reasoning",
        pa.string(),
        "The first completion's thoughts (or the provider's summary of them), kept apart from completion, "
        "which is the final answer only; null when none came back.",
        nullable=True,
    ),
    Column(
        "reasoning_tokens", pa.int64(), "Tokens spent thinking (the provider's count, else estimated).", nullable=True
    ),
    Column(
        "reasoning_unfinished",
        pa.bool_(),
        "The first completion's thought did not finish (max_tokens reached or the server said so) before an answer: "
        "not answered, completion empty.",
        nullable=True,
    ),
    Column("reasoning_note", pa.string(), "What was odd about the thoughts as returned, or null.", nullable=True),
    Column("reasoning_effort", pa.string(), "Reasoning effort asked for, or null.", nullable=True),
    Column("reasoning_budget", pa.int64(), "Thinking budget in tokens asked for, or null.", nullable=True),
    Column(
        "reasoning_reported",
        pa.string(),
        "The reasoning setting the provider reported having applied (effort=low), where it reports one.",
        nullable=True,
    ),
    Column("latency_s", pa.float64(), "Wall time of the original call in seconds (kept when served from the cache)."),
    Column("cached", pa.bool_(), "Served from the request cache in this execution."),
    Column("attempts", pa.int64(), "Attempts made (retries + 1)."),
    Column("cost_usd", pa.float64(), "Estimated price of the call."),
    Column(
        "batch",
        pa.bool_(),
        "Answered through the provider's batch API (see docs/models.md); null where not recorded (imports).",
        nullable=True,
    ),
    Column("engine", pa.string(), "Engine that served the request (e.g. transformers, llama.cpp)."),
    Column("cache_key", pa.string(), "Request cache key (sha256 of model identity + canonical request)."),
    RAW_COLUMN,
)

PER_INSTANCE_STATS: tuple[Column, ...] = (
    *JOIN_COLUMNS,
    Column("instance_id", pa.string(), "Instance the value was computed on."),
    Column("trial", pa.int64(), "Trial index."),
    *_METRIC_NAME_COLUMNS,
    Column("value", pa.float64(), "The metric value for this instance and trial."),
    Column(
        "details",
        pa.string(),
        "Facts behind the value as canonical JSON, or null (separate multiple choice: "
        "each choice's log-likelihood, lengths and the index picked under each normalisation).",
        nullable=True,
    ),
    RAW_COLUMN,
)

STATS: tuple[Column, ...] = (
    *JOIN_COLUMNS,
    *_METRIC_NAME_COLUMNS,
    Column("count", pa.int64(), "Number of values merged."),
    Column("sum", pa.float64(), "Sum of the values."),
    Column("sum_sq", pa.float64(), "Sum of squared values."),
    Column("min", pa.float64(), "Smallest value.", nullable=True),
    Column("max", pa.float64(), "Largest value.", nullable=True),
    Column("mean", pa.float64(), "sum / count (null when count is 0).", nullable=True),
    Column("stddev", pa.float64(), "Population standard deviation (null when count is 0).", nullable=True),
    Column("ci_low", pa.float64(), "Lower end of the 95% bootstrap interval of the mean, or null.", nullable=True),
    Column("ci_high", pa.float64(), "Upper end of the 95% bootstrap interval of the mean, or null.", nullable=True),
    Column("num_trials", pa.int64(), "Trials (draws of in-context examples) the values were averaged over."),
    Column(
        "trial_stddev",
        pa.float64(),
        "Population standard deviation of the per-trial means (null with one trial).",
        nullable=True,
    ),
    Column(
        "higher_is_better", pa.bool_(), "Direction declared by the metric registry (null if undeclared).", nullable=True
    ),
    Column(
        "category",
        pa.string(),
        "Metric category (accuracy, calibration, ...) from the registry, or null.",
        nullable=True,
    ),
    RAW_COLUMN,
)

REQUEST_PLACE = ("instance_id", "split", "sub_split", "perturbation", "trial", "request_index")
"""The columns that say which request a row is about (shared by requests and annotations)."""

ANNOTATIONS: tuple[Column, ...] = (
    *JOIN_COLUMNS,
    *(c for c in REQUESTS if c.name in REQUEST_PLACE),
    Column("judge", pa.string(), "The judge's label (its model name unless the spec names it)."),
    Column("judge_model", pa.string(), "The judge's deployment in the model registry."),
    Column("prompt_sha256", pa.string(), "SHA-256 of the judge's prompt template: the prompt's version."),
    Column(
        "rule", pa.string(), "The verdict rule (regex patterns or JSON schema, score field, values) as canonical JSON."
    ),
    Column("rule_sha256", pa.string(), "SHA-256 of the rule's canonical JSON."),
    Column(
        "status",
        pa.string(),
        "ok (scored); unparseable (answered, but no attempt fit the rule: counted in the error rate); failed (the "
        "judge's request failed: the run is partial); skipped (the judged request had failed).",
    ),
    Column("score", pa.float64(), "The score the rule read (null unless status is ok).", nullable=True),
    Column("fields", pa.string(), "Every field the rule read, as canonical JSON (null unless ok).", nullable=True),
    Column("prompt", pa.string(), "The judge's prompt as rendered and sent."),
    Column("verdict", pa.string(), "The judge's last answer as given (null when none).", nullable=True),
    Column("attempts", pa.int64(), "Times the judge was asked (1 + retries of unparseable answers)."),
    Column("error", pa.string(), "Why the verdict is not ok, or null.", nullable=True),
    Column("cached", pa.bool_(), "The last answer was served from the request cache."),
    Column(
        "cache_key",
        pa.string(),
        "Request cache key of the last attempt (judge identity + rendered prompt).",
        nullable=True,
    ),
    Column(
        "cost_usd",
        pa.float64(),
        "What the judge's requests for this verdict cost in US dollars, retries included (null: nothing paid).",
        nullable=True,
    ),
    Column("batch", pa.bool_(), "The last answer came through the provider's batch API (priced with its discount)."),
)

TABLES: dict[str, tuple[Column, ...]] = {
    INSTANCES_TABLE: INSTANCES,
    REQUESTS_TABLE: REQUESTS,
    PER_INSTANCE_STATS_TABLE: PER_INSTANCE_STATS,
    STATS_TABLE: STATS,
    ANNOTATIONS_TABLE: ANNOTATIONS,
}
"""Table name -> columns; each is stored as ``runs/<run_id>/<name>.parquet``."""

_RATED_ITEM: tuple[Column, ...] = (
    Column("run_id", pa.string(), "Run that produced the rated generation."),
    Column("model", pa.string(), "Model deployment of that run."),
    Column("scenario", pa.string(), "Scenario of that run."),
    Column("instance_id", pa.string(), "Instance of the prompt."),
    Column("trial", pa.int64(), "Trial index."),
)
RATINGS: tuple[Column, ...] = (
    Column("item_id", pa.string(), "<run_id>/<instance_id>/<trial>/<completion_index>: the rated generation."),
    *_RATED_ITEM,
    Column("completion_index", pa.int64(), "Which sample of the request was rated."),
    Column("rater", pa.string(), "Rater identifier as written in the ratings file."),
    Column("metric", pa.string(), "Question (HELM's metric name, e.g. wedging_eval_divisiveness)."),
    Column("value", pa.float64(), "The rating, within the question's range."),
    Column("source", pa.string(), "file:line of the ratings file it was imported from."),
)
PER_INSTANCE_RATINGS: tuple[Column, ...] = (
    *_RATED_ITEM,
    Column("metric", pa.string(), "Question (HELM's metric name)."),
    Column("split", pa.string(), "Split of the instance."),
    Column("sub_split", pa.string(), "Sub-split of the instance, or null.", nullable=True),
    Column("perturbation", pa.string(), "Always null: ratings are of unperturbed prompts.", nullable=True),
    Column("value", pa.float64(), "Mean rating of the instance over its raters and samples."),
    Column("count", pa.int64(), "Ratings averaged."),
)
SUITE_TABLES: dict[str, tuple[Column, ...]] = {
    "ratings": RATINGS,
    "per_instance_ratings": PER_INSTANCE_RATINGS,
}
"""Suite-level tables, stored as ``ratings/<name>.parquet`` once human ratings are imported
(``helm-ratings import``); not part of any run's manifest."""


HUGE_TEXT_CHARS = 1024 * 1024
"""A row holding a text this long is converted to Arrow on its own (see :func:`table_from_rows`)."""


def table_from_rows(table: str, rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """A results table from row dicts; a nullable column a row does not name is null.

    A row holding a huge text (over :data:`HUGE_TEXT_CHARS`, at the top or one level down) is
    converted apart from its neighbours and each column's pieces are then joined into one array
    of the exact size: Arrow's builder doubles its buffer when a value follows one that filled
    it, so a 200 MB text followed by a short one asked for 400 MB more. Tables without such a
    row are converted whole, as before."""
    schema = arrow_schema(table)
    columns = {
        c.name: [r.get(c.name) for r in rows] if c.nullable else [r[c.name] for r in rows] for c in TABLES[table]
    }
    huge = [i for i, r in enumerate(rows) if _holds_huge_text(r)]
    if not huge:
        return pa.Table.from_pydict(columns, schema=schema)
    cuts = sorted({0, len(rows), *huge, *(i + 1 for i in huge)})
    spans = list(pairwise(cuts))
    arrays = [pa.concat_arrays([pa.array(columns[f.name][a:b], type=f.type) for a, b in spans]) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def _holds_huge_text(row: Mapping[str, Any]) -> bool:
    for value in row.values():
        if isinstance(value, str):
            if len(value) > HUGE_TEXT_CHARS:
                return True
        elif isinstance(value, list):
            for item in value:
                inner = item.values() if isinstance(item, dict) else (item,)
                if any(isinstance(v, str) and len(v) > HUGE_TEXT_CHARS for v in inner):
                    return True
    return False


def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of a results table, with the schema version in its metadata."""
    return pa.schema(
        [c.field() for c in TABLES[table]],
        metadata={b"holistic.schema_version": str(SCHEMA_VERSION).encode(), b"holistic.table": table.encode()},
    )


SUITE_FIELDS: dict[str, str] = {
    "schema_version": "integer: version of this layout; a suite with another version is refused.",
    "package_version": "string: holistic version that last wrote the suite.",
    "suite": "string: suite name.",
    "description": "string: the run spec's description.",
    "spec_path": "string: run spec file the suite was last run from.",
    "spec_sha256": "string: sha256 of that file's bytes.",
    "created": "string: ISO 8601 UTC time the suite folder was created.",
    "updated": "string: ISO 8601 UTC time of the last write.",
    "runs": "array of {run_id, name, scenario, model, method, status ('complete'|'partial'|'failed'|'pending'), error, "
    "requests, failed_requests, error_rate, cost_usd} (plus imported_from: 'crfm-helm', 'lm-evaluation-harness', "
    "'inspect_ai' or 'every-eval-ever' for a run written by helm-import).",
    "cost_usd": "number: what the suite's runs cost in US dollars (requests and judges, each run's "
    "artifacts.json execution.cost_usd summed; written at the end of each helm-run).",
}

RUN_FILES: dict[str, str] = {
    "run_spec.json": "RunSpec.canonical() fields at the top level (name, scenario, adapter, model, metrics, "
    "perturbations, groups, and label: the spec entry's own name for the run, when it has one) plus suite, run_id, main_metric, scenario_info, metrics_selected, "
    "metrics_not_applicable (category -> reason) and helm_conformance ({status: 'proven'|'claimed'|"
    "'not claimed', reasons, deviations, evidence}). A run written by helm-import has imported_from instead of the "
    "execution facts: {tool, helm_version, layout, run_spec_name, run_folder, helm_model, helm_model_deployment, "
    "helm_scenario_class, helm_scenario_args, scenario_mapped, real_logprobs, files: {name: {size, sha256}}, "
    "helm_run_spec, scenario_state_other_members}; one imported from another harness (helm-import --from) has "
    "{tool, task, file, real_logprobs, harness_version, tool_model, ...: the tool's own record of the task and model}.",
    "instances.parquet": "Table 'instances'.",
    "requests.parquet": "Table 'requests'.",
    "per_instance_stats.parquet": "Table 'per_instance_stats'.",
    "stats.parquet": "Table 'stats'.",
    "annotations.parquet": "Table 'annotations': one row per judged request and judge (only in runs that name judges).",
    "artifacts.json": "{'execution': {instances, requests, unique_requests, cache_hits, model_calls, "
    "failed_requests, error_rate, errors, cost_usd (requests and judges, US dollars), requests_cost_usd, "
    "judge_cost_usd, cost_usd_sent_now (of which sent to providers by the execution that wrote the run), "
    "batch_requests, and for judged runs judge_requests, judge_cache_hits, judge_model_calls, "
    "judge_failed, judge_unparseable, judge_skipped}, 'metrics': the metrics' JSON artifacts merged (each metric names its keys; a clash "
    "is prefixed with '<metric>.')}.",
    "_COMPLETE": "Written last when every request succeeded: JSON manifest {status: 'complete', schema_version, "
    "written, requests, failed_requests, unparseable (judges' verdicts no rule could read; in the error rate), "
    "files: [{name, size, sha256}]}. Verified before a run is skipped or read.",
    "_PARTIAL": "The same manifest with status 'partial' when some requests failed: the run is readable (its error "
    "rate is shown) but is redone on the next helm-run, which retries only the failed requests.",
    "browser/": "The run's browser bundle, derived from its files and not listed in its manifest (written after "
    "it by helm-run, or by the first helm-summarize that finds it missing or stale): the instance browser's "
    "index.js and chunk_NNNN.js (linked into the site), predictions.json (the compare-systems pages), page.json "
    "(the run page's statistics, in-context examples and reasoning facts) and manifest.json {format, fingerprint "
    "(a hash of the run's manifest, main metric, max_field_chars, format and builder), count, chunks, "
    "perturbations, splits, files: [{name, size, sha256}]}. Rebuilt, never trusted, when anything does not match; "
    "safe to delete.",
}


def describe() -> dict[str, Any]:
    """The JSON document stored as ``schemas/results.schema.json``."""
    return {
        "$comment": "Generated by `python -m holistic.results.schemas`; do not edit by hand.",
        "title": "holistic results store",
        "schema_version": SCHEMA_VERSION,
        "layout": {
            "suite.json": "<output>/<suite>/suite.json",
            "run": "<output>/<suite>/runs/<run_id>/",
        },
        "suite_json": SUITE_FIELDS,
        "run_files": RUN_FILES,
        "tables": {
            name: {
                "file": f"runs/<run_id>/{name}.parquet",
                "columns": [
                    {"name": c.name, "type": str(c.type), "nullable": c.nullable, "description": c.description}
                    for c in columns
                ],
            }
            for name, columns in TABLES.items()
        },
        "suite_tables": {
            name: {
                "file": f"ratings/{name}.parquet",
                "columns": [
                    {"name": c.name, "type": str(c.type), "nullable": c.nullable, "description": c.description}
                    for c in columns
                ],
            }
            for name, columns in SUITE_TABLES.items()
        },
    }


def main() -> None:
    sys.stdout.write(json.dumps(describe(), indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
