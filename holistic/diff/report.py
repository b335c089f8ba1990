"""Render a diff: terminal table, CSV, Parquet, JSON and a standalone HTML page."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from jinja2 import Environment, select_autoescape

from holistic.diff.compare import DiffReport, dump_json


def _fmt(v: float | None, signed: bool = False) -> str:
    if v is None or v != v:
        return "–"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def format_terminal(report: DiffReport, *, limit: int | None = None) -> str:
    """Largest significant changes first; non-comparable runs flagged with their causes."""
    lines = [f"old: {report.old_dir}", f"new: {report.new_dir}"]
    header = f"{'run':<48} {'metric':<24} {'old':>7} {'new':>7} {'delta':>7} {'95% CI':>17}  sig"
    lines += ["", header, "-" * len(header)]
    for shown, r in enumerate(report.runs, start=1):
        name = f"{r.scenario} {r.scenario_args if r.scenario_args != '{}' else ''} {r.model}".strip()
        flag = "" if r.comparable else "  [NOT COMPARABLE: " + "; ".join(r.causes) + "]"
        metrics = sorted(r.metrics, key=lambda m: (not m.significant, -abs(m.delta or 0.0), m.metric))
        for i, m in enumerate(metrics):
            ci = f"[{_fmt(m.ci_low, True)}, {_fmt(m.ci_high, True)}]" if m.ci_low is not None else "–"
            label = name[:48] if i == 0 else ""
            lines.append(
                f"{label:<48} {m.metric[:24]:<24} {_fmt(m.old):>7} {_fmt(m.new):>7} "
                f"{_fmt(m.delta, True):>7} {ci:>17}  {'*' if m.significant else ''}"
            )
        if flag:
            lines.append(f"{'':<48}{flag}")
        elif r.notes:
            lines.append(f"{'':<48}  [comparable]")
        for note in r.notes:
            lines.append(f"{'':<48}  note: {note}")
        if r.flips_to_wrong or r.flips_to_correct:
            lines.append(
                f"{'':<48} flips on {r.main_metric}: {len(r.flips_to_wrong)} correct->wrong "
                f"({', '.join(r.flips_to_wrong[:5])}{'...' if len(r.flips_to_wrong) > 5 else ''}), "
                f"{len(r.flips_to_correct)} wrong->correct "
                f"({', '.join(r.flips_to_correct[:5])}{'...' if len(r.flips_to_correct) > 5 else ''})"
            )
        if r.instances_added or r.instances_removed:
            lines.append(f"{'':<48} instances: +{len(r.instances_added)} -{len(r.instances_removed)}")
        if limit is not None and shown >= limit:
            lines.append(f"... {len(report.runs) - shown} more runs (use --format json for all)")
            break
    if report.runs_added:
        lines += ["", "runs only in new: " + ", ".join(report.runs_added)]
    if report.runs_removed:
        lines += ["", "runs only in old: " + ", ".join(report.runs_removed)]
    n_sig = sum(1 for r in report.runs if any(m.significant for m in r.metrics))
    n_nc = sum(1 for r in report.runs if not r.comparable)
    lines += [
        "",
        f"{len(report.runs)} aligned runs, {n_sig} with a significant change, {n_nc} not comparable, "
        f"{len(report.runs_added)} added, {len(report.runs_removed)} removed",
    ]
    return "\n".join(lines) + "\n"


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


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Diff: {{ old }} → {{ new }}</title>
<link rel="stylesheet" href="{{ css }}"></head>
<body><main>
<h1>Release comparison</h1>
<p>Old: <code>{{ old }}</code><br>New: <code>{{ new }}</code></p>
<p>{{ runs|length }} aligned runs; {{ added|length }} added; {{ removed|length }} removed.
Intervals are paired bootstrap 95% intervals of the change over shared instances; * marks intervals that exclude zero.</p>
<table class="sortable"><thead><tr><th scope="col">Run</th><th scope="col">Metric</th><th scope="col">Old</th>
<th scope="col">New</th><th scope="col">Δ</th><th scope="col">95% CI</th><th scope="col">Comparable</th></tr></thead><tbody>
{% for r in runs %}{% for m in r.metrics %}
<tr{% if not r.comparable %} class="not-comparable"{% endif %}><td>{{ r.scenario }} {{ r.scenario_args }} {{ r.model }}</td>
<td>{{ m.metric }}</td><td>{{ fmt(m.old) }}</td><td>{{ fmt(m.new) }}</td><td>{{ fmt(m.delta, True) }}{% if m.significant %} *{% endif %}</td>
<td>{% if m.ci_low is not none %}[{{ fmt(m.ci_low, True) }}, {{ fmt(m.ci_high, True) }}]{% else %}–{% endif %}</td>
<td>{% if r.comparable %}yes{% else %}no: {{ r.causes|join('; ') }}{% endif %}{% for n in r.notes %}<br>{{ n }}{% endfor %}</td></tr>
{% endfor %}{% endfor %}
</tbody></table>
{% for r in runs if r.flips_to_wrong or r.flips_to_correct %}
<h2>Flips in {{ r.scenario }} {{ r.model }}</h2>
<p>Correct → wrong: {{ r.flips_to_wrong|join(', ') }}</p><p>Wrong → correct: {{ r.flips_to_correct|join(', ') }}</p>
{% endfor %}
{% if added %}<h2>Runs only in new</h2><ul>{% for a in added %}<li>{{ a }}</li>{% endfor %}</ul>{% endif %}
{% if removed %}<h2>Runs only in old</h2><ul>{% for a in removed %}<li>{{ a }}</li>{% endfor %}</ul>{% endif %}
</main></body></html>
"""


def to_html(report: DiffReport, *, css: str = "style.css") -> str:
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    template = env.from_string(_HTML)
    return template.render(
        old=report.old_dir,
        new=report.new_dir,
        runs=report.runs,
        added=report.runs_added,
        removed=report.runs_removed,
        fmt=_fmt,
        css=css,
    )


__all__ = ["dump_json", "format_terminal", "to_csv", "to_html", "write_parquet"]
