"""Reasoning models on the site: a run's reasoning table (the setting asked, what the provider
reported, the thoughts that did not finish), the flag of a provider that ignored the setting,
and the budget curve of a run swept over efforts or budgets.

The flag (:func:`ignored_setting`) is raised when the provider reported a setting other than the
one asked (``reasoning_reported``), when a setting that asks for thinking brought back no
thought and no reasoning token on any request, or when thinking turned off (``effort: none``)
brought thoughts back.

The budget curve: per scenario (and its arguments) and model, each run that differs only in its
reasoning setting is a point at its mean reasoning tokens per request (and, where prices are
known, its mean cost per instance), its accuracy being the run's main metric; the bars are the
95% intervals of both (bootstrap over instances, as the stats give them).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from holistic.core.hashing import short_hash
from holistic.core.naming import cut
from holistic.results import RunReader, SuiteReader
from holistic.results.schemas import REQUESTS_TABLE, STATS_TABLE
from holistic.summarize.tables import Cell, Column, Table, anchor

if TYPE_CHECKING:  # the suite-level plots only: a run's own page (built as the run ends) needs neither
    from holistic.summarize.load import RunInfo
    from holistic.summarize.summary import Summary

_REQUEST_COLUMNS = [
    "instance_id",
    "trial",
    "kind",
    "reasoning_tokens",
    "reasoning_unfinished",
    "reasoning_effort",
    "reasoning_budget",
    "reasoning_reported",
]
MAX_LISTED = 500
"""Unfinished thoughts listed on a run page (the count says how many there are in all)."""

_Point = tuple[float, float, float, float, float, float]
"""x, its interval's low and high, y, its interval's low and high."""


def _requests(reader: RunReader) -> list[dict[str, Any]]:
    if not reader.has_table(REQUESTS_TABLE) or "reasoning_tokens" not in reader.table_columns(REQUESTS_TABLE):
        return []
    return [r for r in reader.table(REQUESTS_TABLE, _REQUEST_COLUMNS).to_pylist() if r.get("kind") == "generate"]


def asked(spec: dict[str, Any]) -> dict[str, Any]:
    """The run's reasoning setting (``{}`` without one)."""
    setting = (spec.get("adapter") or {}).get("reasoning")
    return dict(setting) if isinstance(setting, dict) else {}


def ignored_setting(setting: dict[str, Any], requests: list[dict[str, Any]]) -> str | None:
    """Why the provider seems to have ignored the run's reasoning setting (``None``: nothing says so)."""
    if not setting or not requests:
        return None
    wanted = ", ".join(f"{k}={v}" for k, v in sorted(setting.items()) if k == "effort")
    reported = [r["reasoning_reported"] for r in requests if r.get("reasoning_reported")]
    other = [text for text in reported if wanted and wanted not in text]
    if other:
        return (
            f"the provider reported {sorted(set(other))[0]} on {len(other)} of {len(requests)} requests, "
            f"which asked {wanted}: it did not apply the setting"
        )
    thought = sum(1 for r in requests if (r.get("reasoning_tokens") or 0) > 0)
    off = setting.get("effort") == "none" and "budget_tokens" not in setting
    if off and thought:
        return (
            f"thinking was turned off (effort none), yet {thought} of {len(requests)} requests came back with thoughts"
        )
    if not off and setting.get("budget_tokens") != 0 and not thought:
        return (
            f"no request of {len(requests)} came back with a thought or reasoning tokens although the run asked "
            f"{json.dumps(setting, sort_keys=True)}: the provider may have ignored the setting"
        )
    return None


def run_reasoning(reader: RunReader) -> tuple[list[dict[str, Any]], list[str]]:
    """The run page's reasoning tables and flags (nothing for a run without a setting or thoughts)."""
    setting = asked(reader.spec)
    requests = _requests(reader)
    thoughts = [r for r in requests if (r.get("reasoning_tokens") or 0) > 0 or r.get("reasoning_unfinished")]
    if not setting and not thoughts:
        return [], []
    unfinished = [r for r in requests if r.get("reasoning_unfinished")]
    reported = sorted({r["reasoning_reported"] for r in requests if r.get("reasoning_reported")})
    tokens = [float(r.get("reasoning_tokens") or 0) for r in requests]
    facts = (
        ("Setting asked", json.dumps(setting, sort_keys=True) if setting else "none (the model's default)"),
        ("Setting the provider reported", ", ".join(reported) or "none reported"),
        ("Requests with thoughts", f"{len(thoughts)} of {len(requests)}"),
        ("Mean reasoning tokens per request", f"{sum(tokens) / len(tokens):.1f}" if tokens else "–"),
        ("Unfinished thoughts (not answered)", f"{len(unfinished)} of {len(requests)}"),
    )
    summary = Table(
        id="reasoning",
        title="Reasoning",
        columns=(Column("Fact"), Column("Value")),
        rows=tuple((Cell(k), Cell(v)) for k, v in facts),
        description="The thoughts are kept apart from the answer; only the answer is scored. An unfinished "
        "thought (max_tokens reached before an answer) counts as not answered (reasoning_unfinished_rate).",
    )
    tables = [summary.to_json()]
    if unfinished:
        listed = Table(
            id="reasoning_unfinished",
            title=f"Instances whose thought did not finish ({len(unfinished)})",
            columns=(
                Column("Instance"),
                Column("Trial", numeric=True, digits=0),
                Column("Reasoning tokens", numeric=True, digits=0),
            ),
            rows=tuple(
                (Cell(str(r["instance_id"])), Cell(float(r["trial"] or 0)), Cell(float(r.get("reasoning_tokens") or 0)))
                for r in unfinished[:MAX_LISTED]
            ),
            description="These requests reached max_tokens (or the server stopped them) while the model was still "
            "thinking: no answer, nothing read from the thought."
            + (f" The first {MAX_LISTED} are listed." if len(unfinished) > MAX_LISTED else ""),
        )
        tables.append(listed.to_json())
    flag = ignored_setting(setting, requests)
    return tables, [flag] if flag else []


