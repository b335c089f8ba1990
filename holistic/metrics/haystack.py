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
``metrics.haystack``), documented in :func:`summarise`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from holistic.core.hashing import stable_seed
from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, MetricName, ModelDeployment, RequestState, Stat
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import first_main, group_units, succeeded
from holistic.metrics.stats import CONFIDENCE, NUM_RESAMPLES, bootstrap_ci

ANSWER_KEY = "article_ids"
ARTIFACT_KEY = "haystack"
ARTIFACT_VERSION = 2
MEDIANS = {"haystack_f1_median": "f1", "haystack_recall_median": "recall", "haystack_precision_median": "precision"}
"""Median run stats -> the per-record score they are the median of."""
TASK = "long_context"

# -- reading answers -----------------------------------------------------------------

_FENCE = re.compile(r"```(?:[A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_TOKEN = re.compile(r"\w+|[^\w\s]")
DEGENERATE_MIN_TOKENS = 24
DEGENERATE_MAX_DISTINCT = 0.3


@dataclass(frozen=True)
class Answer:
    """What a completion says."""

    ids: tuple[str, ...] | None
    """Returned ids in answer order (duplicates kept), or ``None`` when unreadable."""
    problem: str | None = None
    """Why the answer is unreadable (``no JSON``, ``JSON of another shape``, ``request failed``)."""
    degenerate: bool = False


def _first_json(text: str) -> Any:
    decoder = json.JSONDecoder()
    for candidate in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        for i, ch in enumerate(candidate):
            if ch in "{[":
                try:
                    return decoder.raw_decode(candidate, i)[0]
                except json.JSONDecodeError:
                    continue
    return None


def ids_of(value: Any) -> tuple[str, ...] | None:
    """The ids in a decoded JSON answer, or ``None`` when it has another shape."""
    if isinstance(value, dict):
        if ANSWER_KEY in value:
            value = value[ANSWER_KEY]
        else:
            lists = [v for v in value.values() if isinstance(v, list)]
            if len(lists) != 1:
                return None
            value = lists[0]
    if not isinstance(value, list):
        return None
    out: list[str] = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("id", item.get("article_id"))
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            return None
        out.append(str(item).strip().lstrip("#"))
    return tuple(out)


def is_degenerate(text: str, ids: Sequence[str] | None = None) -> bool:
    """Runaway repetition: at least 24 tokens of which few 4-grams are distinct (<= 30%),
    or a list of 8+ returned ids of which at most half are distinct."""
    if ids is not None and len(ids) >= 8 and len(set(ids)) * 2 <= len(ids):
        return True
    tokens = _TOKEN.findall(text)
    if len(tokens) < DEGENERATE_MIN_TOKENS:
        return False
    grams = [tuple(tokens[i : i + 4]) for i in range(len(tokens) - 3)]
    return len(set(grams)) / len(grams) <= DEGENERATE_MAX_DISTINCT


def read_answer(state: RequestState) -> Answer:
    """The answer of one request state (see the module docstring)."""
    if not succeeded(state) or state.result is None or not state.result.completions:
        return Answer(None, "request failed")
    raw = state.result.completions[0].text
    if state.post_processed is not None:
        processed = state.post_processed[0] if state.post_processed else ""
        try:
            value = json.loads(processed) if processed else None
        except json.JSONDecodeError:  # another post-processing chain: look for JSON in its text
            value = _first_json(processed)
    else:
        value = _first_json(raw)
    if value is None:
        return Answer(None, "no JSON", is_degenerate(raw))
    ids = ids_of(value)
    if ids is None:
        return Answer(None, "JSON of another shape", is_degenerate(raw))
    return Answer(ids, None, is_degenerate(raw, ids))


# -- scoring one record ------------------------------------------------------------


@dataclass(frozen=True)
class RecordScore:
    """Set comparison of one record's returned ids with its gold ids."""

    gold: int
    returned: int
    """Distinct returned ids."""
    found: int
    """True positives."""
    false_positives: int
    hallucinated: int
    """Returned ids that are not in the context at all."""
    hard_negative_hits: int
    valid: bool

    @property
    def zero_needle(self) -> bool:
        return self.gold == 0

    @property
    def precision(self) -> float:
        return self.found / self.returned if self.returned else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        """Set F1; with no gold ids: 1 for a valid empty answer, else 0."""
        if self.zero_needle:
            return float(self.valid and self.returned == 0)
        denominator = 2 * self.found + self.false_positives + (self.gold - self.found)
        return 2 * self.found / denominator if denominator else 0.0


def _canonical_ids(returned: Iterable[str], context: Sequence[str]) -> list[str]:
    """Returned ids mapped onto context ids (exact, then case-insensitive), deduplicated."""
    exact = set(context)
    folded = {c.casefold(): c for c in context}
    out: dict[str, None] = {}
    for rid in returned:
        out[rid if rid in exact else folded.get(rid.casefold(), rid)] = None
    return list(out)


def score_record(
    returned: Sequence[str] | None, gold: Sequence[str], context: Sequence[str], hard_negatives: Sequence[str] = ()
) -> RecordScore:
    """Score one record; ``returned=None`` is an unreadable answer (nothing returned, invalid)."""
    ids = _canonical_ids(returned or (), context)
    gold_set, context_set, hard_set = set(gold), set(context), set(hard_negatives)
    found = sum(1 for i in ids if i in gold_set)
    return RecordScore(
        gold=len(gold_set),
        returned=len(ids),
        found=found,
        false_positives=len(ids) - found,
        hallucinated=sum(1 for i in ids if i not in context_set),
        hard_negative_hits=sum(1 for i in ids if i in hard_set),
        valid=returned is not None,
    )


# -- aggregation ---------------------------------------------------------------------


@dataclass(frozen=True)
class ScoredRecord:
    """One record's score with the facts it is grouped by."""

    instance_id: str
    split: str
    task: str
    length: int
    depth_bin: str | None
    """The bin of the median needle depth (``None`` without needles)."""
    score: RecordScore
    degenerate: bool
    needles: tuple[tuple[str, bool], ...] = ()
    """Per gold needle: its own depth bin and whether it was returned."""


def median_ci(values: Sequence[float], *, seed: int, num_resamples: int = NUM_RESAMPLES) -> tuple[float, float]:
    """Percentile bootstrap interval of the median."""
    data = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, data.size, size=(num_resamples, data.size))
    medians = np.median(data[picks], axis=1)
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(medians, [tail, 1 - tail])
    return float(low), float(high)


