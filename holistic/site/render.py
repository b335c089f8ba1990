"""Render ``<suite>/site/`` from the summary and the run shards.

Plain static files: every page works opened from disk (``file://``) or from any
static host. No server code, no range requests, nothing fetched from the
network. Strings from data or models are escaped by Jinja2's autoescaping in
pages, and inserted with ``textContent`` by the instance browser.

:func:`render_site` writes the pages in this order: the static files, the diff with
the previous release, the plots, the home page (one leaderboard per metric group),
the run-group and scenario pages, the run pages with their instance browsers and the
compare-systems views (:mod:`holistic.site.run_pages`), then the suite-wide pages
(targeted evaluations, judges, coverage, models, plots).
"""

from __future__ import annotations

import functools
import shutil
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holistic.core.threads import thread_map
from holistic.results import RunReader, SuiteReader
from holistic.results.atomic import build_folder, writing
from holistic.results.layout import table_file
from holistic.results.output_cache import OutputCache, cached_json, code_fingerprint, key_of, run_file_sha256
from holistic.results.schemas import REQUESTS_TABLE
from holistic.site.browser import MAX_FIELD_CHARS
from holistic.site.bundle import SOUND_CACHE
from holistic.site.bundle_reuse import BUNDLES_CACHE
from holistic.site.compare_data import COMPARE_CACHE
from holistic.site.page_reuse import PAGES_CACHE, PageReuse
from holistic.site.plots import FIGURES_CACHE, PARETO_CACHE, TRIALS_CACHE, render_plots
from holistic.site.run_facts import request_totals
from holistic.site.run_pages import render_run_pages
from holistic.site.writer import STATIC_FILES, SiteWriter, environment, judge_flags, rows_of, templates_dir
from holistic.summarize.load import RunInfo
from holistic.summarize.schema import load_schema
from holistic.summarize.summary import Summary
from holistic.summarize.tables import Cell, Column, Table, anchor

if TYPE_CHECKING:
    from holistic.diff.compare import DiffReport

__all__ = ["SiteWriter", "anchor", "render_diff_page", "render_site", "templates_dir"]


def render_site(
    suite_dir: Path | SuiteReader,
    summary: Summary,
    *,
    previous: Path | None = None,
    max_field_chars: int = MAX_FIELD_CHARS,
    jobs: int = 0,
    cache: OutputCache | None = None,
) -> Path:
    """Render the whole site; returns the path of ``index.html`` (``jobs``: processes that build the
    runs' instance browsers, see :func:`~holistic.site.run_pages.browser_jobs`; ``cache``: the suite's
    output cache, where the plots, compare-systems data and checked scripts of an earlier summarize are
    found, :mod:`holistic.results.output_cache`).

    The site is built in a hidden temporary folder beside the old one and swapped in
    only once complete: a failure (a bad ``previous``, a read-only disk) leaves the old
    site as it was.
    """
    suite = suite_dir if isinstance(suite_dir, SuiteReader) else SuiteReader(suite_dir)
    final = suite.site_dir

    def build(building: Path) -> PageReuse | None:
        reuse = None if cache is None else PageReuse(cache, final, building, templates_dir())
        _render_into(suite, summary, building, previous, max_field_chars, jobs, cache, reuse)
        return reuse

    reuse = build_folder(final, build, what="site")
    if reuse is not None:
        reuse.save(final)  # once the site is in place: the pages the next summarize may take
    return final / "index.html"


REQUESTS_CACHE = "request_totals"
"""The output cache's kind of a run's request totals (by its requests file's sha256)."""


CACHE_KINDS = (
    PARETO_CACHE,
    FIGURES_CACHE,
    COMPARE_CACHE,
    SOUND_CACHE,
    REQUESTS_CACHE,
    TRIALS_CACHE,
    PAGES_CACHE,
    BUNDLES_CACHE,
)
"""The kinds of output the site keeps in the suite's output cache (:mod:`holistic.results.output_cache`)."""


