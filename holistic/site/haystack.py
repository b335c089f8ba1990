"""Haystack heatmaps for a run page: recall and F1 by context length x needle depth, per task.

:func:`render_haystack` reads one run folder of the results store and, when the run
is a ``haystack`` run, writes one SVG per task, as the long-context paper's figures:
two panels whose columns are context lengths and rows depth bins, the median F1 and
median recall of the task with 95% bootstrap CIs under them. The left panel is recall
of needles by each needle's own depth, with the raw count found / gold needles; the
right one is the mean F1 of needle records by their summary depth (the median depth
of their needles). It returns the figure descriptions, a per-task table of the
headline values (median F1, recall and precision, zero-needle false-positive rate and
degenerate-output rate, each with its CI) and a table per task and length;
:func:`haystack_tables` turns those two into the run page's tables.

Its source is the ``haystack`` artifact the metric writes (``artifacts.json`` ->
``metrics.haystack``). For runs without it (older results), the numbers are recomputed
from ``per_instance_stats.parquet`` and the instance metadata in ``instances.parquet``;
there, needles are counted in their record's summary depth bin (which needles were
found is only in the artifact). A run that is not a haystack run yields no figures and
no rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from holistic.metrics.haystack_aggregate import artifact_layout
from holistic.results import RunReader
from holistic.results.schemas import INSTANCES_TABLE, PER_INSTANCE_STATS_TABLE
from holistic.summarize.tables import Cell, Column, Table, anchor

_NUM_RESAMPLES = 1000


@dataclass
class HaystackReport:
    """What :func:`render_haystack` made for one run."""

    figures: list[dict[str, Any]] = field(default_factory=list)
    """``{src, alt, caption, run_id, task}`` per written SVG (``src`` = ``src_prefix`` + file name)."""
    length_table: list[dict[str, Any]] = field(default_factory=list)
    """One row per (task, length): ``task``, ``length``, ``records``, ``f1_median``, ``f1_ci_low``,
    ``f1_ci_high``, ``f1_mean``, ``needle_f1_median``, ``recall_median``, ``zero_needle_correct``,
    ``zero_needle_records``, ``false_positives``, ``invalid``, ``degenerate``."""
    task_table: list[dict[str, Any]] = field(default_factory=list)
    """One row per task: ``task``, ``records``, ``zero_needle_records`` and ``(value, ci_low, ci_high)``
    under ``f1``, ``recall``, ``precision`` (medians), ``zero_needle_false_positive_rate`` and
    ``degenerate_rate`` (means)."""
    length_unit: str | None = None
    """``tokens`` or ``chars/4`` (lengths were estimated: say so next to the table)."""
    tokenizer: str | None = None
    """The model or tokenizer whose tokens measured the lengths."""


def load_artifact(run_dir: Path | RunReader) -> dict[str, Any] | None:
    """The run's ``haystack`` artifact, recomputed from the tables when absent (``None``: not a haystack run)."""
    run = RunReader.at(run_dir)
    metrics = run.artifacts.get("metrics") or {}
    artifact = metrics.get("haystack") if isinstance(metrics, dict) else None
    if isinstance(artifact, dict) and artifact.get("cells") is not None:
        return artifact
    return _artifact_from_tables(run)