def _summary(values: Sequence[float], seed: int) -> dict[str, Any]:
    if not values:
        return {"n": 0, "mean": None, "mean_ci": None, "median": None, "median_ci": None}
    mean_ci = bootstrap_ci(values, seed=stable_seed(seed, "mean"))
    return {
        "n": len(values),
        "mean": float(np.mean(values)),
        "mean_ci": [mean_ci[0], mean_ci[1]],
        "median": float(np.median(values)),
        "median_ci": list(median_ci(values, seed=stable_seed(seed, "median"))),
    }


def _group_facts(records: Sequence[ScoredRecord], seed: int) -> dict[str, Any]:
    needle = [r for r in records if not r.score.zero_needle]
    zero = [r for r in records if r.score.zero_needle]
    return {
        "records": len(records),
        "needle_records": len(needle),
        "zero_needle_records": len(zero),
        "found": sum(r.score.found for r in needle),
        "gold": sum(r.score.gold for r in needle),
        "false_positives": sum(r.score.false_positives for r in records),
        "false_positives_zero_needle": sum(r.score.false_positives for r in zero),
        "hallucinated": sum(r.score.hallucinated for r in records),
        "hard_negative_hits": sum(r.score.hard_negative_hits for r in records),
        "invalid": sum(1 for r in records if not r.score.valid),
        "degenerate": sum(1 for r in records if r.degenerate),
        "zero_needle_correct": sum(1 for r in zero if r.score.f1 == 1.0),
        "f1": _summary([r.score.f1 for r in records], stable_seed(seed, "f1")),
        "needle_f1": _summary([r.score.f1 for r in needle], stable_seed(seed, "needle_f1")),
        "recall": _summary([r.score.recall for r in needle], stable_seed(seed, "recall")),
        "precision": _summary([r.score.precision for r in needle], stable_seed(seed, "precision")),
        "zero_needle_false_positive_rate": _summary(
            [float(r.score.returned > 0) for r in zero], stable_seed(seed, "zero_needle_false_positive")
        ),
        "degenerate_rate": _summary([float(r.degenerate) for r in records], stable_seed(seed, "degenerate")),
    }


