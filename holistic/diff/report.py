"""Render a diff: terminal table, CSV, Parquet, JSON and a standalone HTML page."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from holistic.diff.compare import DiffReport, dump_json


def _fmt(v: float | None, signed: bool = False) -> str:
    if v is None or v != v:
        return "–"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def format_terminal(report: DiffReport, *, limit: int | None = None) -> str:
    """Runs with the largest significant change first, each named by its groups, short
    arguments and model; in each, the main metric first and diagnostic statistics last;
    non-comparable runs flagged with their causes."""
    lines = [f"old: {report.old_dir}", f"new: {report.new_dir}"]
    width = min(max([len(r.label) for r in report.runs] + [3]), 60)
    header = f"{'run':<{width}} {'metric':<28} {'old':>7} {'new':>7} {'delta':>7} {'95% CI':>17}  sig"
    lines += ["", header, "-" * len(header)]
    pad = " " * width
    for shown, r in enumerate(report.runs, start=1):
        flag = "" if r.comparable else "  [NOT COMPARABLE: " + "; ".join(r.causes) + "]"
        for i, m in enumerate(r.ordered):
            ci = f"[{_fmt(m.ci_low, True)}, {_fmt(m.ci_high, True)}]" if m.ci_low is not None else "–"
            label = (r.label if len(r.label) <= width else r.label[: width - 1] + "…") if i == 0 else ""
            name = m.metric + (" (main)" if m.metric == r.main_metric else "")
            lines.append(
                f"{label:<{width}} {name[:28]:<28} {_fmt(m.old):>7} {_fmt(m.new):>7} "
                f"{_fmt(m.delta, True):>7} {ci:>17}  {'*' if m.significant else ''}"
            )
        if flag:
            lines.append(f"{pad}{flag}")
        elif r.notes:
            lines.append(f"{pad}  [comparable]")
        for note in r.notes:
            lines.append(f"{pad}  note: {note}")
        if r.flips_to_wrong or r.flips_to_correct:
            lines.append(
                f"{pad} flips on {r.main_metric}: {len(r.flips_to_wrong)} correct->wrong "
                f"({', '.join(r.flips_to_wrong[:5])}{'...' if len(r.flips_to_wrong) > 5 else ''}), "
                f"{len(r.flips_to_correct)} wrong->correct "
                f"({', '.join(r.flips_to_correct[:5])}{'...' if len(r.flips_to_correct) > 5 else ''})"
            )
        if r.instances_added or r.instances_removed:
            lines.append(f"{pad} instances: +{len(r.instances_added)} -{len(r.instances_removed)}")
        if limit is not None and shown >= limit:
            lines.append(f"... {len(report.runs) - shown} more runs (use --format json for all)")
            break
    if report.runs_added:
        lines += ["", "runs only in new: " + ", ".join(report.runs_added)]
    if report.runs_removed:
        lines += ["", "runs only in old: " + ", ".join(report.runs_removed)]
    lines += ["", _totals(report)]
    return "\n".join(lines) + "\n"


def _totals(report: DiffReport) -> str:
    return (
        f"{len(report.runs)} aligned runs, {_significant(report)} with a significant change, "
        f"{sum(1 for r in report.runs if not r.comparable)} not comparable, "
        f"{len(report.runs_added)} added, {len(report.runs_removed)} removed"
    )


def _significant(report: DiffReport) -> int:
    return sum(1 for r in report.runs if any(m.significant for m in r.metrics))


def to_csv(report: DiffReport) -> str:
    rows = report.metric_rows()
    buf = io.StringIO()
    fields = list(rows[0]) if rows else ["metric"]
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def write_parquet(report: DiffReport, path: Path) -> None:
    rows = report.metric_rows()
    pq.write_table(pa.Table.from_pylist(rows) if rows else pa.table({"metric": pa.array([], pa.string())}), path)


def html_context(report: DiffReport) -> dict[str, Any]:
    """What the site's ``diff.html`` template shows of ``report`` (see
    :func:`holistic.site.render.render_diff_page`)."""
    return {
        "title": "Changes since the previous release",
        "old": report.old_dir,
        "new": report.new_dir,
        "runs": report.runs,
        "added": report.runs_added,
        "removed": report.runs_removed,
        "significant": _significant(report),
        "not_comparable": sum(1 for r in report.runs if not r.comparable),
        "fmt": _fmt,
    }


__all__ = ["dump_json", "format_terminal", "html_context", "to_csv", "write_parquet"]