def _render_into(
    suite: SuiteReader,
    summary: Summary,
    site_dir: Path,
    previous: Path | None,
    max_field_chars: int = MAX_FIELD_CHARS,
    jobs: int = 0,
    cache: OutputCache | None = None,
    reuse: PageReuse | None = None,
) -> None:
    for name in STATIC_FILES:
        with writing(site_dir / name) as target:
            shutil.copyfile(templates_dir() / name, target)
    w = SiteWriter(site_dir, summary.suite, previous is not None, reuse)
    content = _Content.of(summary)
    w.common["has_targeted"] = bool(content.targeted)
    w.common["has_judges"] = bool(summary.judges.judged_runs)
    w.common["unfinished"] = summary.unfinished
    if previous is not None:
        _render_diff(previous, suite, site_dir, w)
    figures = render_plots(suite, summary, site_dir / "plots", cache)
    _home_page(w, suite, content)
    _run_group_pages(w, content)
    _scenario_pages(w, content, figures)
    totals: dict[str, Any] = {}  # each run's request totals, from its browser bundle
    render_run_pages(w, suite, summary, figures, content.judge_tables, max_field_chars, jobs, cache, totals)
    _suite_pages(w, suite, content, figures, cache, totals)


@dataclass(frozen=True)
class _Content:
    """The summary's tables as the pages show them, and the judges every page warns about."""

    summary: Summary
    tables: dict[str, dict[str, Any]]
    """Table id -> its JSON."""
    targeted: list[dict[str, Any]]
    """The targeted-evaluation tables (their own page)."""
    judge_tables: list[dict[str, Any]]
    every_flag: list[dict[str, str]]
    """Every flagged judge of the suite."""

    @classmethod
    def of(cls, summary: Summary) -> _Content:
        tables = {t.id: t.to_json() for t in summary.tables}
        judges = summary.judges
        return cls(
            summary=summary,
            tables=tables,
            targeted=[tables[t.id] for t in summary.tables if t.id.startswith("targeted_")],
            judge_tables=[t.to_json() for t in judges.tables],
            every_flag=judge_flags(summary, [j for js in judges.judged_runs.values() for j in js]),
        )


def _home_page(w: SiteWriter, suite: SuiteReader, content: _Content) -> None:
    """``index.html``: one leaderboard per metric group."""
    summary = content.summary
    descriptions = {g.name: g.description for g in load_schema().metric_groups}
    leaderboards = [
        {"group": group, "description": descriptions.get(group, ""), "table": content.tables.get(f"group_{group}")}
        for group in summary.leaderboards
    ]
    w.page(
        "index.html",
        "index.html",
        f"Suite {summary.suite}",
        description=suite.meta.get("description", ""),
        leaderboards=leaderboards,
        runs=summary.runs,
        models=summary.models,
        columns=summary.columns,
        system_model=summary.system_model,
        error_notice=_error_notice(summary),
        judge_flags=content.every_flag,
    )


def _run_group_pages(w: SiteWriter, content: _Content) -> None:
    """One page per run group (its metric groups' tables), and their list."""
    by_rungroup: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in content.summary.tables:
        if t.id.startswith("rungroup_"):
            rg = t.title.split(":")[0]
            by_rungroup[rg].append(content.tables[t.id])
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
            judge_flags=content.every_flag,
        )
        links.append({"href": rel, "text": rg, "note": f"{len(rg_tables)} metric groups"})
    w.page("groups.html", "list.html", "Run groups", tables=[], intro="", links=links, figures=None)


def _scenario_pages(w: SiteWriter, content: _Content, figures: list[dict[str, Any]]) -> None:
    """One page per scenario column (every metric per model, its judges' agreement, its runs), and their list."""
    summary, judges = content.summary, content.summary.judges
    links = []
    for col in summary.columns:
        rel = f"scenario_{anchor(col)}.html"
        ids = set(summary.column_runs.get(col, []))
        runs = [r for r in summary.runs if r.run_id in ids]
        run_links = [  # named as the runs page, --plan and helm-run's scores name them
            {"href": f"runs/{r.run_id}.html", "text": summary.name_of_run.get(r.run_id, r.name), "note": ""}
            for r in runs
        ]
        scores = [content.tables[f"scenario_{anchor(col)}"]] if f"scenario_{anchor(col)}" in content.tables else []
        w.page(
            rel,
            "list.html",
            f"Scenario: {col}",
            tables=scores + [t for t in (rows_of(t, col) for t in content.judge_tables) if t is not None],
            judge_flags=judge_flags(summary, judges.judged_columns.get(col, [])),
            intro="Every metric, per model (sub-runs macro-averaged)"
            + ("; then how far its judges agree." if col in judges.judged_columns else "."),
            links=run_links,
            figures=[{**f, "src": f["src"]} for f in figures if f.get("scenario") == col],
        )
        links.append({"href": rel, "text": col, "note": f"{len(runs)} runs"})
    w.page("scenarios.html", "list.html", "Scenarios", tables=[], intro="", links=links, figures=None)


