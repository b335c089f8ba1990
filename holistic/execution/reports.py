"""What an execution reports back: per run and per suite."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holistic.core.naming import RunFacts, cut, display_names
from holistic.core.types import RunSpec
from holistic.models.pricing import format_usd
from holistic.results.fs import Location
from holistic.results.layout import RUNS_DIR, SUITE_FILE, table_file
from holistic.results.schemas import STATS_TABLE

COMPLETE = "complete"
PARTIAL = "partial"
SKIPPED = "skipped"
FAILED = "failed"

EXIT_OK = 0
EXIT_RUN_FAILED = 1
"""Some run failed outright (bad arguments, missing data, a provider that cannot start)."""
EXIT_REQUESTS_FAILED = 3
"""Every run was written, but some requests failed: those runs are partial; rerun to retry the failures."""


@dataclass(frozen=True)
class Headline:
    """A run's headline score: its main metric on the evaluation split, with the 95% interval."""

    metric: str
    mean: float
    ci_low: float | None
    ci_high: float | None
    split: str
    count: int

    def text(self) -> str:
        interval = (
            f" [{self.ci_low:.3f}, {self.ci_high:.3f}]" if self.ci_low is not None and self.ci_high is not None else ""
        )
        return f"{self.metric} {self.mean:.3f}{interval} ({self.split}, n={self.count})"

    @staticmethod
    def pick(rows: Iterable[Mapping[str, Any]], main_metric: str | None) -> Headline | None:
        """The headline among stats rows (``metric``, ``split``, ``sub_split``, ``perturbation``,
        ``mean``, ``ci_low``, ``ci_high``, ``count``): the main metric, unperturbed, overall,
        on the test split (else valid)."""
        if not main_metric:
            return None
        found: dict[str, Mapping[str, Any]] = {}
        for row in rows:
            if row.get("metric") == main_metric and row.get("sub_split") is None and row.get("perturbation") is None:
                found.setdefault(str(row.get("split")), row)
        best = found.get("test") or found.get("valid")
        if best is None or best.get("mean") is None:
            return None
        return Headline(
            metric=main_metric,
            mean=float(best["mean"]),
            ci_low=None if best.get("ci_low") is None else float(best["ci_low"]),
            ci_high=None if best.get("ci_high") is None else float(best["ci_high"]),
            split=str(best.get("split")),
            count=int(best.get("count") or 0),
        )