def _artifact_from_tables(run: RunReader) -> dict[str, Any] | None:
    if not run.has_table(INSTANCES_TABLE) or not run.has_table(PER_INSTANCE_STATS_TABLE):
        return None
    meta: dict[str, dict[str, Any]] = {}
    for row in run.table(INSTANCES_TABLE, ["instance_id", "role", "perturbation", "metadata"]).to_pylist():
        if row["role"] != "eval" or row["perturbation"] is not None:
            continue
        data = json.loads(row["metadata"] or "{}")
        if "gold_ids" in data:
            meta[row["instance_id"]] = data
    if not meta:
        return None
    values: dict[str, dict[str, list[float]]] = {}
    table = run.table(PER_INSTANCE_STATS_TABLE, ["instance_id", "metric", "perturbation", "value"]).to_pylist()
    for row in table:
        if row["perturbation"] is None and row["instance_id"] in meta and str(row["metric"]).startswith("haystack_"):
            values.setdefault(row["instance_id"], {}).setdefault(row["metric"], []).append(float(row["value"]))
    records = []
    for iid, data in meta.items():
        v = {k: float(np.mean(x)) for k, x in values.get(iid, {}).items()}
        if "haystack_f1" not in v:
            continue
        gold = len(data.get("gold_ids") or [])
        records.append(
            {
                "task": str(data.get("task", "")),
                "length": int(data.get("length", 0)),
                "depth_bin": data.get("depth_bin"),
                "gold": gold,
                "found": round(v.get("haystack_recall", 0.0) * gold),
                "f1": v["haystack_f1"],
                "recall": v.get("haystack_recall"),
                "precision": v.get("haystack_precision"),
                "fp": v.get("haystack_false_positives", 0.0),
                "zero_fp": v.get("haystack_zero_needle_false_positive", float(gold == 0 and v["haystack_f1"] < 1)),
                "invalid": v.get("haystack_invalid_output", 0.0),
                "degenerate": v.get("haystack_degenerate_output", 0.0),
            }
        )
    if not records:
        return None
    return _summarise_plain(records, _labels(next(iter(meta.values())).get("depth_bins")), next(iter(meta.values())))


def _labels(bins: Any) -> list[str]:
    n = int(bins or 0)
    return [f"{round(100 * i / n)}-{round(100 * (i + 1) / n)}" for i in range(n)] if n > 0 else []


def _summary(values: Sequence[float], seed: int) -> dict[str, Any]:
    if not values:
        return {"n": 0, "mean": None, "mean_ci": None, "median": None, "median_ci": None}
    data = np.asarray(values, dtype=np.float64)
    picks = np.random.default_rng(seed).integers(0, data.size, size=(_NUM_RESAMPLES, data.size))
    medians, means = np.median(data[picks], axis=1), data[picks].mean(axis=1)
    return {
        "n": int(data.size),
        "mean": float(data.mean()),
        "mean_ci": [float(x) for x in np.quantile(means, [0.025, 0.975])],
        "median": float(np.median(data)),
        "median_ci": [float(x) for x in np.quantile(medians, [0.025, 0.975])],
    }


def _facts(records: Sequence[dict[str, Any]], seed: int) -> dict[str, Any]:
    needle = [r for r in records if r["gold"]]
    zero = [r for r in records if not r["gold"]]
    return {
        "records": len(records),
        "needle_records": len(needle),
        "zero_needle_records": len(zero),
        "found": sum(r["found"] for r in needle),
        "gold": sum(r["gold"] for r in needle),
        "false_positives": int(sum(r["fp"] for r in records)),
        "invalid": int(sum(r["invalid"] for r in records)),
        "degenerate": int(sum(r["degenerate"] for r in records)),
        "zero_needle_correct": sum(1 for r in zero if r["f1"] == 1.0),
        "f1": _summary([r["f1"] for r in records], seed),
        "needle_f1": _summary([r["f1"] for r in needle], seed + 1),
        "recall": _summary([r["recall"] or 0.0 for r in needle], seed + 2),
        "precision": _summary([r["precision"] or 0.0 for r in needle], seed + 3),
        "zero_needle_false_positive_rate": _summary([r["zero_fp"] for r in zero], seed + 4),
        "degenerate_rate": _summary([r["degenerate"] for r in records], seed + 5),
    }


