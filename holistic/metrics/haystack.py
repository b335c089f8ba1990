"""Retrieval quality on haystack records: precision, recall and F1 over returned article ids.

Reads what the ``haystack`` scenario puts in ``Instance.metadata`` (``gold_ids``,
``context_ids``, ``hard_negative_ids``, ``task``, ``length``, ``depth_bin``,
``zero_needle``) and the model's answer: the ``json`` post-processor's output when the
run uses it (the scenario's default), else the first JSON value found in the raw text.
An answer is an object with a list under ``article_ids`` (or under its only
list-valued key), or a bare list; items are ids (strings or numbers) or objects with
an ``id``. Ids are matched to the context exactly, then ignoring case.

Per record (per-instance values, ``sub_split`` none):

- ``haystack_f1`` (main): F1 of returned vs gold ids; a zero-needle record scores 1
  when the model validly returns nothing, else 0;
- ``haystack_precision``, ``haystack_recall``, ``haystack_needle_f1``: needle records
  only (returning nothing on a needle record is precision 0);
- ``haystack_zero_needle_correct``: zero-needle records only, 1 when nothing is returned;
- ``haystack_zero_needle_false_positive``: zero-needle records only, 1 when the answer
  names any article (its mean is the zero-needle false-positive rate);
- ``haystack_false_positives``: returned ids that are not gold (hallucinated ids included);
- ``haystack_hard_negative_hits``: returned ids that are the record's hard negatives;
- ``haystack_invalid_output``: 1 when no answer could be read (no JSON, a JSON value
  of another shape, or a failed request); such a record returns nothing and is wrong
  even when it has zero needles;
- ``haystack_degenerate_output``: 1 for runaway repetition (see :func:`is_degenerate`),
  counted whether or not JSON could be read.

Headline (run-level rows without ``sub_split``, and per ``task=<t>``): the paper
reports medians, so ``haystack_f1_median`` (the scenario's main metric: the
long-context leaderboard value), ``haystack_recall_median`` and
``haystack_precision_median`` are medians over records with a 95% bootstrap CI of the
median (a median row has ``count`` = records and ``mean`` = the median). The
zero-needle false-positive rate and the degenerate-output rate are the means of their
per-record values, with bootstrap CIs, like every per-instance metric.

Cells (run-level rows with a ``sub_split``; mean with a 95% bootstrap CI):

- ``task=<t>|length=<n>|depth=<a-b>``: ``haystack_recall``, ``haystack_precision``,
  ``haystack_needle_f1`` of the needle records whose summary depth (median needle
  depth) is in that bin;
- ``task=<t>|length=<n>`` and ``task=<t>``: ``haystack_f1``, ``haystack_needle_f1``,
  ``haystack_zero_needle_correct``, ``haystack_false_positives``.

The heatmaps' per-needle counts (found / gold needles by each needle's own depth bin),
medians with CIs and raw counts are in the artifact ``haystack`` (``artifacts.json`` ->
``metrics.haystack``), documented in :func:`~holistic.metrics.haystack_aggregate.summarise`.

Reading and scoring one answer is :mod:`holistic.metrics.haystack_answer`; the medians,
cells and artifact are :mod:`holistic.metrics.haystack_aggregate`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from holistic.core.hashing import stable_seed
from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, infos
from holistic.metrics.haystack_aggregate import ScoredRecord, median_stats, run_stats, summarise
from holistic.metrics.haystack_answer import canonical_ids, read_answer, score_record
from holistic.metrics.states import first_main, group_units

ARTIFACT_KEY = "haystack"
MEDIANS = {"haystack_f1_median": "f1", "haystack_recall_median": "recall", "haystack_precision_median": "precision"}
"""Median run stats -> the per-record score they are the median of."""
TASK = "long_context"

# -- the metric ----------------------------------------------------------------------

_INFOS = infos(
    "accuracy",
    {
        "haystack_f1": "F1 of returned vs gold article ids; zero-needle records: 1 when nothing is returned.",
        "haystack_needle_f1": "F1 of returned vs gold article ids, records with needles only.",
        "haystack_precision": "Share of returned ids that are gold (records with needles).",
        "haystack_recall": "Share of gold ids returned (records with needles).",
        "haystack_f1_median": "Median F1 over records (zero-needle ones included), with a bootstrap CI of the median: the headline.",
        "haystack_recall_median": "Median recall over records with needles.",
        "haystack_precision_median": "Median precision over records with needles.",
        "haystack_zero_needle_correct": "A record without needles gets a valid empty answer.",
    },
    needs_generation=True,
) + infos(
    "accuracy",
    {
        "haystack_zero_needle_false_positive": "A record without needles gets an answer naming an article (mean: the false-positive rate).",
        "haystack_false_positives": "Returned ids that are not gold (hallucinated ids included).",
        "haystack_hard_negative_hits": "Returned ids that are hard negatives of the record.",
        "haystack_invalid_output": "No readable JSON answer (or the request failed).",
        "haystack_degenerate_output": "Runaway repetition in the output.",
    },
    higher_is_better=False,
    needs_generation=True,
)


def _metadata_ids(metadata: Mapping[str, Any], key: str) -> list[str]:
    value = metadata.get(key) or []
    return [str(v) for v in value]


class HaystackMetric(BaseMetric):
    """Precision, recall and F1 of returned article ids on ``long_context`` haystack records."""

    name = "haystack"
    category = "accuracy"
    INFOS = _INFOS

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if info.task != TASK:
            return f"haystack retrieval metrics need a {TASK} scenario, not {info.task}"
        if adapter.method != "generation":
            return f"haystack retrieval metrics need the generation method, not {adapter.method}"
        return None

    def score_states(self, states: Sequence[RequestState]) -> tuple[MetricResult, list[ScoredRecord]]:
        """Per-instance values for every unit, and the scored originals (first trial per record)."""
        result = MetricResult()
        scored: list[ScoredRecord] = []
        seen: set[str] = set()
        for unit in group_units(states):
            state = first_main(unit)
            metadata = unit.instance.metadata
            if state is None or "gold_ids" not in metadata:
                continue
            answer = read_answer(state)
            score = score_record(
                answer.ids,
                _metadata_ids(metadata, "gold_ids"),
                _metadata_ids(metadata, "context_ids"),
                _metadata_ids(metadata, "hard_negative_ids"),
            )
            values = {
                "haystack_f1": score.f1,
                "haystack_false_positives": float(score.false_positives),
                "haystack_hard_negative_hits": float(score.hard_negative_hits),
                "haystack_invalid_output": float(not score.valid),
                "haystack_degenerate_output": float(answer.degenerate),
            }
            if score.zero_needle:
                values["haystack_zero_needle_correct"] = score.f1
                values["haystack_zero_needle_false_positive"] = float(score.returned > 0)
            else:
                values.update(
                    haystack_precision=score.precision, haystack_recall=score.recall, haystack_needle_f1=score.f1
                )
            result.per_instance.extend(unit.stat(name, value) for name, value in values.items())
            if unit.key.perturbation is None and unit.key.instance_id not in seen:
                seen.add(unit.key.instance_id)
                scored.append(
                    ScoredRecord(
                        instance_id=unit.key.instance_id,
                        split=unit.instance.split,
                        task=str(metadata.get("task", "")),
                        length=int(metadata.get("length", 0)),
                        depth_bin=metadata.get("depth_bin"),
                        score=score,
                        degenerate=answer.degenerate,
                        needles=_needle_hits(metadata, answer.ids),
                    )
                )
        return result, scored

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result, scored = self.score_states(states)
        if not scored:
            return result
        labels = _depth_labels(states)
        result.run_stats.extend(median_stats(scored, seed=stable_seed(ctx.seed, "haystack_median")))
        result.run_stats.extend(run_stats(scored, seed=stable_seed(ctx.seed, "haystack")))
        artifact = summarise(scored, seed=stable_seed(ctx.seed, "haystack"), depth_labels=labels)
        unit_facts = _length_unit(states)
        artifact.update(unit_facts)
        result.artifacts[ARTIFACT_KEY] = artifact
        return result


def _needle_hits(metadata: Mapping[str, Any], returned: Sequence[str] | None) -> tuple[tuple[str, bool], ...]:
    """Per gold needle: its depth bin and whether the answer returned it."""
    gold = _metadata_ids(metadata, "gold_ids")
    bins = [str(b) for b in metadata.get("needle_depth_bins") or []]
    if len(bins) != len(gold):  # records written before per-needle bins: the record's bin
        bins = [str(metadata.get("depth_bin"))] * len(gold)
    found = set(canonical_ids(returned or (), _metadata_ids(metadata, "context_ids")))
    return tuple((label, gid in found) for label, gid in zip(bins, gold, strict=True))


def _depth_labels(states: Sequence[RequestState]) -> list[str]:
    """All depth-bin labels of the run's records (from ``depth_bins``), in depth order."""
    counts = {int(s.instance.metadata.get("depth_bins", 0) or 0) for s in states}
    counts.discard(0)
    if len(counts) != 1:
        return []
    bins = counts.pop()
    return [f"{round(100 * i / bins)}-{round(100 * (i + 1) / bins)}" for i in range(bins)]


def _length_unit(states: Sequence[RequestState]) -> dict[str, Any]:
    for state in states:
        metadata = state.instance.metadata
        if "length_unit" in metadata:
            return {
                "length_unit": metadata.get("length_unit"),
                "tokenizer": metadata.get("tokenizer"),
                "tokenizer_fallback": bool(metadata.get("tokenizer_fallback")),
            }
    return {}
