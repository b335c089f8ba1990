"""The pages of each run: its run page (every statistic, the in-context examples, its figures),
its instance browser, and the compare-systems views of the runs that two or more systems share."""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from holistic.core.naming import run_title
from holistic.core.threads import cpus
from holistic.results import RunReader, SuiteReader
from holistic.results.output_cache import OutputCache
from holistic.site.browser import BrowserData
from holistic.site.bundle import BundleJob, bundle_into
from holistic.site.bundle_reuse import Known, KnownScripts, Placed
from holistic.site.compare import Comparison, comparisons
from holistic.site.compare_data import CompareJob, Stored, compare_data, compare_into, stored_comparisons
from holistic.site.haystack import HaystackReport, haystack_tables, render_haystack
from holistic.site.page_reuse import PageReuse
from holistic.site.writer import SiteWriter, judge_flags, rows_of
from holistic.summarize.load import RunInfo
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
    totals: dict[str, Any] | None = None,
) -> None:
    """Every run's page and instance browser, the list of runs, and the compare-systems views
    (``totals``, when given, gets each run's request totals from its page facts).

    The runs are built one comparison at a time (its runs together, then the runs no other
    system shares), and each comparison's data is made as soon as its last run is built: in
    this process from the runs' predictions, which are then let go, or (with worker processes)
    by a worker that reads them from the runs' bundles itself. Either way a suite of thousands
    of runs never holds every run's predictions. A comparison whose runs' bundles are those an
    earlier summarize compared is taken from ``cache`` (its runs' predictions are then not read)."""
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
    take = None if w.reuse is None else functools.partial(_take_compare, w.reuse)
    stored = stored_comparisons(suite, compared, max_field_chars, cache, take)
    readers = {run.run_id: suite.run(run.run_id) for run in order}
    known = w.reuse.scripts if w.reuse is not None else None
    workers = browser_jobs(jobs, len(order)) if known is None else _build_jobs(jobs, known, readers)
    with _workers(workers, list(readers.values())) as pool:
        needed = {r for c in compared if not stored[c.id].ready for r in c.run_ids}
        bundle_jobs = [
            BundleJob(
                readers[run.run_id],
                w.site_dir / "data" / run.run_id,
                run.main_metric,
                max_field_chars,
                predictions=run.run_id in needed and pool is None,
                fallback_predictions=run.run_id in needed and pool is not None,
                cache=cache,
                known=_known(known, readers[run.run_id]),
            )
            for run in order
        ]
        predictions: dict[str, dict[str, dict[str, Any]]] = {}
        run_links: dict[str, dict[str, str]] = {}
        counts: dict[str, int | Future[int]] = {}
        for run, (data, placed) in zip(order, _placed(pool, bundle_jobs, 8 * workers), strict=True):
            comparison = compare_of.get(run.run_id)
            own, column = figures_of.get(run.run_id, []), column_of.get(run.run_id, "")
            _run_pages(w, suite, summary, run, data, own, judge_tables, comparison, column)
            if run.run_id in needed and not (pool is not None and placed is not None):
                predictions[run.run_id] = data.predictions
            run_links[run.run_id] = _run_link(summary, run, data)
            folder = readers[run.run_id].folder
            if known is not None and placed is not None and isinstance(folder, Path):
                known.note(run.run_id, folder, placed)
            if totals is not None and "requests" in data.page:
                totals[run.run_id] = data.page["requests"]
            done = closes.get(run.run_id)
            if done is not None:
                job = _compare_job(w, done, readers, by_id, predictions, stored[done.id], max_field_chars, cache)
                counts[done.id] = _compare_count(pool, job, stored[done.id])
                for run_id in done.run_ids:
                    predictions.pop(run_id, None)
        compare_links = []
        for c in compared:  # a worker's count is waited for here, once every run is built
            n = counts[c.id]
            count = n if isinstance(n, int) else n.result()
            key = stored[c.id].key
            if w.reuse is not None and key is not None and stored[c.id].taken is None:
                names = os.listdir(w.site_dir / _compare_folder(c))
                w.reuse.wrote_folder(_compare_folder(c), key, names, count)
            compare_links.append(_compare_page(w, summary, c, count))
    links = [run_links[run.run_id] for run in summary.runs]
    w.page("runs.html", "list.html", "Runs", tables=[], intro="", links=links, figures=None)
    _compare_list(w, compare_links)


def _run_link(summary: Summary, run: RunInfo, data: BrowserData) -> dict[str, str]:
    """The run's entry in the list of runs."""
    note = f"{data.count} instances"
    if run.failed_requests:
        note += f"; error rate {run.error_rate:.1%}" + ("" if run.rankable else " (not ranked)")
    return {"href": f"runs/{run.run_id}.html", "text": _name(summary, run), "note": note}


RUNS_PER_BROWSER_JOB = 8
"""Below this many runs per extra process, the instance browsers are built in this process: a
worker's start (a fresh interpreter and its imports) costs more than it would save."""