def _summarise_plain(records: list[dict[str, Any]], labels: list[str], meta: dict[str, Any]) -> dict[str, Any]:
    tasks = list(dict.fromkeys(r["task"] for r in records))
    lengths = sorted({r["length"] for r in records})
    cells, by_length, by_task = [], [], []
    for t_index, task in enumerate(tasks):
        of_task = [r for r in records if r["task"] == task]
        by_task.append({"task": task, **_facts(of_task, 1000 * t_index)})
        for length in lengths:
            of_length = [r for r in of_task if r["length"] == length]
            if not of_length:
                continue
            by_length.append({"task": task, "length": length, **_facts(of_length, length + t_index)})
            for label in labels:
                cell = [r for r in of_length if r["depth_bin"] == label and r["gold"]]
                if cell:
                    cells.append({"task": task, "length": length, "depth_bin": label, **_facts(cell, length)})
    return {
        **artifact_layout(tasks, lengths, labels, cells, by_length, by_task),
        "length_unit": meta.get("length_unit"),
        "tokenizer": meta.get("tokenizer"),
    }


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "holistic"
    plt.rcParams["svg.fonttype"] = "none"
    return plt


def _fmt_ci(summary: dict[str, Any] | None, key: str = "median") -> str:
    if not summary or summary.get(key) is None:
        return "n/a"
    ci = summary.get(f"{key}_ci") or [None, None]
    if ci[0] is None:
        return f"{summary[key]:.2f}"
    return f"{summary[key]:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def _length_label(length: int) -> str:
    return f"{length // 1024}K" if length >= 1024 and length % 1024 == 0 else f"{length:,}"


def _heatmap(
    ax: Any,
    grid: np.ndarray,
    text: list[list[str]],
    lengths: list[int],
    labels: list[str],
    title: str,
    *,
    first: bool,
    unit: str,
) -> Any:
    masked = np.ma.masked_invalid(grid)
    image = ax.imshow(masked, vmin=0.0, vmax=1.0, cmap="RdYlGn", aspect="auto")
    ax.set_xticks(range(len(lengths)), [_length_label(n) for n in lengths], fontsize=8)
    ax.set_yticks(range(len(labels)), [f"{label}%" for label in labels] if first else [], fontsize=8)
    ax.set_xlabel(f"context length ({unit})", fontsize=8)
    if first:
        ax.set_ylabel("needle depth", fontsize=8)
    ax.set_title(title, fontsize=9)
    for i in range(len(labels)):
        for j in range(len(lengths)):
            value = grid[i, j]
            dark = math.isfinite(value) and (value < 0.25 or value > 0.8)
            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7, color="white" if dark else "black")
    return image


def _panel(
    cells: dict[tuple[int, str], dict[str, Any]], lengths: list[int], labels: list[str], key: str
) -> tuple[np.ndarray, list[list[str]]]:
    """Values and cell texts of one heatmap panel: ``recall`` (per needle) or ``f1`` (per record)."""
    grid = np.full((len(labels), len(lengths)), np.nan)
    text = [["–"] * len(lengths) for _ in labels]
    for i, label in enumerate(labels):
        for j, length in enumerate(lengths):
            cell = cells.get((length, label))
            if cell is None:
                continue
            if key == "recall":
                gold = int(cell.get("gold") or 0)
                if gold:
                    grid[i, j] = cell["found"] / gold
                    text[i][j] = f"{grid[i, j]:.2f}\n{cell['found']}/{gold}"
                continue
            summary = cell.get("needle_f1") or {}
            value = summary.get("mean")
            if value is not None and math.isfinite(value):
                grid[i, j] = value
                text[i][j] = f"{value:.2f}\nn={summary.get('n')}"
    return grid, text


def _headline(summary: dict[str, Any]) -> str:
    return f"median F1 {_fmt_ci(summary.get('f1'))} · median recall {_fmt_ci(summary.get('recall'))}"