def summarise(records: Sequence[ScoredRecord], *, seed: int, depth_labels: Sequence[str] = ()) -> dict[str, Any]:
    """The ``haystack`` artifact.

    ``{"version", "tasks", "lengths", "depth_labels", "cells", "by_length", "by_task"}``;
    ``cells`` has one entry per (task, length, depth bin), ``by_length`` per (task,
    length) and ``by_task`` per task, all records. Each entry holds ``task``,
    ``length`` (not in ``by_task``), ``depth_bin`` (cells), raw counts (``records``,
    ``needle_records``, ``zero_needle_records``, ``found``, ``gold``,
    ``false_positives``, ``false_positives_zero_needle``, ``hallucinated``,
    ``hard_negative_hits``, ``invalid``, ``degenerate``, ``zero_needle_correct``) and
    summaries ``f1`` (all records), ``needle_f1``, ``recall``, ``precision``,
    ``zero_needle_false_positive_rate``, ``degenerate_rate``, each ``{n, mean,
    mean_ci, median, median_ci}`` (CIs are 95% bootstrap intervals).

    In a cell, ``found`` / ``gold`` count *needles* whose own depth is in the bin (a
    record with needles at several depths adds to several cells; ``needle_recall`` =
    found / gold), while the records and their summaries are the needle records whose
    summary depth (median needle depth) is in the bin.
    """
    tasks = list(dict.fromkeys(r.task for r in records))
    lengths = sorted({r.length for r in records})
    labels = list(depth_labels) or sorted({r.depth_bin for r in records if r.depth_bin}, key=_bin_start)
    cells, by_length, by_task = [], [], []
    for task in tasks:
        of_task = [r for r in records if r.task == task]
        by_task.append({"task": task, **_group_facts(of_task, stable_seed(seed, task))})
        for length in lengths:
            of_length = [r for r in of_task if r.length == length]
            if not of_length:
                continue
            by_length.append(
                {"task": task, "length": length, **_group_facts(of_length, stable_seed(seed, task, length))}
            )
            for label in labels:
                cell = [r for r in of_length if r.depth_bin == label and not r.score.zero_needle]
                hits = [found for r in of_length for bin_label, found in r.needles if bin_label == label]
                if cell or hits:
                    facts = _group_facts(cell, stable_seed(seed, task, length, label))
                    facts.update(found=sum(hits), gold=len(hits), needle_recall=sum(hits) / len(hits) if hits else None)
                    cells.append({"task": task, "length": length, "depth_bin": label, **facts})
    return {
        "version": ARTIFACT_VERSION,
        "tasks": tasks,
        "lengths": lengths,
        "depth_labels": labels,
        "cells": cells,
        "by_length": by_length,
        "by_task": by_task,
    }


def _bin_start(label: str) -> float:
    try:
        return float(label.split("-")[0])
    except ValueError:
        return 0.0


def cell_sub_split(task: str, length: int | None = None, depth_bin: str | None = None) -> str:
    """``task=company|length=1024|depth=0-25`` (parts omitted when ``None``)."""
    parts = [f"task={task}"]
    if length is not None:
        parts.append(f"length={length}")
    if depth_bin is not None:
        parts.append(f"depth={depth_bin}")
    return "|".join(parts)


def _stat(name: str, split: str, sub_split: str, values: Sequence[float], seed: int) -> Stat:
    stat = Stat.of(MetricName(name, split=split, sub_split=sub_split), values)
    low, high = bootstrap_ci(values, seed=seed)
    mean = stat.mean if stat.mean is not None else 0.0
    return Stat(
        name=stat.name,
        count=stat.count,
        sum=stat.sum,
        sum_sq=stat.sum_sq,
        min=stat.min,
        max=stat.max,
        ci_low=min(low, mean),
        ci_high=max(high, mean),
    )


def median_stat(name: str, split: str, sub_split: str | None, values: Sequence[float], seed: int) -> Stat:
    """A median as a stat row: ``count`` values, ``mean`` = the median, CI of the median."""
    median = float(np.median(values))
    low, high = median_ci(values, seed=seed)
    n = len(values)
    return Stat(
        name=MetricName(name, split=split, sub_split=sub_split),
        count=n,
        sum=median * n,
        sum_sq=median * median * n,
        min=float(min(values)),
        max=float(max(values)),
        ci_low=min(low, median),
        ci_high=max(high, median),
    )


def median_stats(records: Sequence[ScoredRecord], *, seed: int) -> list[Stat]:
    """The headline medians per split and per split and task (see the module docstring)."""
    groups: dict[tuple[str, str | None], list[ScoredRecord]] = {}
    for r in records:
        groups.setdefault((r.split, None), []).append(r)
        groups.setdefault((r.split, r.task), []).append(r)
    out: list[Stat] = []
    for (split, task), members in groups.items():
        sub = cell_sub_split(task) if task is not None else None
        needle = [m.score for m in members if not m.score.zero_needle]
        series = {
            "haystack_f1_median": [m.score.f1 for m in members],
            "haystack_recall_median": [sc.recall for sc in needle],
            "haystack_precision_median": [sc.precision for sc in needle],
        }
        for name, values in series.items():
            if values:
                out.append(median_stat(name, split, sub, values, stable_seed(seed, name, split, sub)))
    return out


