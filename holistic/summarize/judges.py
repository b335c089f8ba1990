"""Judge governance: how far each judge of a suite can be trusted, next to its scores.

Read from every judged run's ``annotations.parquet`` (scores of verdicts with status
``ok``) and, once imported, the human ratings (``helm-ratings import``):

- ``judge_agreement``: per scenario column with two or more judges, Krippendorff's
  alpha (interval) over the generations scored by at least two of them, and Cohen's
  kappa (the scores as categories) when there are exactly two;
- ``judge_human_agreement``: per scenario column and judge, Krippendorff's alpha between
  the judge's score and the mean human rating of the same generation (the judges'
  statistic is the rating question).

With a threshold (``helm-summarize --judge-threshold``), a judge whose agreement is
below it (with humans where rated, else with the other judges) is flagged: the reason
is in :attr:`JudgeReport.flags`, shown on every page of the site that shows its scores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from holistic.ratings.agreement import cohen_kappa, krippendorff_alpha_interval
from holistic.results.reader import SuiteReader
from holistic.results.schemas import ANNOTATIONS_TABLE
from holistic.summarize.load import RunInfo
from holistic.summarize.tables import Cell, Column, Table

Unit = tuple[str, str, int, int]
"""``(run_id, instance_id, trial, request_index)``: one judged generation."""


@dataclass
class JudgeReport:
    """The governance tables and the judges flagged below the threshold."""

    tables: list[Table] = field(default_factory=list)
    flags: dict[str, str] = field(default_factory=dict)
    """Judge label -> why it is flagged."""
    judged_columns: dict[str, list[str]] = field(default_factory=dict)
    """Scenario column -> its judges' labels (the pages showing their scores)."""
    judged_runs: dict[str, list[str]] = field(default_factory=dict)
    """Run id -> its judges' labels."""


