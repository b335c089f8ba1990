"""Plots for the site (SVG, deterministic output).

- accuracy against efficiency per scenario, with the Pareto frontier, and the correlations of metric
  groups across model × scenario cells (both written directly as SVG by :mod:`holistic.site.svg_plot`;
  the other plots are drawn with matplotlib);
- calibration reliability diagrams per run (from the calibration metric's bins);
- spread of the main metric across trials per scenario and model;
- accuracy against reasoning tokens (and cost) for runs swept over reasoning settings
  (:mod:`holistic.site.reasoning`).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from holistic.core.naming import cut
from holistic.core.threads import thread_map
from holistic.results import RunReader, SuiteReader
from holistic.results.layout import table_file
from holistic.results.output_cache import (
    OutputCache,
    code_fingerprint,
    key_of,
    read_json_entry,
    run_file_sha256,
    write_json_entry,
)
from holistic.results.schemas import PER_INSTANCE_STATS_TABLE
from holistic.site.reasoning import budget_plots
from holistic.site.svg_plot import ONE_COLUMN, correlation_svg, pareto_svg
from holistic.summarize.load import RunInfo
from holistic.summarize.summary import Summary
from holistic.summarize.tables import anchor

_Cells = dict[tuple[str, str, str], tuple[float, float | None, float | None]]
"""(group, system, column) -> the cell's value and its 95% interval."""


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "holistic"
    plt.rcParams["text.parse_math"] = False  # names from data are text, never mathtext ("$", "^", "_")
    plt.rcParams["svg.fonttype"] = "none"
    return plt


class _LazyPyplot:
    """``matplotlib.pyplot``, imported when a figure is first drawn (a re-summarize whose figures are
    all taken from the output cache draws none)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_pyplot(), name)


def _save(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
    _pyplot().close(fig)


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of points not dominated (lower x and higher y are better), sorted by x."""
    front = []
    for i, (x, y) in enumerate(points):
        dominated = any((x2 <= x and y2 >= y) and (x2 < x or y2 > y) for j, (x2, y2) in enumerate(points) if j != i)
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def render_plots(
    suite: SuiteReader, summary: Summary, out_dir: Path, cache: OutputCache | None = None
) -> list[dict[str, Any]]:
    """Write every plot under ``out_dir``; returns figure descriptions (src relative to the site root).
    ``cache``: where the per-scenario plots drawn by an earlier summarize are found (by their points),
    and the ones drawn now are kept."""
    plt = _LazyPyplot()
    cells: _Cells = {
        (c["group"], c["model"], c["column"]): (c["value"], c.get("ci_low"), c.get("ci_high"))
        for c in summary.cells
        if c["value"] is not None
    }
    figures = _pareto_plots(summary, cells, out_dir, cache)
    figures += _reliability_plots(plt, suite, summary, out_dir)
    figures += _correlation_plot(summary, cells, out_dir)
    figures += _trial_spread_plots(plt, suite, summary, out_dir, cache)
    figures += budget_plots(plt, suite, summary, out_dir)
    return figures


def _figure(fig: Any, out_dir: Path, rel: str, alt: str, caption: str, **where: str) -> dict[str, Any]:
    """Save ``fig`` as ``rel`` (relative to the site root, ``out_dir``'s parent); its description.

    ``where`` places it: ``scenario`` (a scenario's page), ``run_id`` (a run's page), neither (the plots page).
    """
    _save(fig, out_dir.parent / rel)
    return {"src": rel, "alt": alt, "caption": caption, **where}


FIGURES_CACHE = "figure_svg"
"""The output cache's kind of the figures matplotlib draws and a re-summarize keeps (the trial
spreads), by what each is drawn from."""


def _cached_figure(
    cache: OutputCache | None, key: str, draw: Callable[[], Any], out_dir: Path, rel: str, **describe: str
) -> dict[str, Any]:
    """The figure ``draw()`` makes, saved as ``rel`` (see :func:`_figure`: ``describe`` is its alt text,
    caption and place); or the SVG an earlier summarize drew from the same ``key`` (its data and the
    code and matplotlib that draw it)."""
    target = out_dir.parent / rel
    found = cache.get(FIGURES_CACHE, key) if cache is not None else None
    if found is not None and _SVG in found:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(found[_SVG])
        return {"src": rel, **describe}
    _save(draw(), target)
    if cache is not None:
        cache.put(FIGURES_CACHE, key, {_SVG: target.read_bytes()})
    return {"src": rel, **describe}