def browser_jobs(jobs: int, runs: int) -> int:
    """How many processes build the instance browsers: ``jobs`` when given (1: this process alone),
    else one per CPU this process may use, at most one per :data:`RUNS_PER_BROWSER_JOB` runs."""
    if jobs > 0:
        return jobs
    return max(1, min(cpus(), runs // RUNS_PER_BROWSER_JOB))


def _build_jobs(jobs: int, known: KnownScripts, readers: Mapping[str, RunReader]) -> int:
    """How many processes put the runs' browsers into the site when the last summarize's record is
    known: those of :func:`browser_jobs` for the runs whose bundle is not the one recorded (maybe to
    be built), at most one per such run; one (this process) when there is none: linking known scripts
    is no work for workers."""
    building = [r for r in readers.values() if not (isinstance(r.folder, Path) and known.current(r.run_id, r.folder))]
    return min(browser_jobs(jobs, len(building)), max(1, len(building)))


def _known(known: KnownScripts | None, reader: RunReader) -> Known:
    """The run's bundle scripts as the last summarize left them (none without a record)."""
    return known.of(reader.run_id, reader.folder) if known is not None and isinstance(reader.folder, Path) else {}


@contextlib.contextmanager
def _workers(jobs: int, readers: Sequence[RunReader]) -> Iterator[ProcessPoolExecutor | None]:
    """``jobs`` worker processes (started fresh, not forked from this one), or ``None``: everything in
    this process (one job, or a suite on an object store, built here one run after the other)."""
    if jobs <= 1 or any(not isinstance(r.folder, Path) for r in readers):
        yield None
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise


RUNS_PER_TASK = 4
"""Runs whose instance browsers one worker's task builds (fewer round trips between processes)."""


def _placed(
    pool: ProcessPoolExecutor | None, jobs_list: Sequence[BundleJob], ahead: int
) -> Iterator[tuple[BrowserData, Placed | None]]:
    """Each run's instance browser, put under its ``out_dir``, in the order of ``jobs_list``: from the
    run's browser bundle (:mod:`holistic.site.bundle`), built first when missing or stale; and the
    scripts placed from the run's bundle (``None``: not from its bundle).

    Each run's files are its own, so the runs can be done in worker processes: the files are the
    same whichever process writes them. Only ``ahead`` tasks are handed to the workers ahead of the
    runs this process has taken, so a comparison's job (handed over once its runs are built) is
    taken up soon, between runs, not after every run of the suite."""
    if pool is None:
        yield from (bundle_into(job) for job in jobs_list)
        return
    tasks = [list(jobs_list[k : k + RUNS_PER_TASK]) for k in range(0, len(jobs_list), RUNS_PER_TASK)]
    pending: deque[Future[list[tuple[BrowserData, Placed | None]]]] = deque()
    for task in tasks:
        pending.append(pool.submit(_bundle_task, task))
        if len(pending) > ahead:
            yield from pending.popleft().result()
    while pending:
        yield from pending.popleft().result()


def _bundle_task(jobs_list: list[BundleJob]) -> list[tuple[BrowserData, Placed | None]]:
    """One worker's task: a few runs' instance browsers."""
    return [bundle_into(job) for job in jobs_list]


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


def _compare_folder(c: Comparison) -> str:
    """The comparison's data folder, relative to the site's root."""
    return f"data/compare/{c.id}"


def _take_compare(reuse: PageReuse, c: Comparison, key: str) -> int | None:
    """The comparison's data taken from the old site when made from ``key``: its count (``None``: not taken)."""
    count = reuse.take_folder(_compare_folder(c), key)
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None


def _compare_job(
    w: SiteWriter,
    c: Comparison,
    readers: Mapping[str, RunReader],
    by_id: Mapping[str, RunInfo],
    predictions: Mapping[str, dict[str, dict[str, Any]]],
    stored: Stored,
    max_field_chars: int,
    cache: OutputCache | None,
) -> CompareJob:
    """The job that writes the comparison's data, with the predictions this process holds of its runs."""
    return CompareJob(
        w.site_dir / _compare_folder(c),
        c,
        tuple((readers[r], by_id[r].main_metric) for r in c.run_ids),
        max_field_chars,
        stored.key,
        cache,
        {r: predictions[r] for r in c.run_ids if r in predictions},
    )


def _compare_count(pool: ProcessPoolExecutor | None, job: CompareJob, stored: Stored) -> int | Future[int]:
    """Write the comparison's data: from the cache; else by a worker when every run's bundle is there to
    read (its instance count then comes later); else in this process, from the predictions it holds
    (all of them without workers; else the runs without a usable bundle, the others read from theirs)."""
    if stored.taken is not None:
        return stored.taken
    if stored.found is not None:
        return compare_data(job.out_dir, job.comparison, job.given, stored, job.cache)
    if pool is None or job.given:
        return compare_into(job)
    return pool.submit(compare_into, job)


def _compare_page(w: SiteWriter, summary: Summary, c: Comparison, count: int) -> dict[str, str]:
    """The page of one scenario and arguments run by two or more systems (its data written); returns its link."""
    judged_runs = summary.judges.judged_runs
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