def _scores(
    reader: SuiteReader, runs: Sequence[RunInfo], column_of: Callable[[RunInfo], str]
) -> tuple[dict[str, dict[str, dict[Unit, float]]], dict[str, str], dict[str, list[str]]]:
    """``column -> judge -> unit -> score``, each judge's statistic, and each run's judges."""
    out: dict[str, dict[str, dict[Unit, float]]] = {}
    stats: dict[str, str] = {}
    run_judges: dict[str, list[str]] = {}
    for run in runs:
        run_reader = reader.run(run.run_id)
        spec = run_reader.spec
        if not spec.get("judges") or not run_reader.has_table(ANNOTATIONS_TABLE):
            continue
        for judge in spec["judges"]:
            stats[str(judge.get("name"))] = str(judge.get("stat", "judge_score"))
        run_judges[run.run_id] = [str(j.get("name")) for j in spec["judges"]]
        rows = run_reader.table(
            ANNOTATIONS_TABLE, ["instance_id", "trial", "request_index", "perturbation", "judge", "status", "score"]
        ).to_pylist()
        for row in rows:
            if row["status"] != "ok" or row["score"] is None or row["perturbation"] is not None:
                continue
            unit = (run.run_id, row["instance_id"], int(row["trial"]), int(row["request_index"]))
            out.setdefault(column_of(run), {}).setdefault(row["judge"], {})[unit] = float(row["score"])
    return out, stats, run_judges


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def judge_report(
    reader: SuiteReader,
    runs: Sequence[RunInfo],
    column_of: Callable[[RunInfo], str],
    *,
    threshold: float | None = None,
) -> JudgeReport:
    """The judge agreement tables of the suite (empty when no run names judges)."""
    scores, stats, run_judges = _scores(reader, runs, column_of)
    report = JudgeReport(judged_runs=run_judges)
    if not scores:
        return report
    report.judged_columns = {c: sorted(j) for c, j in scores.items()}
    below: dict[str, list[str]] = defaultdict(list)
    inter_rows: list[tuple[Cell, ...]] = []
    for column, by_judge in sorted(scores.items()):
        judges = sorted(by_judge)
        if len(judges) < 2:
            continue
        units: dict[Unit, list[float]] = defaultdict(list)
        for judge in judges:
            for unit, score in by_judge[judge].items():
                units[unit].append(score)
        alpha = krippendorff_alpha_interval(units.values())
        kappa = None
        if len(judges) == 2:
            a, b = by_judge[judges[0]], by_judge[judges[1]]
            kappa = cohen_kappa((a[u], b[u]) for u in sorted(set(a) & set(b)))
        shared = sum(1 for v in units.values() if len(v) >= 2)
        flagged = threshold is not None and alpha is not None and alpha < threshold
        inter_rows.append(
            (
                Cell(column),
                Cell(", ".join(judges)),
                Cell(float(shared)),
                Cell(alpha, note="" if alpha is not None else "needs generations scored twice, with some variation"),
                Cell(kappa, note="" if len(judges) == 2 else "Cohen's kappa is for two judges"),
                Cell("below threshold" if flagged else ""),
            )
        )
        if flagged:
            for judge in judges:
                below[judge].append(f"agreement with the other judges on {column}: alpha {_fmt(alpha)}")
    human = _human_rows(reader, scores, stats, threshold, below)
    rated = {judge for (_, judge) in human[1]}
    for judge, reasons in below.items():
        # Agreement with humans, where there is some, is the better evidence.
        kept = [r for r in reasons if "human" in r] if judge in rated else reasons
        if kept:
            report.flags[judge] = f"below the agreement threshold {threshold:g}: " + "; ".join(kept)
    threshold_text = f" Judges below the threshold {threshold:g} are flagged." if threshold is not None else ""
    if inter_rows:
        report.tables.append(
            Table(
                id="judge_agreement",
                title="Judges: agreement with each other",
                description="Krippendorff's alpha (interval) over the generations scored by at least two judges, "
                "and Cohen's kappa (scores as categories) for two judges: 1 = perfect agreement, 0 = chance level."
                + threshold_text,
                columns=(
                    Column("Scenario"),
                    Column("Judges"),
                    Column("Generations", numeric=True, digits=0),
                    Column("Krippendorff's alpha", lower_is_better=False),
                    Column("Cohen's kappa", lower_is_better=False),
                    Column("Flag"),
                ),
                rows=tuple(inter_rows),
            )
        )
    if human[0]:
        report.tables.append(
            Table(
                id="judge_human_agreement",
                title="Judges: agreement with human ratings",
                description="Krippendorff's alpha (interval) between each judge's score and the mean human rating "
                "of the same generation (imported with helm-ratings import)." + threshold_text,
                columns=(
                    Column("Scenario"),
                    Column("Judge"),
                    Column("Generations", numeric=True, digits=0),
                    Column("Krippendorff's alpha", lower_is_better=False),
                    Column("Flag"),
                ),
                rows=tuple(human[0]),
            )
        )
    return report


def _human_rows(
    reader: SuiteReader,
    scores: dict[str, dict[str, dict[Unit, float]]],
    stats: dict[str, str],
    threshold: float | None,
    below: dict[str, list[str]],
) -> tuple[list[tuple[Cell, ...]], set[tuple[str, str]]]:
    """Rows of the judge-vs-human table (and the ``(column, judge)`` pairs with ratings)."""
    ratings = reader.ratings(per_instance=True).to_pylist()
    if not ratings:
        return [], set()
    human: dict[tuple[str, str, int, str], float] = {
        (r["run_id"], r["instance_id"], int(r["trial"]), r["metric"]): float(r["value"]) for r in ratings
    }
    rows: list[tuple[Cell, ...]] = []
    rated: set[tuple[str, str]] = set()
    for column, by_judge in sorted(scores.items()):
        for judge, units in sorted(by_judge.items()):
            pairs = [
                [human[(u[0], u[1], u[2], stats.get(judge, "judge_score"))], score]
                for u, score in sorted(units.items())
                if (u[0], u[1], u[2], stats.get(judge, "judge_score")) in human
            ]
            if not pairs:
                continue
            rated.add((column, judge))
            alpha = krippendorff_alpha_interval(pairs)
            flagged = threshold is not None and alpha is not None and alpha < threshold
            if flagged:
                below[judge].append(f"agreement with human ratings on {column}: alpha {_fmt(alpha)}")
            rows.append(
                (
                    Cell(column),
                    Cell(judge),
                    Cell(float(len(pairs))),
                    Cell(alpha, note="" if alpha is not None else "needs some variation in the scores"),
                    Cell("below threshold" if flagged else ""),
                )
            )
    return rows, rated
