"""Write a synthetic suite in the real results-store format, fast.

Used by tests and by the summarize/site benchmarks (``tools/bench/``). Values are
drawn from a seeded generator: each model has a skill, and an instance is
correct with that probability, so leaderboards have a known order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from holistic.core.hashing import canonical_json, short_hash, stable_seed
from holistic.core.types import CORRECT_TAG, Reference
from holistic.results.layout import RUN_SPEC_FILE, RUNS_DIR
from holistic.results.references import reference_row
from holistic.results.schemas import (
    INSTANCES_TABLE,
    PER_INSTANCE_STATS_TABLE,
    REQUESTS_TABLE,
    SCHEMA_VERSION,
    STATS_TABLE,
    arrow_schema,
)
from holistic.results.store import RunWriter, SuiteStore


@dataclass(frozen=True)
class FakeRun:
    scenario: str
    model: str
    args: Mapping[str, Any] = field(default_factory=dict)
    method: str = "generation"
    skill: float = 0.5
    """Probability that an instance is answered correctly."""
    num_instances: int = 100
    num_trials: int = 1
    latency: float = 0.2
    main_metric: str = "exact_match"
    with_requests: bool = False
    perturbations: Sequence[str] = ()
    labels: Sequence[str] = ()
    """A classification label set: each instance's references are every label, one of them
    correct (the first label is correct most often); empty for one free-text answer."""
    adapter: Mapping[str, Any] = field(default_factory=dict)
    """Adaptation fields beside the method (runs differing here are different systems)."""
    failed_requests: int = 0
    """Requests recorded as failed (of ``num_instances * num_trials``): the run is written as partial."""

    @property
    def run_id(self) -> str:
        spec = {"scenario": self.scenario, "model": self.model, "args": dict(self.args), "method": self.method}
        if self.adapter:
            spec["adapter"] = dict(self.adapter)
        return f"{self.scenario}_{self.model.replace('/', '_')}-{short_hash(canonical_json(spec))}"


def _table(name: str, columns: dict[str, list[Any]]) -> pa.Table:
    """A results table; nullable columns this generator does not fill are null."""
    schema = arrow_schema(name)
    n = len(next(iter(columns.values())))
    full = {f.name: columns.get(f.name, [None] * n) for f in schema}
    return pa.table(full, schema=schema)


def _join(run: FakeRun, suite: str, n: int) -> dict[str, list[Any]]:
    return {
        "suite": [suite] * n,
        "run_id": [run.run_id] * n,
        "run_name": [f"{run.scenario}:{canonical_json(dict(run.args))},model={run.model}"] * n,
        "scenario": [run.scenario] * n,
        "scenario_args": [canonical_json(dict(run.args))] * n,
        "model": [run.model] * n,
        "method": [run.method] * n,
    }


def write_fake_suite(out_dir: Path, suite: str, runs: Sequence[FakeRun], *, seed: int = 0) -> Path:
    """Write ``out_dir/suite`` with every run complete; returns the suite directory."""
    store = SuiteStore(out_dir, suite)
    store.check_writable()
    meta = {
        "schema_version": SCHEMA_VERSION,
        "package_version": "0.0.0",
        "suite": suite,
        "description": "fake",
        "spec_path": "fake.yaml",
        "spec_sha256": "0" * 64,
        "created": "2000-01-01T00:00:00Z",
        "updated": "2000-01-01T00:00:00Z",
        "runs": [
            {
                "run_id": r.run_id,
                "name": r.run_id,
                "scenario": r.scenario,
                "model": r.model,
                "method": r.method,
                "status": "complete",
                "error": None,
            }
            for r in runs
        ],
    }
    store.write_suite_json(meta)
    for run in runs:
        _write_run(store, suite, run, seed)
    return Path(out_dir) / suite


def rewrite_run(out_dir: Path, suite: str, run: FakeRun, *, seed: int) -> Path:
    """Write ``run`` of the suite again, as a rerun does (new results with ``seed``); returns its folder."""
    _write_run(SuiteStore(out_dir, suite), suite, run, seed)
    return Path(out_dir) / suite / RUNS_DIR / run.run_id


def _write_run(store: SuiteStore, suite: str, run: FakeRun, seed: int) -> None:
    writer = store.begin_run(run.run_id)
    rng = np.random.default_rng(stable_seed(seed, run.run_id))
    n, t = run.num_instances, run.num_trials
    spec = {
        "name": run.run_id,
        "run_id": run.run_id,
        "suite": suite,
        "scenario": {"name": run.scenario, "args": dict(run.args)},
        "adapter": {"method": run.method, **run.adapter},
        "model": run.model,
        "scenario_info": {"task": "classification" if run.labels else "generation"},
        "metrics": ["accuracy", "efficiency"],
        "perturbations": [{"name": p, "args": {}} for p in run.perturbations],
        "groups": [run.scenario],
        "main_metric": run.main_metric,
        "coverage": {
            "accuracy": "measured",
            "efficiency": "measured",
            "robustness": "measured" if run.perturbations else "not requested",
        },
    }
    writer.write_json(RUN_SPEC_FILE, spec)
    ids = [f"id{i:06d}" for i in range(n)]
    rows_inst = np.repeat(np.arange(n), t)
    trials = np.tile(np.arange(t), n)
    correct = (rng.random(n * t) < run.skill).astype(float)
    latency = rng.gamma(4.0, run.latency / 4.0, n * t)
    values: dict[str | None, np.ndarray] = {None: correct}
    if run.perturbations:
        worst = np.minimum(correct, (rng.random(n * t) < run.skill * 0.9).astype(float))
        values["robustness"] = worst
    latency_values: dict[str | None, np.ndarray] = {None: latency}
    pis_cols: dict[str, list[Any]] = {
        k: [] for k in ("instance_id", "trial", "metric", "split", "sub_split", "perturbation", "value")
    }
    for metric, arrs in ((run.main_metric, values), ("inference_denoised_runtime", latency_values)):
        for pert, arr in arrs.items():
            pis_cols["instance_id"] += [ids[i] for i in rows_inst]
            pis_cols["trial"] += trials.tolist()
            pis_cols["metric"] += [metric] * (n * t)
            pis_cols["split"] += ["test"] * (n * t)
            pis_cols["sub_split"] += [None] * (n * t)
            pis_cols["perturbation"] += [pert] * (n * t)
            pis_cols["value"] += arr.tolist()
    m = len(pis_cols["value"])
    writer.write_table(PER_INSTANCE_STATS_TABLE, _table(PER_INSTANCE_STATS_TABLE, {**_join(run, suite, m), **pis_cols}))
    stat_rows: list[dict[str, Any]] = []
    for metric, arrs in ((run.main_metric, values), ("inference_denoised_runtime", latency_values)):
        for pert, arr in arrs.items():
            per_trial = arr.reshape(n, t).mean(axis=0)
            boot = arr.reshape(n, t).mean(axis=1)
            idx = rng.integers(0, n, size=(200, n))
            reps = boot[idx].mean(axis=1)
            stat_rows.append(
                {
                    "metric": metric,
                    "split": "test",
                    "sub_split": None,
                    "perturbation": pert,
                    "count": n,
                    "sum": float(boot.sum()),
                    "sum_sq": float((boot**2).sum()),
                    "min": float(boot.min()),
                    "max": float(boot.max()),
                    "mean": float(per_trial.mean()),
                    "stddev": float(boot.std()),
                    "ci_low": float(np.percentile(reps, 2.5)),
                    "ci_high": float(np.percentile(reps, 97.5)),
                    "num_trials": t,
                    "trial_stddev": float(per_trial.std()) if t > 1 else None,
                }
            )
    k = len(stat_rows)
    cols = {key: [r[key] for r in stat_rows] for key in stat_rows[0]}
    writer.write_table(STATS_TABLE, _table(STATS_TABLE, {**_join(run, suite, k), **cols}))
    if run.with_requests:
        _write_instances_and_requests(writer, suite, run, ids, correct.reshape(n, t), rng)
    writer.complete(requests=n * t, failed_requests=min(run.failed_requests, n * t))


_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
]


def _write_instances_and_requests(
    writer: RunWriter, suite: str, run: FakeRun, ids: list[str], correct: np.ndarray, rng: np.random.Generator
) -> None:
    """instances.parquet and requests.parquet: one generation request per instance and trial."""
    n, t = correct.shape
    words = np.array(_WORDS)
    inputs = [" ".join(words[rng.integers(0, len(words), 30)]) + f" #{i}" for i in range(n)]
    if run.labels:  # the first label is correct twice as often as each other one
        weights = np.array([2.0] + [1.0] * (len(run.labels) - 1))
        picks = np.asarray(rng.choice(len(run.labels), size=n, p=weights / weights.sum()))
        answers = [str(run.labels[int(k)]) for k in picks.tolist()]
    else:
        answers = [str(words[rng.integers(0, len(words))]) for _ in range(n)]

    def references(answer: str) -> list[dict[str, Any]]:
        outputs = list(run.labels) or [answer]
        return [reference_row(Reference(o, (CORRECT_TAG,) if o == answer else ())) for o in outputs]

    inst_rows = [
        {
            "instance_id": ids[i],
            "role": "eval",
            "split": "test",
            "sub_split": None,
            "perturbation": None,
            "perturbation_args": None,
            "robustness": False,
            "fairness": False,
            "input": inputs[i],
            "references": references(answers[i]),
            "metadata": "{}",
        }
        for i in range(n)
    ]
    inst_cols = {k: [r[k] for r in inst_rows] for k in inst_rows[0]}
    writer.write_table(INSTANCES_TABLE, _table(INSTANCES_TABLE, {**_join(run, suite, n), **inst_cols}))
    header = "Answer the question with one word.\n\n" + "".join(
        f"Input: {' '.join(_WORDS[k : k + 12])}\nOutput: {_WORDS[k]}\n\n" for k in range(5)
    )
    rows = []
    for i in range(n):
        for trial in range(t):
            completion = " " + (answers[i] if correct[i, trial] else "wrong")
            rows.append(
                {
                    "instance_id": ids[i],
                    "split": "test",
                    "sub_split": None,
                    "perturbation": None,
                    "trial": trial,
                    "request_index": 0,
                    "reference_index": None,
                    "role": "main",
                    "kind": "generate",
                    "prompt": f"{header}Input: {inputs[i]}\nOutput:",
                    "messages": None,
                    "continuation": "",
                    "max_tokens": 10,
                    "temperature": 0.0,
                    "stop": ["\n"],
                    "num_completions": 1,
                    "top_k_logprobs": 0,
                    "trial_tag": "",
                    "train_ids": [f"train{k}" for k in range(5)],
                    "num_train_instances": 5,
                    "prompt_truncated": False,
                    "output_mapping": None,
                    "success": True,
                    "error": None,
                    "error_kind": None,
                    "completion": completion,
                    "logprob": -1.5,
                    "tokens": [],
                    "completions": [
                        {
                            "text": completion,
                            "logprob": -1.5,
                            "finish_reason": "stop",
                            "is_greedy": None,
                            "num_tokens": 2,
                        }
                    ],
                    "post_processed": [completion.strip()],
                    "parse_error": None,
                    "prompt_logprobs": None,
                    "has_logprobs": True,
                    "prompt_tokens": 120,
                    "completion_tokens": 2,
                    "latency_s": run.latency,
                    "cached": False,
                    "attempts": 1,
                    "cost_usd": 0.0,
                    "engine": "fake",
                    "cache_key": f"{ids[i]}-{trial}",
                }
            )
    cols = {k: [r[k] for r in rows] for k in rows[0]}
    writer.write_table(REQUESTS_TABLE, _table(REQUESTS_TABLE, {**_join(run, suite, len(rows)), **cols}))
