"""Render ``<suite>/site/`` from the summary and the run shards.

Plain static files: every page works opened from disk (``file://``) or from any
static host. No server code, no range requests, nothing fetched from the
network. Strings from data or models are escaped by Jinja2's autoescaping in
pages, and inserted with ``textContent`` by the instance browser.
"""

from __future__ import annotations

import math
import shutil
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from holistic.core.resources import project_path
from holistic.results import RunReader, SuiteReader, references_from_rows
from holistic.results.atomic import build_folder, writing
from holistic.site.browser import MAX_FIELD_CHARS, build_browser
from holistic.site.compare import comparisons, write_comparison
from holistic.site.haystack import HaystackReport, render_haystack
from holistic.site.titles import run_title
from holistic.summarize.build import Summary
from holistic.summarize.tables import Cell, Column, Table

if TYPE_CHECKING:
    from holistic.diff.compare import DiffReport

STATIC_FILES = ("style.css", "site.js", "chunks.js", "browser.js", "compare.js")


def templates_dir() -> Path:
    """``site_templates/`` (templates, CSS and JavaScript) of the checkout or the installation."""
    folder = project_path("site_templates")
    if not (folder / "base.html").exists():
        raise FileNotFoundError(f"site templates not found (looked for {folder})")
    return folder


def anchor(text: Any) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in str(text))


def _env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=False,
        keep_trailing_newline=True,
    )
    env.filters["anchor"] = anchor
    return env


