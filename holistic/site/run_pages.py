"""The pages of each run: its run page (every statistic, the in-context examples, its figures),
its instance browser, and the compare-systems views of the runs that two or more systems share."""

from __future__ import annotations

import functools
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from holistic.core.naming import run_title
from holistic.results import SuiteReader
from holistic.results.output_cache import OutputCache, code_fingerprint, key_of
from holistic.site.browser import BrowserData, js_json
from holistic.site.bundle import BundleJob, bundle_into, fingerprint
from holistic.site.compare import Comparison, comparisons, write_comparison
from holistic.site.haystack import HaystackReport, haystack_tables, render_haystack
from holistic.site.writer import SiteWriter, judge_flags, rows_of
from holistic.summarize.load import RunInfo, main_metric_of
from holistic.summarize.summary import Summary


def render_run_pages(
    w: SiteWriter,
    suite: SuiteReader,
    summary: Summary,
    figures: list[dict[str, Any]],
    judge_tables: list[dict[str, Any]],
    max_field_chars: int,
    jobs: int = 0,
    cache: OutputCache | None = None,
) -> None:
    """Every run's page and instance browser, the list of runs, and the compare-systems views.

    The runs are built one comparison at a time (its runs together, then the runs no other
    system shares), and each comparison is written, and its runs' predictions let go, as soon
    as its last run is built: a suite of thousands of runs never holds every run's predictions.
    A comparison whose runs' bundles are those an earlier summarize compared is taken from
    ``cache`` (its runs' predictions are then not read at all)."""
    compared = comparisons(summary.runs, summary.system_of_run)
    by_id = {run.run_id: run for run in summary.runs}
    compare_of = {run_id: c for c in compared for run_id in c.run_ids}
    order = [by_id[r] for c in compared for r in c.run_ids] + [r for r in summary.runs if r.run_id not in compare_of]
    closes = {c.run_ids[-1]: c for c in compared}
    column_of = {run_id: col for col, ids in reversed(summary.column_runs.items()) for run_id in ids}
    figures_of: dict[str, list[dict[str, Any]]] = {}
    for f in figures:
        if f.get("run_id") is not None:
            figures_of.setdefault(f["run_id"], []).append(f)
    predictions: dict[str, dict[str, dict[str, Any]]] = {}
    run_links: dict[str, dict[str, str]] = {}
    compare_links: dict[str, dict[str, str]] = {}
    stored = _stored_comparisons(suite, compared, max_field_chars, cache)
    browsers = _browsers(
        [
            BundleJob(
                suite.run(run.run_id),
                w.site_dir / "data" / run.run_id,
                run.main_metric,
                max_field_chars,
                predictions=run.run_id in compare_of and stored[compare_of[run.run_id].id][1] is None,
                cache=cache,
            )
            for run in order
        ],
        browser_jobs(jobs, len(order)),
    )
    for run, data in zip(order, browsers, strict=True):
        comparison = compare_of.get(run.run_id)
        column = column_of.get(run.run_id, "")
        own = figures_of.get(run.run_id, [])
        _run_pages(w, suite, summary, run, data, own, judge_tables, comparison, column)
        if comparison is not None:
            predictions[run.run_id] = data.predictions
        note = f"{data.count} instances"
        if run.failed_requests:
            note += f"; error rate {run.error_rate:.1%}" + ("" if run.rankable else " (not ranked)")
        short = _name(summary, run)
        run_links[run.run_id] = {"href": f"runs/{run.run_id}.html", "text": short, "note": note}
        done = closes.get(run.run_id)
        if done is not None:
            compare_links[done.id] = _compare_page(w, summary, done, predictions, stored[done.id], cache)
            for run_id in done.run_ids:
                predictions.pop(run_id, None)
    links = [run_links[run.run_id] for run in summary.runs]
    w.page("runs.html", "list.html", "Runs", tables=[], intro="", links=links, figures=None)
    _compare_list(w, [compare_links[c.id] for c in compared])


RUNS_PER_BROWSER_JOB = 8
"""Below this many runs per extra process, the instance browsers are built in this process: a
worker's start (a fresh interpreter and its imports) costs more than it would save."""


def browser_jobs(jobs: int, runs: int) -> int:
    """How many processes build the instance browsers: ``jobs`` when given (1: this process alone),
    else one per CPU this process may use, at most one per :data:`RUNS_PER_BROWSER_JOB` runs."""
    if jobs > 0:
        return jobs
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, runs // RUNS_PER_BROWSER_JOB))


def _browsers(jobs_list: Sequence[BundleJob], jobs: int) -> Iterator[BrowserData]:
    """Each run's instance browser, put under its ``out_dir``, in the order of ``jobs_list``: from the
    run's browser bundle (:mod:`holistic.site.bundle`), built first when missing or stale.

    Each run's files are its own, so the runs can be done in worker processes (started fresh,
    not forked from this one): the files are the same whichever process writes them. A suite
    on an object store is built here, one run after the other."""
    if jobs <= 1 or any(not isinstance(j.reader.folder, Path) for j in jobs_list):
        yield from (bundle_into(job) for job in jobs_list)
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(bundle_into, jobs_list, chunksize=4)