@dataclass(frozen=True)
class RunReport:
    """The outcome of one run."""

    run_id: str
    name: str
    scenario: str
    model: str
    method: str
    status: str
    """``complete`` (written now), ``partial`` (written now, with failed requests: redone on a rerun),
    ``skipped`` (already complete) or ``failed``."""
    error: str | None = None
    instances: int = 0
    requests: int = 0
    cache_hits: int = 0
    """Distinct requests answered from the cache."""
    model_calls: int = 0
    """Distinct requests sent to the model."""
    failed_requests: int = 0
    unparseable: int = 0
    """Judges' verdicts no attempt could read (in the error rate; the run is not partial for them)."""
    folder: Location | None = None
    forward_calls: int = 0
    """Forward passes a local engine ran for this run (0 for API providers)."""
    forward_tokens: int = 0
    """Real tokens a local engine ran through the model for this run."""
    warnings: tuple[str, ...] = ()
    """What the user must know about how the run ran (e.g. zero-shot under ``--allow-zero-shot``);
    shown even with ``--quiet``."""
    headline: Headline | None = None
    """The run's main metric with its interval (``None``: failed, or nothing to headline)."""
    naming: RunFacts | None = None
    """What the run's name as people read it is made of (``None``: named by its run id)."""
    cost_usd: float = 0.0
    """What the run's requests and its judges' cost in US dollars (``artifacts.json``'s ``execution.cost_usd``)."""

    @classmethod
    def of(cls, run: RunSpec, status: str, **facts: Any) -> RunReport:
        """The report of ``run`` with ``status``: its names from the spec, the rest from ``facts``."""
        return cls(
            run_id=run.run_id,
            name=run.name,
            scenario=run.scenario.name,
            model=run.model,
            method=run.adapter.method,
            status=status,
            naming=RunFacts.of_run(run),
            **facts,
        )

    @property
    def error_rate(self) -> float:
        return (self.failed_requests + self.unparseable) / self.requests if self.requests else 0.0

    def suite_entry(self) -> dict[str, Any]:
        """The entry of this run in ``suite.json``."""
        return {
            "run_id": self.run_id,
            "name": self.name,
            "scenario": self.scenario,
            "model": self.model,
            "method": self.method,
            "status": COMPLETE if self.status == SKIPPED else self.status,
            "error": self.error,
            "requests": self.requests,
            "failed_requests": self.failed_requests,
            "error_rate": self.error_rate,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class Budget:
    """What ``--max-cost`` allowed and what this execution spent."""

    limit_usd: float
    spent_usd: float
    refused: int
    """Requests not sent because the budget was reached."""


@dataclass(frozen=True)
class SuiteReport:
    """The outcome of executing a suite."""

    suite: str
    suite_dir: Location
    cache_path: Path | None
    runs: tuple[RunReport, ...] = field(default_factory=tuple)
    budget: Budget | None = None
    """How ``--max-cost`` went (``None``: no budget)."""

    @property
    def cost_usd(self) -> float:
        """What the suite's runs cost, in US dollars (runs complete from before included)."""
        return sum(r.cost_usd for r in self.runs)

    def cost_lines(self) -> list[str]:
        """The suite's cost, and the budget's state when there was one."""
        lines = []
        if self.cost_usd > 0 or self.budget is not None:
            lines.append(f"cost: {format_usd(self.cost_usd)} for the suite's requests and judges (US dollars)")
        if self.budget is not None:
            b = self.budget
            line = f"budget --max-cost {format_usd(b.limit_usd)}: {format_usd(b.spent_usd)} spent by this execution"
            if b.refused:
                line += (
                    f"; REACHED, {b.refused} request(s) not sent: the suite is partial, rerun with a higher "
                    "--max-cost to finish it (answers already paid for come from the request cache)"
                )
            lines.append(line)
        return lines

    def count(self, status: str) -> int:
        return sum(1 for r in self.runs if r.status == status)

    @property
    def ok(self) -> bool:
        return self.count(FAILED) == 0 and self.count(PARTIAL) == 0

    @property
    def exit_code(self) -> int:
        """0 all complete; 1 some run failed; 3 some run has failed requests (see the constants)."""
        if self.count(FAILED):
            return EXIT_RUN_FAILED
        if self.count(PARTIAL):
            return EXIT_REQUESTS_FAILED
        return EXIT_OK

    def work_line(self) -> str:
        """One line: requests, cache hits, failures and the model work of the runs written now."""
        done = [r for r in self.runs if r.status in (COMPLETE, PARTIAL)]
        requests = sum(r.requests for r in done)
        if not requests:
            return ""
        calls = sum(r.model_calls for r in done)
        line = (
            f"requests: {requests} ({calls} sent to the model, {sum(r.cache_hits for r in done)} from the cache, "
            f"{sum(r.failed_requests for r in done)} failed)"
        )
        passes = sum(r.forward_calls for r in done)
        if passes:
            line += f"; {sum(r.forward_tokens for r in done)} tokens through the model in {passes} forward passes"
        return line

    def names(self, *, show_ids: bool = False) -> dict[str, str]:
        """run_id -> the run's name as the site and ``--plan`` show it (:mod:`holistic.core.naming`),
        cut to a terminal's width; ``show_ids`` adds the run id, which names the run's folder."""
        facts = [r.naming for r in self.runs if r.naming is not None]
        names = {run_id: cut(name) for run_id, name in display_names(facts).items()}
        return {
            r.run_id: f"{names[r.run_id]} ({r.run_id})"
            if show_ids and r.run_id in names
            else names.get(r.run_id, r.run_id)
            for r in self.runs
        }

    def warning_lines(self, *, show_ids: bool = False) -> list[str]:
        """One line per warning of a run, prefixed with its name."""
        names = self.names(show_ids=show_ids)
        return [f"WARNING {names[r.run_id]}: {w}" for r in self.runs for w in r.warnings]

    def quiet_line(self) -> str:
        """The one line ``--quiet`` prints: run counts and :meth:`work_line`."""
        runs = (
            f"suite {self.suite!r}: {self.count(COMPLETE)} runs written, {self.count(SKIPPED)} already complete, "
            f"{self.count(FAILED)} failed"
        )
        work = self.work_line()
        return f"{runs}; {work}" if work else runs

    def summary(self, *, show_ids: bool = False) -> str:
        """Human-readable lines: what was written where, and how to read it. Runs are named as the
        site and ``--plan`` name them; ``show_ids`` adds each run's id."""
        names = self.names(show_ids=show_ids)
        lines = [
            f"suite {self.suite!r}: {self.count(COMPLETE)} runs written, {self.count(SKIPPED)} already complete, "
            f"{self.count(FAILED)} failed"
            + (f", {self.count(PARTIAL)} partial (failed requests)" if self.count(PARTIAL) else ""),
        ]
        if self.work_line():
            lines.append(self.work_line())
        lines.extend(self.cost_lines())
        for r in self.runs:
            if r.status == FAILED:
                lines.append(f"  FAILED {names[r.run_id]}: {r.error}")
            elif r.status == PARTIAL:
                lines.append(
                    f"  PARTIAL {names[r.run_id]}: {r.failed_requests}/{r.requests} requests failed "
                    f"({r.error_rate:.1%}); rerun the same command to retry them"
                )
        lines.extend(f"  {line}" for line in self.warning_lines(show_ids=show_ids))
        scored = [r for r in self.runs if r.headline is not None]
        if scored:
            lines.append("scores (main metric, 95% bootstrap interval over instances):")
            width = max(len(names[r.run_id]) for r in scored)
            lines.extend(f"  {names[r.run_id]:<{width}}  {r.headline.text()}" for r in scored if r.headline is not None)
        lines.append(f"results: {self.suite_dir}/{SUITE_FILE} and {self.suite_dir}/{RUNS_DIR}/<run_id>/*.parquet")
        if self.cache_path is not None:
            lines.append(f"request cache: {self.cache_path}")
        if isinstance(self.suite_dir, Path):
            lines.append(
                "read a table of the whole suite: pyarrow.dataset.dataset(glob.glob("
                f"'{self.suite_dir}/{RUNS_DIR}/*/{table_file(STATS_TABLE)}'))"
            )
        else:
            lines.append(
                f"read a table of the whole suite: holistic.results.SuiteReader(URI).dataset_table({STATS_TABLE!r}) "
                f"with the URI of {self.suite_dir}"
            )
        return "\n".join(lines)