def _clean(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


class SiteWriter:
    def __init__(self, site_dir: Path, suite: str, has_diff: bool) -> None:
        self.site_dir = site_dir
        self.env = _env()
        self.common = {"suite": suite, "has_diff": has_diff}

    def page(self, rel: str, template: str, title: str, **context: Any) -> Path:
        depth = rel.count("/")
        html = self.env.get_template(template).render(title=title, root="../" * depth, **self.common, **context)
        path = self.site_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with writing(path):
            path.write_text(html, encoding="utf-8")
        return path


def render_site(
    suite_dir: Path | SuiteReader,
    summary: Summary,
    *,
    previous: Path | None = None,
    max_field_chars: int = MAX_FIELD_CHARS,
) -> Path:
    """Render the whole site; returns the path of ``index.html``.

    The site is built in a hidden temporary folder beside the old one and swapped in
    only once complete: a failure (a bad ``previous``, a read-only disk) leaves the old
    site as it was.
    """
    suite = suite_dir if isinstance(suite_dir, SuiteReader) else SuiteReader(suite_dir)
    final = suite.site_dir
    build_folder(final, lambda building: _render_into(suite, summary, building, previous, max_field_chars), what="site")
    return final / "index.html"


def _render_into(
    suite: SuiteReader, summary: Summary, site_dir: Path, previous: Path | None, max_field_chars: int = MAX_FIELD_CHARS
) -> None:
    for name in STATIC_FILES:
        with writing(site_dir / name) as target:
            shutil.copyfile(templates_dir() / name, target)
    tables = {t.id: t.to_json() for t in summary.tables}
    has_diff = previous is not None
    w = SiteWriter(site_dir, summary.suite, has_diff)
    targeted = [tables[t.id] for t in summary.tables if t.id.startswith("targeted_")]
    w.common["has_targeted"] = bool(targeted)
    judges = summary.judges
    judge_tables = [t.to_json() for t in judges.tables]
    w.common["has_judges"] = bool(judges.judged_runs)
    every_flag = _judge_flags(summary, [j for js in judges.judged_runs.values() for j in js])
    w.common["unfinished"] = summary.unfinished
    if previous is not None:
        _render_diff(previous, suite, site_dir, w)
    suite_meta = suite.meta

    from holistic.site.plots import render_plots

    figures = render_plots(suite, summary, site_dir / "plots")

    # Home: one leaderboard per metric group.
    leaderboards = []
    from holistic.summarize.schema import load_schema

    descriptions = {g.name: g.description for g in load_schema().metric_groups}
    for group, res in summary.leaderboards.items():
        order = sorted(range(len(res.models)), key=lambda i: (res.rank[i], res.models[i]))
        leaderboards.append(
            {
                "group": group,
                "description": descriptions.get(group, ""),
                "table": tables.get(f"group_{group}"),
                "rows": [
                    {
                        "model": res.models[i],
                        "rank": res.rank[i],
                        "win_rate": _clean(res.win_rate[i]),
                        "ci_low": _clean(res.ci_low[i]),
                        "ci_high": _clean(res.ci_high[i]),
                        "rank_low": res.rank_low[i],
                        "rank_high": res.rank_high[i],
                        "separable": res.separable_from_next[i],
                    }
                    for i in order
                ],
            }
        )
    w.page(
        "index.html",
        "index.html",
        f"Suite {summary.suite}",
        description=suite_meta.get("description", ""),
        leaderboards=leaderboards,
        runs=summary.runs,
        models=summary.models,
        columns=summary.columns,
        system_model=summary.system_model,
        error_notice=_error_notice(summary),
        judge_flags=every_flag,
    )

    # Run groups.
    by_rungroup: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in summary.tables:
        if t.id.startswith("rungroup_"):
            rg = t.title.split(":")[0]
            by_rungroup[rg].append(tables[t.id])
    links = []
    for rg, rg_tables in sorted(by_rungroup.items()):
        rel = f"group_{anchor(rg)}.html"
        w.page(
            rel,
            "list.html",
            f"Run group: {rg}",
            tables=rg_tables,
            intro=rg_tables[0].get("description", ""),
            links=None,
            figures=None,
            judge_flags=every_flag,
        )
        links.append({"href": rel, "text": rg, "note": f"{len(rg_tables)} metric groups"})
    w.page("groups.html", "list.html", "Run groups", tables=[], intro="", links=links, figures=None)

    # Scenarios.
    links = []
    for col in summary.columns:
        rel = f"scenario_{anchor(col)}.html"
        ids = set(summary.column_runs.get(col, []))
        runs = [r for r in summary.runs if r.run_id in ids]
        run_links = [
            {"href": f"runs/{r.run_id}.html", "text": r.name, "note": summary.system_of_run.get(r.run_id, r.model)}
            for r in runs
        ]
        figs = [f for f in figures if f.get("scenario") == col]
        scores = [tables[f"scenario_{anchor(col)}"]] if f"scenario_{anchor(col)}" in tables else []
        w.page(
            rel,
            "list.html",
            f"Scenario: {col}",
            tables=scores + [t for t in (_rows_of(t, col) for t in judge_tables) if t is not None],
            judge_flags=_judge_flags(summary, judges.judged_columns.get(col, [])),
            intro="Every metric, per model (sub-runs macro-averaged)"
            + ("; then how far its judges agree." if col in judges.judged_columns else "."),
            links=run_links,
            figures=[{**f, "src": f["src"]} for f in figs],
        )
        links.append({"href": rel, "text": col, "note": f"{len(runs)} runs"})
    w.page("scenarios.html", "list.html", "Scenarios", tables=[], intro="", links=links, figures=None)

    # Runs, run pages, instance browsers and the compare-systems views.
    compared = comparisons(summary.runs, summary.system_of_run)
    compare_of = {run_id: c for c in compared for run_id in c.run_ids}
    predictions: dict[str, dict[str, dict[str, Any]]] = {}
    run_links = []
    for run in summary.runs:
        reader = suite.run(run.run_id)
        data = build_browser(reader, site_dir / "data" / run.run_id, run.main_metric, max_field_chars=max_field_chars)
        if run.run_id in compare_of:
            predictions[run.run_id] = data.predictions
        haystack = render_haystack(reader, site_dir / "plots", src_prefix="plots/", run_id=run.run_id)
        system = summary.system_of_run.get(run.run_id, run.model)
        short = run_title(run.scenario, run.scenario_args, system)
        comparison = compare_of.get(run.run_id)
        run_flags = _judge_flags(summary, judges.judged_runs.get(run.run_id, []))
        column = next((c for c, ids in summary.column_runs.items() if run.run_id in ids), "")
        _run_page(
            w,
            run,
            reader,
            data.count,
            [f for f in figures if f.get("run_id") == run.run_id] + haystack.figures,
            extra_tables=_haystack_tables(haystack)
            + [
                t
                for t in (_rows_of(t, column) for t in judge_tables)
                if t is not None and run.run_id in judges.judged_runs
            ],
            title=short,
            system=system,
            comparison=comparison,
            judge_flags=run_flags,
        )
        w.page(
            f"runs/browse/{run.run_id}.html",
            "browser.html",
            f"Instances: {short}",
            run=run,
            system=system,
            comparison=comparison,
            judge_flags=run_flags,
        )
        note = f"{data.count} instances"
        if run.failed_requests:
            note += f"; error rate {run.error_rate:.1%}" + ("" if run.rankable else " (not ranked)")
        run_links.append({"href": f"runs/{run.run_id}.html", "text": short, "note": note})
    w.page("runs.html", "list.html", "Runs", tables=[], intro="", links=run_links, figures=None)
    compare_links = []
    for c in compared:
        count = write_comparison(site_dir / "data" / "compare" / c.id, c, predictions)
        short = run_title(c.scenario, c.scenario_args, f"{len(c.systems)} systems")
        w.page(
            f"compare/{c.id}.html",
            "compare.html",
            f"Compare: {short}",
            comparison=c,
            count=count,
            judge_flags=_judge_flags(summary, [j for r in c.run_ids for j in judges.judged_runs.get(r, [])]),
        )
        compare_links.append({"href": f"compare/{c.id}.html", "text": short, "note": f"{count} instances"})
    w.page(
        "compare.html",
        "list.html",
        "Compare systems",
        tables=[],
        links=compare_links,
        figures=None,
        intro="Every system's answer to the same instance, side by side: one page per scenario and arguments "
        "run by two or more systems."
        if compare_links
        else "No scenario of this suite was run by two or more systems.",
    )

    if targeted:
        w.page(
            "targeted.html",
            "list.html",
            "Targeted evaluations",
            tables=targeted,
            intro="HELM's targeted evaluations (§5): one table per component, then each scenario's groups.",
            links=None,
            figures=None,
        )
    if judges.judged_runs:
        w.page(
            "judges.html",
            "list.html",
            "Judges",
            tables=judge_tables,
            intro="How far each judge can be trusted: agreement with the other judges of the same generations, "
            "and with human ratings once imported (helm-summarize --import-ratings)."
            if judge_tables
            else "One judge per scenario and no human ratings yet: name two judges, or import ratings, to measure "
            "agreement.",
            links=[
                {"href": f"scenario_{anchor(c)}.html", "text": c, "note": ", ".join(js)}
                for c, js in sorted(judges.judged_columns.items())
            ],
            figures=None,
            judge_flags=every_flag,
        )
    w.page(
        "coverage.html",
        "list.html",
        "Coverage: scenario × metric category",
        tables=[tables["coverage"]],
        intro="Each cell is measured, or not applicable with the reason.",
        links=None,
        figures=None,
    )
    w.page(
        "models.html",
        "list.html",
        "Models",
        tables=[_models_table(suite, summary).to_json()],
        intro="Registry facts and what each model consumed in this suite.",
        links=None,
        figures=None,
    )
    w.page(
        "plots.html",
        "list.html",
        "Plots",
        tables=[],
        intro="",
        links=None,
        figures=[{**f, "src": f["src"]} for f in figures if not f.get("run_id")],
    )


def _judge_flags(summary: Summary, judges: Sequence[str]) -> list[dict[str, str]]:
    """The flagged judges among ``judges`` (a page showing their scores warns about each)."""
    flags = summary.judges.flags
    return [{"judge": j, "reason": flags[j]} for j in sorted(set(judges)) if j in flags]


def _rows_of(table: dict[str, Any], column: str) -> dict[str, Any] | None:
    """``table`` (a judge agreement table) with only the rows of scenario ``column`` (``None``: none)."""
    rows = [r for r in table["rows"] if r and r[0].get("value") == column]
    return {**table, "rows": rows} if rows else None


def _error_notice(summary: Summary) -> str:
    """The home page's warning when requests failed (empty when none did)."""
    failed = [r for r in summary.runs if r.failed_requests]
    if not failed:
        return ""
    total = sum(r.requests for r in summary.runs)
    lost = sum(r.failed_requests for r in failed)
    text = (
        f"{lost} of {total} requests failed in {len(failed)} of {len(summary.runs)} runs: the scores of "
        f"those runs are partial (see the Error rate columns); rerun helm-run to retry the failed requests."
    )
    if summary.unranked:
        text += f" {len(summary.unranked)} runs failed every request and are not ranked."
    return text


def _haystack_tables(report: HaystackReport) -> list[dict[str, Any]]:
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
    return [headline, _haystack_table(report)]


def _haystack_table(report: HaystackReport) -> dict[str, Any]:
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


def _run_page(
    w: SiteWriter,
    run: Any,
    reader: RunReader,
    n_instances: int,
    figures: list[dict[str, Any]],
    extra_tables: list[dict[str, Any]] | None = None,
    *,
    title: str,
    system: str,
    comparison: Any = None,
    judge_flags: list[dict[str, str]] | None = None,
) -> None:
    spec = dict(reader.spec)
    artifacts = reader.artifacts
    stats = reader.table("stats").to_pylist()
    rows = []
    for s in sorted(
        stats, key=lambda s: (s["metric"], s["split"] or "", s.get("sub_split") or "", s.get("perturbation") or "")
    ):
        rows.append(
            (
                Cell(s["metric"]),
                Cell(s["split"]),
                Cell(s.get("sub_split") or ""),
                Cell(s.get("perturbation") or ""),
                Cell(_clean(s["mean"]), _clean(s.get("ci_low")), _clean(s.get("ci_high"))),
                Cell(_clean(s.get("stddev"))),
                Cell(float(s["count"]) if s.get("count") is not None else None),
            )
        )
    stats_table = Table(
        id="stats",
        title="Every statistic",
        columns=(
            Column("Metric"),
            Column("Split"),
            Column("Sub-split"),
            Column("Perturbation"),
            Column("Mean [95% CI]", numeric=True),
            Column("Std. dev.", numeric=True),
            Column("Count", numeric=True, digits=0),
        ),
        rows=tuple(rows),
    )
    examples = []
    if reader.has_table("instances"):
        t = reader.table("instances", ["instance_id", "role", "input", "references"])
        for r in t.to_pylist():
            if r["role"] == "train":
                answer = next((ref.output for ref in references_from_rows(r["references"]) if ref.is_correct), "")
                examples.append({"id": r["instance_id"], "input": r["input"], "answer": answer})
    spec.setdefault("adapter", {})
    spec.setdefault("metrics", [])
    spec.setdefault("perturbations", [])
    spec.setdefault("metrics_not_applicable", {})
    w.page(
        f"runs/{run.run_id}.html",
        "run.html",
        f"Run: {title}",
        run=run,
        spec=spec,
        system=system,
        comparison=comparison,
        execution=artifacts.get("execution"),
        stats_table=stats_table.to_json(),
        examples=examples,
        n_instances=n_instances,
        figures=[{**f, "src": "../" + f["src"]} for f in figures],
        extra_tables=extra_tables or [],
        judge_flags=judge_flags or [],
    )


def _models_table(suite: SuiteReader, summary: Summary) -> Table:
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    facts: dict[str, dict[str, Any]] = {}
    for run in summary.runs:
        reader = suite.run(run.run_id)
        dep = run.spec.get("model_deployment") or {}
        if dep:
            facts[run.model] = dep
        if reader.has_table("requests"):
            names = set(reader.table_columns("requests"))
            cols = [c for c in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "cached") if c in names]
            t = reader.table("requests", cols).to_pydict()
            tot = totals[run.model]
            tot["requests"] += len(t.get(cols[0], [])) if cols else 0
            for c in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s"):
                tot[c] += sum(v or 0 for v in t.get(c, []))
    rows = []
    for m in sorted({r.model for r in summary.runs}):
        f, tot = facts.get(m, {}), totals.get(m, {})
        caps = f.get("capabilities") or {}
        rows.append(
            (
                Cell(m, anchor=anchor(m)),
                Cell(str(f.get("provider", ""))),
                Cell(str(f.get("description", ""))[:200]),
                Cell(float(f["context_window"]) if f.get("context_window") else None),
                Cell(", ".join(k for k, v in sorted(caps.items()) if v)),
                Cell(f.get("price_input_per_million")),
                Cell(f.get("price_output_per_million")),
                Cell(tot.get("requests")),
                Cell(tot.get("prompt_tokens")),
                Cell(tot.get("completion_tokens")),
                Cell(tot.get("cost_usd")),
                Cell(tot.get("latency_s")),
            )
        )

    def num(name: str, digits: int = 0) -> Column:
        return Column(name, numeric=True, digits=digits)

    return Table(
        id="models",
        title="Models",
        columns=(
            Column("Model"),
            Column("Provider"),
            Column("Description"),
            num("Context window"),
            Column("Capabilities"),
            num("$ / M input tokens", 2),
            num("$ / M output tokens", 2),
            num("Requests"),
            num("Prompt tokens"),
            num("Completion tokens"),
            num("Cost (USD)", 4),
            num("Model time (s)", 1),
        ),
        rows=tuple(rows),
    )