def render_haystack(
    run_dir: Path | RunReader, out_dir: Path, *, src_prefix: str = "plots/", run_id: str | None = None
) -> HaystackReport:
    """Write the heatmaps of one run into ``out_dir`` (see the module docstring).

    ``src`` of each figure is ``src_prefix`` + the file name, so pass the path of
    ``out_dir`` relative to the site root (``plots/`` for ``<site>/plots``). The file
    names start with ``haystack_<run_id>_``. Output is deterministic (no dates, fixed
    SVG ids).
    """
    run = RunReader.at(run_dir)
    run_id = run_id or run.run_id
    artifact = load_artifact(run)
    if not artifact:
        return HaystackReport()
    report = HaystackReport(length_unit=artifact.get("length_unit"), tokenizer=artifact.get("tokenizer"))
    lengths: list[int] = [int(n) for n in artifact.get("lengths") or []]
    labels: list[str] = list(artifact.get("depth_labels") or [])
    estimated = artifact.get("length_unit") == "chars/4"
    axis_unit = "chars / 4" if estimated else "tokens"
    measured = (
        "Lengths are estimates at 4 characters per token."
        if estimated
        else f"Lengths were measured with the tokenizer of {artifact.get('tokenizer') or 'the evaluated model'}."
    )
    by_task = {row["task"]: row for row in artifact.get("by_task") or []}
    plt = _pyplot() if lengths and labels else None
    for task in artifact.get("tasks") or []:
        cells = {(c["length"], c["depth_bin"]): c for c in artifact.get("cells") or [] if c["task"] == task}
        if plt is None or not cells:
            continue
        fig, axes = plt.subplots(
            1, 2, figsize=(2.4 + 2 * 0.9 * max(len(lengths), 2), 1.9 + 0.5 * len(labels)), layout="constrained"
        )
        image = None
        panels = (("recall", "Recall, by needle depth"), ("f1", "F1, by median needle depth"))
        for first, (ax, (key, name)) in enumerate(zip(axes, panels, strict=True)):
            grid, text = _panel(cells, lengths, labels, key)
            image = _heatmap(ax, grid, text, lengths, labels, name, first=first == 0, unit=axis_unit)
        if image is not None:
            fig.colorbar(image, ax=list(axes), shrink=0.85)
        summary = by_task.get(task, {})
        fig.suptitle(f"Task {task}", fontsize=10)
        fig.supxlabel(f"{_headline(summary)} (95% bootstrap CIs, all records of the task)", fontsize=8)
        name = f"haystack_{anchor(run_id)}_{anchor(task)}.svg"
        out_dir.mkdir(parents=True, exist_ok=True)
        fig.savefig(out_dir / name, format="svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close(fig)
        report.figures.append(
            {
                "src": src_prefix + name,
                "alt": f"Recall and F1 heatmaps of task {task} by context length and needle depth",
                "caption": (
                    f"Task {task}: {_headline(summary)}, 95% bootstrap CIs over all its records (zero-needle ones "
                    f"included in F1). Left: recall of needles by each needle's own depth in the context (0% = first "
                    f"article token), with needles found / gold; a record with k needles adds k needles to the column. "
                    f"Right: mean F1 of needle records by their summary depth, the median depth of their needles "
                    f"(n = records). {measured}"
                ),
                "run_id": run_id,
                "task": task,
            }
        )
    report.task_table = [_task_row(row) for row in artifact.get("by_task") or []]
    for row in artifact.get("by_length") or []:
        f1 = row.get("f1") or {}
        ci = f1.get("median_ci") or [None, None]
        report.length_table.append(
            {
                "task": row["task"],
                "length": row["length"],
                "records": row.get("records"),
                "f1_median": f1.get("median"),
                "f1_ci_low": ci[0],
                "f1_ci_high": ci[1],
                "f1_mean": f1.get("mean"),
                "needle_f1_median": (row.get("needle_f1") or {}).get("median"),
                "recall_median": (row.get("recall") or {}).get("median"),
                "zero_needle_correct": row.get("zero_needle_correct"),
                "zero_needle_records": row.get("zero_needle_records"),
                "false_positives": row.get("false_positives"),
                "invalid": row.get("invalid"),
                "degenerate": row.get("degenerate"),
            }
        )
    return report


def _task_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "task": row["task"],
        "records": row.get("records"),
        "zero_needle_records": row.get("zero_needle_records"),
    }
    for key, stat in (
        ("f1", "median"),
        ("recall", "median"),
        ("precision", "median"),
        ("zero_needle_false_positive_rate", "mean"),
        ("degenerate_rate", "mean"),
    ):
        summary = row.get(key) or {}
        ci = summary.get(f"{stat}_ci") or [None, None]
        out[key] = (summary.get(stat), ci[0], ci[1])
    return out