@functools.cache
def _figure_code() -> str:
    """What decides a matplotlib figure's bytes besides its data: this module and matplotlib's version."""
    from importlib.metadata import version

    return key_of(code_fingerprint(_cached_figure, cut), version("matplotlib"))


def _pareto_plots(
    summary: Summary, cells: _Cells, out_dir: Path, cache: OutputCache | None = None
) -> list[dict[str, Any]]:
    """Accuracy against efficiency, per scenario: each system with its 95% intervals, and the Pareto frontier.

    Each plot is its own SVG, written from its own points (systems whose accuracy or latency is
    missing or not finite are left out; a scenario with none has no plot). A plot whose points an
    earlier summarize drew with the same code is taken from ``cache`` as it was drawn."""
    work: list[_ParetoJob] = []
    for col in summary.columns:
        pts, names, reach = [], [], []
        for m in summary.models:
            acc, eff = cells.get(("accuracy", m, col)), cells.get(("efficiency", m, col))
            if acc is not None and eff is not None and np.isfinite(acc[0]) and np.isfinite(eff[0]):
                pts.append((float(eff[0]), float(acc[0])))
                names.append(m)
                reach.append((_reach(eff), _reach(acc)))
        if pts:
            work.append((col, pts, names, reach, out_dir))
    keys = [key_of("pareto", _plot_code(), col, pts, names, reach) for col, pts, names, reach, _ in work]
    found = {k: cache.get(PARETO_CACHE, k) for k in keys} if cache is not None else {}
    todo = [job for job, k in zip(work, keys, strict=True) if found.get(k) is None]
    drawn = iter([_pareto_plot(job) for job in todo])
    figures = []
    for job, k in zip(work, keys, strict=True):
        hit = found.get(k)
        figure = _pareto_figure(job[0])
        target = out_dir.parent / figure["src"]
        if hit is not None and _SVG in hit:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(hit[_SVG])
        else:
            figure = next(drawn)
            if cache is not None:
                cache.put(PARETO_CACHE, k, {_SVG: target.read_bytes()})
        figures.append(figure)
    return figures


PARETO_CACHE = "pareto_plot"
"""The output cache's kind of the per-scenario accuracy-against-latency plots."""
_SVG = "plot.svg"


@functools.cache
def _plot_code() -> str:
    """What decides a plot's bytes besides its points: this module, the SVG writer, the names it cuts."""
    return key_of(code_fingerprint(_pareto_plot, pareto_svg, cut, anchor))


def _pareto_figure(col: str) -> dict[str, Any]:
    """The description of ``col``'s accuracy-against-latency plot (its ``src`` relative to the site root)."""
    caption = (
        f"{col}: accuracy against efficiency; each numbered point is a system (named in the key), its bars "
        "the 95% intervals (bootstrap over instances); the red line is the Pareto frontier."
    )
    return {
        "src": f"plots/pareto_{anchor(col)}.svg",
        "alt": f"Accuracy against latency for {col}",
        "caption": caption,
        "scenario": col,
    }


_ParetoJob = tuple[
    str, list[tuple[float, float]], list[str], list[tuple[tuple[float, float], tuple[float, float]]], Path
]
"""One scenario's plot: its column, points (latency, accuracy), systems, their intervals' reach, the plots folder."""