def _render_diff(previous: Path, suite: SuiteReader, site_dir: Path, w: SiteWriter) -> None:
    from holistic.diff import diff_suites, read_side

    report = diff_suites(read_side(previous), read_side(suite.suite_dir))
    with writing(site_dir / "diff.html") as target:
        target.write_text(render_diff_page(report, common=w.common), encoding="utf-8")


_STANDALONE_DIFF = """{% extends "diff.html" %}
{% block nav %}<nav aria-label="Sections"><a href="#summary">Summary</a> · <a href="#runs">Runs</a> ·
<a href="#flips">Flipped instances</a> · <a href="#added">Added</a> · <a href="#removed">Removed</a></nav>{% endblock %}
"""


def render_diff_page(report: DiffReport, *, common: Mapping[str, Any] | None = None) -> str:
    """A helm-diff report as a page in the site's style: a page of a site (``common``: the
    suite and the navigation facts its pages share) or, without ``common``, one standalone
    file with the style inlined and a bar of links to its own sections (``helm-diff --html``)."""
    from holistic.diff.report import html_context

    context = html_context(report)
    env = _env()
    if common is not None:
        return env.get_template("diff.html").render(root="", **common, **context)
    css = (templates_dir() / "style.css").read_text(encoding="utf-8")
    return env.from_string(_STANDALONE_DIFF).render(root="", suite="helm-diff", inline_css=css, **context)