def _suite_pages(
    w: SiteWriter,
    suite: SuiteReader,
    content: _Content,
    figures: list[dict[str, Any]],
    cache: OutputCache | None = None,
    totals: Mapping[str, Any] | None = None,
) -> None:
    """The suite-wide pages: targeted evaluations and judges (when the suite has them), coverage, models, plots
    (``totals``: run id -> its request totals, when known)."""
    summary, judges = content.summary, content.summary.judges
    if content.targeted:
        w.page(
            "targeted.html",
            "list.html",
            "Targeted evaluations",
            tables=content.targeted,
            intro="HELM's targeted evaluations (§5): one table per component, then each scenario's groups.",
            links=None,
            figures=None,
        )
    if judges.judged_runs:
        w.page(
            "judges.html",
            "list.html",
            "Judges",
            tables=content.judge_tables,
            intro="How far each judge can be trusted: agreement with the other judges of the same generations, "
            "and with human ratings once imported (helm-ratings import)."
            if content.judge_tables
            else "One judge per scenario and no human ratings yet: name two judges, or import ratings, to measure "
            "agreement.",
            links=[
                {"href": f"scenario_{anchor(c)}.html", "text": c, "note": ", ".join(js)}
                for c, js in sorted(judges.judged_columns.items())
            ],
            figures=None,
            judge_flags=content.every_flag,
        )
    w.page(
        "coverage.html",
        "list.html",
        "Coverage: scenario × metric category",
        tables=[content.tables["coverage"]],
        intro="Each cell is measured, or not applicable with the reason.",
        links=None,
        figures=None,
    )
    w.page(
        "models.html",
        "list.html",
        "Models",
        tables=[_models_table(suite, summary, cache, totals).to_json()],
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


def _models_table(
    suite: SuiteReader, summary: Summary, cache: OutputCache | None = None, known: Mapping[str, Any] | None = None
) -> Table:
    """The models and what their runs' requests consumed (``known``: run id -> its request totals, as
    its browser bundle holds them; the other runs' requests are read)."""
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    facts: dict[str, dict[str, Any]] = {}
    code = code_fingerprint(request_totals)
    known = known or {}

    def sums_of(run: RunInfo, reader: RunReader) -> Any:
        if run.run_id in known:
            return known[run.run_id]
        sha = run_file_sha256(reader.manifest.files, table_file(REQUESTS_TABLE))
        key = None if sha is None else key_of("requests", code, sha)
        return cached_json(cache, REQUESTS_CACHE, key, functools.partial(request_totals, reader))

    readers = [suite.run(run.run_id) for run in summary.runs]
    sums_all = thread_map(lambda pair: sums_of(*pair), list(zip(summary.runs, readers, strict=True)))
    for run, reader, sums in zip(summary.runs, readers, sums_all, strict=True):  # Arrow reads in parallel
        dep = run.spec.get("model_deployment") or {}
        if dep:
            facts[run.model] = dep
        if sums is not None:
            tot = totals[run.model]
            for c in ("requests", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s"):
                tot[c] += sums[c]
        judges_usd = (reader.artifacts.get("execution") or {}).get("judge_cost_usd")
        if isinstance(judges_usd, (int, float)):
            totals[run.model]["judge_cost_usd"] += judges_usd
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
                Cell(tot.get("judge_cost_usd")),
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
            num("Judges' cost (USD)", 4),
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
    env = environment()
    if common is not None:
        return env.get_template("diff.html").render(root="", **common, **context)
    css = (templates_dir() / "style.css").read_text(encoding="utf-8")
    return env.from_string(_STANDALONE_DIFF).render(root="", suite="helm-diff", inline_css=css, **context)