def _pareto_plot(job: _ParetoJob) -> dict[str, Any]:
    """Draw and save one scenario's accuracy-against-latency plot; its figure description."""
    col, pts, names, reach, out_dir = job
    width = LEGEND_NAME_WIDTH if len(pts) <= ONE_COLUMN else LEGEND_NAME_WIDTH // 2
    figure = _pareto_figure(col)
    svg = pareto_svg(
        cut(col, 60),
        ("mean latency per request (s)", "accuracy (main metric)"),
        pts,
        reach,
        [cut(name, width) for name in names],  # the key names each numbered point in full (cut only past ``width``)
        pareto_front(pts),
        figure["alt"],
    )
    target = out_dir.parent / figure["src"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(svg, encoding="utf-8")
    return figure


LEGEND_NAME_WIDTH = 80
"""Widest a system's name is written in a plot's key (longer names are cut in the middle); half
as wide when the key has two columns."""


def _reach(cell: tuple[float, float | None, float | None]) -> tuple[float, float]:
    """How far a cell's 95% interval reaches below and above its value (0 where it has none)."""
    value, low, high = cell
    below = value - low if low is not None and np.isfinite(low) else 0.0
    above = high - value if high is not None and np.isfinite(high) else 0.0
    return max(below, 0.0), max(above, 0.0)


def _reliability_plots(plt: Any, suite: SuiteReader, summary: Summary, out_dir: Path) -> list[dict[str, Any]]:
    """A reliability diagram per run that has the calibration metric's bins."""
    figures = []
    for run in summary.runs:
        bins = _reliability_bins(suite.run(run.run_id).artifacts)
        if not bins:
            continue
        fig, ax = plt.subplots(figsize=(3.6, 3.6))
        conf = [b["confidence"] for b in bins]
        accuracy = [b["accuracy"] for b in bins]
        ax.plot([0, 1], [0, 1], color="#999", lw=1, ls="--", label="perfect calibration")
        ax.plot(conf, accuracy, marker="o", color="#0b5cad", label="model")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("confidence")
        ax.set_ylabel("accuracy")
        name = summary.name_of_run.get(run.run_id, run.name)
        ax.set_title(cut(name, 56), fontsize=8)
        ax.legend(fontsize=7)
        caption = "Reliability diagram (equal-mass bins): accuracy against confidence."
        rel = f"plots/reliability_{run.run_id}.svg"
        figures.append(_figure(fig, out_dir, rel, f"Reliability diagram of {name}", caption, run_id=run.run_id))
    return figures


def _correlation_plot(summary: Summary, cells: _Cells, out_dir: Path) -> list[dict[str, Any]]:
    """The correlation of metric groups across model x scenario cells (with two groups and two models or
    more), written as SVG directly (:func:`holistic.site.svg_plot.correlation_svg`): no plotting library."""
    groups = sorted({g for g, _, _ in cells})
    if len(groups) < 2 or len(summary.models) < 2:
        return []
    keys = sorted({(m, c) for _, m, c in cells})
    matrix = np.array([[cells[(g, m, c)][0] if (g, m, c) in cells else np.nan for (m, c) in keys] for g in groups])
    corr = np.full((len(groups), len(groups)), np.nan)
    for i in range(len(groups)):
        for j in range(len(groups)):
            ok = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j])
            if ok.sum() >= 3 and np.std(matrix[i][ok]) > 0 and np.std(matrix[j][ok]) > 0:
                corr[i, j] = np.corrcoef(matrix[i][ok], matrix[j][ok])[0, 1]

    caption = "Correlations between metric groups across models and scenarios (cells with fewer than 3 shared values are blank)."
    rel, alt = "plots/metric_correlations.svg", "Correlation matrix of metric groups"
    target = out_dir.parent / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    title = "Pearson correlation across model × scenario cells"
    target.write_text(correlation_svg(title, groups, corr.tolist(), alt), encoding="utf-8")
    return [{"src": rel, "alt": alt, "caption": caption}]


def _trial_spread_plots(
    plt: Any, suite: SuiteReader, summary: Summary, out_dir: Path, cache: OutputCache | None = None
) -> list[dict[str, Any]]:
    """The spread of the main metric across trials, per scenario with more than one trial."""
    figures = []
    for col, per_model in sorted(_trial_means(suite, summary, cache).items()):
        if not any(len(v) > 1 for v in per_model.values()):
            continue
        caption = f"{col}: each dot is one trial's mean (sub-runs averaged); the red bar is the mean."
        key = key_of("trial spread", _figure_code(), col, sorted(per_model.items()))
        draw = functools.partial(_trial_spread, plt, col, per_model)
        rel, alt = f"plots/trials_{anchor(col)}.svg", f"Trial spread for {col}"
        figures.append(_cached_figure(cache, key, draw, out_dir, rel, alt=alt, caption=caption, scenario=col))
    return figures