# -- the budget curve --------------------------------------------------------------------------


def _stat(reader: RunReader, name: str) -> tuple[float, float, float] | None:
    """The run's mean of ``name`` (unperturbed, first split by name) and its 95% interval."""
    if not name or not reader.has_table(STATS_TABLE):
        return None
    rows = [
        r
        for r in reader.table(STATS_TABLE, ["metric", "split", "perturbation", "mean", "ci_low", "ci_high"]).to_pylist()
        if r["metric"] == name and not r.get("perturbation") and r.get("mean") is not None
    ]
    if not rows:
        return None
    row = sorted(rows, key=lambda r: (r.get("split") != "test", r.get("split") or ""))[0]
    mean = float(row["mean"])
    low = float(row["ci_low"]) if row.get("ci_low") is not None else mean
    high = float(row["ci_high"]) if row.get("ci_high") is not None else mean
    return mean, low, high


def _curves(suite: SuiteReader, summary: Summary) -> dict[str, dict[str, list[tuple[str, dict[str, Any]]]]]:
    """Scenario (with its arguments) -> model -> its runs with a reasoning setting, when two or more."""
    out: dict[str, dict[str, list[tuple[str, dict[str, Any]]]]] = defaultdict(lambda: defaultdict(list))
    for run in summary.runs:
        setting = asked(run.spec)
        if not setting:
            continue
        args = json.dumps(run.scenario_args, sort_keys=True, default=str)
        others = {k: v for k, v in (run.spec.get("adapter") or {}).items() if k not in ("reasoning", "seed")}
        key = f"{run.scenario} {args} {json.dumps(others, sort_keys=True, default=str)}"
        out[key][run.model].append((run.run_id, setting))
    return {k: {m: runs for m, runs in models.items() if len(runs) > 1} for k, models in out.items()}


def _points(suite: SuiteReader, run: RunInfo, x_name: str) -> _Point | None:
    reader = suite.run(run.run_id)
    x, y = _stat(reader, x_name), _stat(reader, run.main_metric or "")
    if x is None or y is None or not all(np.isfinite(v) for v in (*x, *y)):
        return None
    return (*x, *y)


def budget_plots(plt: Any, suite: SuiteReader, summary: Summary, out_dir: Path) -> list[dict[str, Any]]:
    """The budget curves (see the module docstring), one figure per scenario swept over reasoning settings."""
    by_id = {run.run_id: run for run in summary.runs}
    figures = []
    for key, models in sorted(_curves(suite, summary).items()):
        if not models:
            continue
        axes_wanted = [("num_reasoning_tokens", "mean reasoning tokens per request")]
        priced = any((_stat(suite.run(r), "cost_usd") or (0.0,))[0] > 0 for runs in models.values() for r, _ in runs)
        if priced:
            axes_wanted.append(("cost_usd", "mean cost per instance (US$)"))
        fig, axes = plt.subplots(1, len(axes_wanted), figsize=(5.2 * len(axes_wanted), 3.8), squeeze=False)
        scenario = by_id[next(iter(models.values()))[0][0]].scenario
        drawn = 0
        for ax, (x_name, label) in zip(axes[0], axes_wanted, strict=True):
            for k, (model, runs) in enumerate(sorted(models.items())):
                found = ((_points(suite, by_id[r], x_name), s) for r, s in runs)
                pts = sorted(((p, s) for p, s in found if p), key=lambda item: (item[0][0], item[0][3]))
                if not pts:
                    continue
                xs = [p[0] for p, _ in pts]
                ys = [p[3] for p, _ in pts]
                bars = ax.errorbar(
                    xs,
                    ys,
                    xerr=[[p[0] - p[1] for p, _ in pts], [p[2] - p[0] for p, _ in pts]],
                    yerr=[[p[3] - p[4] for p, _ in pts], [p[5] - p[3] for p, _ in pts]],
                    fmt="-o",
                    capsize=2.5,
                    lw=1,
                    label=cut(model, 60),
                )
                bars.lines[0].set_gid(f"budget_{x_name}_{k + 1}")
                for p, setting in pts:
                    text = ",".join(str(v) for _, v in sorted(setting.items()))
                    ax.annotate(text, (p[0], p[3]), xytext=(3, 3), textcoords="offset points", fontsize=7)
                drawn += 1
            ax.set_xlabel(label)
            ax.set_ylabel("accuracy (main metric)")
            ax.legend(fontsize=7, loc="lower right")
        if not drawn:
            _pyplot_close(plt, fig)
            continue
        fig.suptitle(cut(f"{scenario}: accuracy against thinking", 70), fontsize=10)
        rel = f"plots/budget_{anchor(scenario)}_{short_hash(key)}.svg"
        (out_dir.parent / rel).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out_dir.parent / rel, format="svg", metadata={"Date": None}, bbox_inches="tight")
        _pyplot_close(plt, fig)
        first = next(iter(models.values()))[0][0]
        column = next((c for c, ids in summary.column_runs.items() if first in ids), scenario)
        figures.append(
            {
                "src": rel,
                "alt": f"Accuracy against reasoning tokens for {scenario}",
                "caption": f"{scenario}: accuracy against mean reasoning tokens per request"
                + (" and against cost" if priced else "")
                + ", one line per model through its reasoning settings (each point labelled with its setting); "
                "the bars are the 95% intervals (bootstrap over instances).",
                "scenario": column,
            }
        )
    return figures


def _pyplot_close(plt: Any, fig: Any) -> None:
    plt.close(fig)
