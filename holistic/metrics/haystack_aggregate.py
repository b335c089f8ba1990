"""Aggregating scored haystack records: the headline medians, the cells' means and the
``haystack`` artifact (see :mod:`holistic.metrics.haystack`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from holistic.core.hashing import stable_seed
from holistic.core.types import MetricName, Stat
from holistic.metrics.haystack_answer import RecordScore
from holistic.metrics.stats import CONFIDENCE, NUM_RESAMPLES, bootstrap_ci

ARTIFACT_VERSION = 2


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
    return {"version": ARTIFACT_VERSION, **artifact_layout(tasks, lengths, labels, cells, by_length, by_task)}


def artifact_layout(
    tasks: list[str],
    lengths: list[int],
    depth_labels: list[str],
    cells: list[dict[str, Any]],
    by_length: list[dict[str, Any]],
    by_task: list[dict[str, Any]],
) -> dict[str, Any]:
    """The grouped part of the ``haystack`` artifact (all but ``version``), as :func:`summarise`
    writes it and the site rebuilds it for runs without the artifact."""
    return {
        "tasks": tasks,
        "lengths": lengths,
        "depth_labels": depth_labels,
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
    return replace(stat, ci_low=min(low, mean), ci_high=max(high, mean))


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