def _trial_spread(plt: Any, col: str, per_model: dict[str, list[float]]) -> Any:
    """The figure of one scenario's spread across trials: each system's trial means and their mean."""
    models = sorted(per_model)
    fig, ax = plt.subplots(figsize=(max(3.5, 0.9 * len(models) + 1.5), 3.2))
    for i, m in enumerate(models):
        ys = per_model[m]
        ax.scatter([i] * len(ys), ys, color="#0b5cad", s=14)
        ax.hlines(float(np.mean(ys)), i - 0.25, i + 0.25, color="#b42318")
    ax.set_xticks(range(len(models)), [cut(m, 40) for m in models], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("main metric per trial")
    ax.set_title(f"{col}: spread across trials", fontsize=9)
    return fig


def _reliability_bins(data: dict[str, Any]) -> list[dict[str, float]]:
    """Find reliability-diagram bins (dicts with confidence, accuracy and count) in a run's artifacts."""

    def search(node: Any) -> list[dict[str, float]] | None:
        if (
            isinstance(node, list)
            and node
            and all(isinstance(x, dict) and {"confidence", "accuracy"} <= set(x) for x in node)
        ):
            return [x for x in node if x.get("count", 1)]
        if isinstance(node, dict):
            for key in sorted(node):
                found = search(node[key])
                if found:
                    return found
        return None

    return search(data.get("metrics", {})) or []


def _trial_means(
    suite: SuiteReader, summary: Summary, cache: OutputCache | None = None
) -> dict[str, dict[str, list[float]]]:
    """column -> model -> per-trial mean of the main metric (macro-averaged over sub-runs); every run's
    own trial means are kept in ``cache``, in one record, by its per-instance file's sha256 (one entry
    read, not one per run)."""
    acc: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    column = {rid: col for col, ids in summary.column_runs.items() for rid in ids}
    code = code_fingerprint(__name__, "holistic.summarize.trials")
    record = read_json_entry(cache, TRIALS_CACHE, _TRIALS_RECORD, {}) if cache is not None else {}
    record = record if isinstance(record, dict) else {}
    kept: dict[str, Any] = {}

    def means_of(run: RunInfo) -> Any:
        reader = suite.run(run.run_id)
        if not reader.has_table(PER_INSTANCE_STATS_TABLE) or not run.main_metric:
            return None
        sha = run_file_sha256(reader.manifest.files, table_file(PER_INSTANCE_STATS_TABLE))
        key = None if sha is None else key_of("trials", code, sha, run.main_metric)
        means = summary.trial_means.get(run.run_id)  # from the values the leaderboards read, if they did
        if means is None:
            means = record.get(key) if key is not None and _sound_means(record.get(key)) else None
        if means is None:
            means = _run_trial_means(reader, run.main_metric)
        if key is not None:
            kept[key] = means
        return means

    for run, means in zip(summary.runs, thread_map(means_of, summary.runs), strict=True):  # Arrow reads in parallel
        if means is None:
            continue
        for trial, mean in means:
            acc[(column.get(run.run_id, run.scenario), run.model)][int(trial)].append(float(mean))
    if cache is not None and kept != record:
        write_json_entry(cache, TRIALS_CACHE, _TRIALS_RECORD, kept)
    elif cache is not None:
        cache.keep(TRIALS_CACHE, _TRIALS_RECORD)
    out: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for (col, model), trials in acc.items():
        out[col][model] = [float(np.mean(v)) for _, v in sorted(trials.items())]
    return out


_TRIALS_RECORD = key_of("trial means of the runs", 1)
"""The output cache's key of the record of every run's trial means (a run's key -> its means)."""


def _sound_means(value: object) -> bool:
    """``[[trial, mean], ...]`` as :func:`_run_trial_means` returns them."""
    return isinstance(value, list) and all(
        isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v) for v in value
    )


TRIALS_CACHE = "trial_means"
"""The output cache's kind of a run's per-trial means of its main metric."""


def _run_trial_means(reader: RunReader, main_metric: str) -> list[list[float]]:
    """``[trial, mean of the main metric's original values]`` of the run, trials in the order first seen
    (:func:`~holistic.summarize.trials.trial_means_from` over the run's own file)."""
    import pyarrow as pa  # a suite's summary only

    from holistic.summarize.trials import trial_means_from

    t = reader.table(PER_INSTANCE_STATS_TABLE, ["trial", "metric", "perturbation", "value"])
    t = t.append_column("run_id", pa.array([reader.run_id], pa.string()).take(np.zeros(t.num_rows, np.int64)))
    return trial_means_from(t, [reader.run_id], [main_metric], {reader.run_id: main_metric}).get(reader.run_id, [])