def haystack_tables(report: HaystackReport) -> list[dict[str, Any]]:
    """The headline per task (medians and rates with 95% intervals), then per task and length."""
    if not report.length_table:
        return []
    unit = report.length_unit or "tokens"
    measured = f" Lengths in {unit} of {report.tokenizer}." if report.tokenizer and unit == "tokens" else ""
    headline = Table(
        id="haystack_tasks",
        title="Long-context headline per task: medians and rates with 95% bootstrap CIs",
        description="Median F1 over all records (zero-needle records score 1 for an empty answer); median recall "
        "and precision over needle records; the share of zero-needle records answered with any article; "
        "the share of degenerate (runaway repetition) outputs." + measured,
        columns=(
            Column("Task"),
            Column("Records", numeric=True, digits=0),
            Column("Median F1 [95% CI]", lower_is_better=False),
            Column("Median recall [95% CI]", lower_is_better=False),
            Column("Median precision [95% CI]", lower_is_better=False),
            Column("Zero-needle false-positive rate [95% CI]", lower_is_better=True),
            Column("Degenerate-output rate [95% CI]", lower_is_better=True),
        ),
        rows=tuple(
            (
                Cell(str(r["task"])),
                Cell(float(r.get("records") or 0)),
                *(
                    Cell(*r[k])
                    for k in ("f1", "recall", "precision", "zero_needle_false_positive_rate", "degenerate_rate")
                ),
            )
            for r in report.task_table
        ),
    ).to_json()
    return [headline, _length_table(report)]


def _length_table(report: HaystackReport) -> dict[str, Any]:
    """Median F1 with its 95% interval per task and context length."""
    unit = report.length_unit or "tokens"
    rows = tuple(
        (
            Cell(str(r["task"])),
            Cell(float(r["length"])),
            Cell(float(r.get("records") or 0)),
            Cell(r.get("f1_median"), r.get("f1_ci_low"), r.get("f1_ci_high")),
            Cell(r.get("recall_median")),
            Cell(float(r.get("zero_needle_correct") or 0)),
            Cell(float(r.get("zero_needle_records") or 0)),
            Cell(float(r.get("false_positives") or 0)),
            Cell(float(r.get("invalid") or 0)),
            Cell(float(r.get("degenerate") or 0)),
        )
        for r in report.length_table
    )
    return Table(
        id="haystack_lengths",
        title=f"Median F1 per task and context length ({unit})",
        description="Zero-needle records are correct when nothing is returned; invalid = no parsable JSON, "
        "degenerate = runaway repetition.",
        columns=(
            Column("Task"),
            Column(f"Length ({unit})", numeric=True, digits=0),
            Column("Records", numeric=True, digits=0),
            Column("Median F1 [95% CI]", lower_is_better=False),
            Column("Median recall", lower_is_better=False),
            Column("Zero-needle correct", numeric=True, digits=0),
            Column("Zero-needle records", numeric=True, digits=0),
            Column("False positives", numeric=True, digits=0),
            Column("Invalid", numeric=True, digits=0),
            Column("Degenerate", numeric=True, digits=0),
        ),
        rows=rows,
    ).to_json()