def run_stats(records: Sequence[ScoredRecord], *, seed: int) -> list[Stat]:
    """Per-cell means with bootstrap CIs (see the module docstring)."""
    out: list[Stat] = []
    groups: dict[tuple[str, str, int | None, str | None], list[ScoredRecord]] = {}
    for r in records:
        groups.setdefault((r.split, r.task, None, None), []).append(r)
        groups.setdefault((r.split, r.task, r.length, None), []).append(r)
        if not r.score.zero_needle and r.depth_bin is not None:
            groups.setdefault((r.split, r.task, r.length, r.depth_bin), []).append(r)
    for (split, task, length, depth), members in sorted(groups.items(), key=lambda kv: _group_key(kv[0])):
        sub = cell_sub_split(task, length, depth)
        needle = [m for m in members if not m.score.zero_needle]
        zero = [m for m in members if m.score.zero_needle]
        series: dict[str, list[float]] = {}
        if depth is not None:
            series["haystack_recall"] = [m.score.recall for m in needle]
            series["haystack_precision"] = [m.score.precision for m in needle]
            series["haystack_needle_f1"] = [m.score.f1 for m in needle]
        else:
            series["haystack_f1"] = [m.score.f1 for m in members]
            series["haystack_needle_f1"] = [m.score.f1 for m in needle]
            series["haystack_zero_needle_correct"] = [m.score.f1 for m in zero]
            series["haystack_false_positives"] = [float(m.score.false_positives) for m in members]
        for name, values in series.items():
            if values:
                out.append(_stat(name, split, sub, values, stable_seed(seed, name, sub)))
    return out


def _group_key(key: tuple[str, str, int | None, str | None]) -> tuple[str, str, int, float]:
    split, task, length, depth = key
    return (split, task, -1 if length is None else length, -1.0 if depth is None else _bin_start(depth))


# -- the metric ----------------------------------------------------------------------

_INFOS = (
    info(
        "haystack_f1",
        "accuracy",
        "F1 of returned vs gold article ids; zero-needle records: 1 when nothing is returned.",
        needs_generation=True,
    ),
    info(
        "haystack_needle_f1",
        "accuracy",
        "F1 of returned vs gold article ids, records with needles only.",
        needs_generation=True,
    ),
    info(
        "haystack_precision",
        "accuracy",
        "Share of returned ids that are gold (records with needles).",
        needs_generation=True,
    ),
    info("haystack_recall", "accuracy", "Share of gold ids returned (records with needles).", needs_generation=True),
    info(
        "haystack_f1_median",
        "accuracy",
        "Median F1 over records (zero-needle ones included), with a bootstrap CI of the median: the headline.",
        needs_generation=True,
    ),
    info("haystack_recall_median", "accuracy", "Median recall over records with needles.", needs_generation=True),
    info("haystack_precision_median", "accuracy", "Median precision over records with needles.", needs_generation=True),
    info(
        "haystack_zero_needle_correct",
        "accuracy",
        "A record without needles gets a valid empty answer.",
        needs_generation=True,
    ),
    info(
        "haystack_zero_needle_false_positive",
        "accuracy",
        "A record without needles gets an answer naming an article (mean: the false-positive rate).",
        higher_is_better=False,
        needs_generation=True,
    ),
    info(
        "haystack_false_positives",
        "accuracy",
        "Returned ids that are not gold (hallucinated ids included).",
        higher_is_better=False,
        needs_generation=True,
    ),
    info(
        "haystack_hard_negative_hits",
        "accuracy",
        "Returned ids that are hard negatives of the record.",
        higher_is_better=False,
        needs_generation=True,
    ),
    info(
        "haystack_invalid_output",
        "accuracy",
        "No readable JSON answer (or the request failed).",
        higher_is_better=False,
        needs_generation=True,
    ),
    info(
        "haystack_degenerate_output",
        "accuracy",
        "Runaway repetition in the output.",
        higher_is_better=False,
        needs_generation=True,
    ),
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
    found = set(_canonical_ids(returned or (), _metadata_ids(metadata, "context_ids")))
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