def _run_pages(
    w: SiteWriter,
    suite: SuiteReader,
    summary: Summary,
    run: RunInfo,
    data: BrowserData,
    figures: list[dict[str, Any]],
    judge_tables: list[dict[str, Any]],
    comparison: Comparison | None,
    column: str,
) -> None:
    """The run page and the instance browser's page of ``run`` (its data already written: ``data``;
    ``figures``: the run's own plots; ``column``: the summary's column it is aggregated into, ``""`` if none)."""
    judges = summary.judges
    reader = suite.run(run.run_id)
    page = data.page
    haystack = (
        render_haystack(reader, w.site_dir / "plots", src_prefix="plots/", run_id=run.run_id)
        if page["haystack"]
        else HaystackReport()
    )
    system = summary.system_of_run.get(run.run_id, run.model)
    short = _name(summary, run)
    run_flags = judge_flags(summary, judges.judged_runs.get(run.run_id, []))
    judged = [
        t for t in (rows_of(t, column) for t in judge_tables) if t is not None and run.run_id in judges.judged_runs
    ]
    spec = dict(reader.spec)
    spec.setdefault("adapter", {})
    spec.setdefault("metrics", [])
    spec.setdefault("perturbations", [])
    spec.setdefault("metrics_not_applicable", {})
    run_figures = figures + haystack.figures
    reasoning_tables, reasoning_flags = page["reasoning"]["tables"], page["reasoning"]["flags"]
    w.page(
        f"runs/{run.run_id}.html",
        "run.html",
        f"Run: {short}",
        run=run,
        spec=spec,
        system=system,
        comparison=comparison,
        execution=reader.artifacts.get("execution"),
        stats_table=page["stats_table"],
        examples=page["examples"],
        n_instances=data.count,
        figures=[{**f, "src": "../" + f["src"]} for f in run_figures],
        extra_tables=haystack_tables(haystack) + reasoning_tables + judged,
        judge_flags=run_flags,
        reasoning_flags=reasoning_flags,
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


def _name(summary: Summary, run: RunInfo) -> str:
    """The run's name as the plan and helm-run's scores name it too."""
    return summary.name_of_run.get(run.run_id) or run_title(
        run.scenario, run.scenario_args, summary.system_of_run.get(run.run_id, run.model)
    )


COMPARE_CACHE = "compare_data"
"""The output cache's kind of the compare-systems views' data (their script files and count)."""
_COUNT = "count"

_Stored = tuple[str | None, dict[str, bytes] | None]
"""A comparison's key in the output cache (``None``: not cacheable) and its files found there."""


def _stored_comparisons(
    suite: SuiteReader, compared: list[Comparison], max_field_chars: int, cache: OutputCache | None
) -> dict[str, _Stored]:
    """Comparison id -> its key and its data as an earlier summarize wrote it: the data is made from
    the comparison and its runs' predictions alone, which their bundles' fingerprints decide."""
    out: dict[str, _Stored] = {}
    for c in compared:
        readers = [suite.run(r) for r in c.run_ids]
        prints = [fingerprint(r, main_metric_of(r.spec), max_field_chars) for r in readers]
        if cache is None or any(p is None for p in prints):
            out[c.id] = (None, None)
            continue
        key = key_of("compare", _compare_code(), c.id, c.systems, c.run_ids, c.main_metric, prints)
        found = cache.get(COMPARE_CACHE, key)
        sound = found is not None and _COUNT in found and found[_COUNT].isdigit()
        out[c.id] = (key, found if sound else None)
    return out


@functools.cache
def _compare_code() -> str:
    return code_fingerprint(write_comparison, js_json, fingerprint)


def _compare_data(
    out_dir: Path,
    c: Comparison,
    predictions: dict[str, dict[str, dict[str, Any]]],
    stored: _Stored,
    cache: OutputCache | None,
) -> int:
    """Write the comparison's data under ``out_dir`` (from the cache when it is there); its instance count."""
    key, found = stored
    if found is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, data in found.items():
            if name != _COUNT:
                (out_dir / Path(name).name).write_bytes(data)
        return int(found[_COUNT])
    count = write_comparison(out_dir, c, predictions)
    if cache is not None and key is not None:
        files = {p.name: p.read_bytes() for p in sorted(out_dir.iterdir())}
        cache.put(COMPARE_CACHE, key, {**files, _COUNT: str(count).encode("ascii")})
    return count


def _compare_page(
    w: SiteWriter,
    summary: Summary,
    c: Comparison,
    predictions: dict[str, dict[str, dict[str, Any]]],
    stored: _Stored,
    cache: OutputCache | None,
) -> dict[str, str]:
    """The page (and data) of one scenario and arguments run by two or more systems; returns its link."""
    judged_runs = summary.judges.judged_runs
    count = _compare_data(w.site_dir / "data" / "compare" / c.id, c, predictions, stored, cache)
    short = run_title(c.scenario, c.scenario_args, f"{len(c.systems)} systems")
    w.page(
        f"compare/{c.id}.html",
        "compare.html",
        f"Compare: {short}",
        comparison=c,
        count=count,
        judge_flags=judge_flags(summary, [j for r in c.run_ids for j in judged_runs.get(r, [])]),
    )
    return {"href": f"compare/{c.id}.html", "text": short, "note": f"{count} instances"}


def _compare_list(w: SiteWriter, compare_links: list[dict[str, str]]) -> None:
    """The list of the compare-systems pages."""
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
