"""A holistic suite as HELM run folders: what ``helm-run`` (crfm-helm 0.5.16) would have written for it.

:func:`convert_suite` reads each run of a suite in holistic's results format (its Parquet
tables) and writes, under ``<output>/runs/<suite>/<run name>/``, the files HELM's
``helm-summarize`` reads — ``run_spec.json`` and ``stats.json`` (every run),
``scenario_state.json`` and ``per_instance_stats.json`` (the per-run display JSON it writes
by default: ``instances.json``, ``display_predictions.json``, ``display_requests.json``) —
and ``scenario.json``, which ``helm-run`` writes beside them, all as HELM serialises its
dataclasses (``asdict_without_nones``, two-space indent). :func:`write_schema` writes a
schema HELM accepts for those runs: one run group per scenario, a parent group over all of
them, and the accuracy, robustness and efficiency metric groups, so the leaderboard tables
are produced.

The values are holistic's: each request becomes a request state (its instance repeated in
it, as HELM does), each aggregate a ``Stat`` (``sum_sq`` is ``sum_squared``, the variance
is the square of the population standard deviation). A worst-case aggregate over
perturbations (holistic's ``robustness`` or ``fairness``) is HELM's stat with that
perturbation ``computed_on: worst``; the per-instance worst-case value becomes the
per-instance stat of the run's perturbed instance (``computed_on: perturbed``), from which
HELM's own worst case (``min`` of the original and the perturbed) gives the same value back.
A run is converted from its own files alone, so runs can be converted in parallel, each
in bounded memory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

SCENARIO_CLASS = "helm.benchmark.scenarios.scenario.Scenario"
"""The class named in each run's ``scenario_spec`` (``helm-summarize`` never instantiates it
when the schema names the run groups)."""

PERTURBATIONS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "typos": (
        "helm.benchmark.augmentations.typos_perturbation.TyposPerturbation",
        {"prob": 0.05},
        {"name": "typos", "robustness": True, "fairness": False, "computed_on": "perturbed", "prob": 0.05},
    ),
}
"""holistic's perturbation name → HELM's perturbation class, its arguments (HELM Classic's),
and the ``PerturbationDescription`` of an instance it perturbed."""

WORST_CASE = ("robustness", "fairness")
"""holistic's names for the worst case over the perturbations of a kind (HELM's too)."""

LOWER_IS_BETTER = ("runtime", "latency", "cost", "tokens")
"""A metric whose name contains one of these is better lower (HELM's efficiency metrics)."""

_REQUEST_COLUMNS = [
    "instance_id",
    "trial",
    "reference_index",
    "prompt",
    "temperature",
    "num_completions",
    "max_tokens",
    "stop",
    "num_train_instances",
    "prompt_truncated",
    "success",
    "error",
    "completions",
    "cached",
    "latency_s",
]


def run_name(scenario: str, args: Mapping[str, Any], model: str) -> str:
    """HELM's name of the run (its folder): ``scenario:arg=value,...,model=creator_model``."""
    parts = [f"{k}={v}" for k, v in args.items()] + [f"model={model}"]
    return f"{scenario}:{','.join(parts)}".replace("/", "_")


def perturbation(name: str, computed_on: str = "perturbed") -> dict[str, Any]:
    """HELM's ``PerturbationDescription`` (as serialised) for holistic's perturbation ``name``."""
    if name in WORST_CASE:
        return {
            "name": name,
            "robustness": name == "robustness",
            "fairness": name == "fairness",
            "computed_on": "worst",
        }
    if name not in PERTURBATIONS:
        raise ValueError(f"no HELM counterpart known for the perturbation {name!r} (known: {sorted(PERTURBATIONS)})")
    return {**PERTURBATIONS[name][2], "computed_on": computed_on}


def metric_name(metric: str, split: str | None, sub_split: str | None, pert: dict[str, Any] | None) -> dict[str, Any]:
    """HELM's ``MetricName``, its ``None`` fields left out."""
    out: dict[str, Any] = {"name": metric}
    if split is not None:
        out["split"] = split
    if sub_split is not None:
        out["sub_split"] = sub_split
    if pert is not None:
        out["perturbation"] = pert
    return out


def stat(
    name: dict[str, Any], count: int, total: float, sum_squared: float, low: float, high: float, mean: float, sd: float
) -> dict[str, Any]:
    """HELM's ``Stat`` as ``stats.json`` holds it (variance and standard deviation are the population's)."""
    return {
        "name": name,
        "count": count,
        "sum": total,
        "sum_squared": sum_squared,
        "min": low,
        "max": high,
        "mean": mean,
        "variance": sd * sd,
        "stddev": sd,
    }


def single(name: dict[str, Any], value: float) -> dict[str, Any]:
    """The ``Stat`` of one value (a per-instance stat)."""
    return stat(name, 1, value, value * value, value, value, value, 0.0)


def _dump(path: Path, obj: Any, indent: int | None) -> int:
    text = json.dumps(obj, indent=indent)
    path.write_text(text, encoding="utf-8")
    return len(text)


def _adapter_spec(spec: Mapping[str, Any], first: Mapping[str, Any], instances: int, trials: int) -> dict[str, Any]:
    """HELM's ``AdapterSpec`` for the run (its defaults where holistic has nothing to say)."""
    return {
        "method": spec["adapter"]["method"],
        "global_prefix": "",
        "global_suffix": "",
        "instructions": "",
        "input_prefix": "Input: ",
        "input_suffix": "\n",
        "reference_prefix": "A. ",
        "reference_suffix": "\n",
        "chain_of_thought_prefix": "",
        "chain_of_thought_suffix": "\n",
        "output_prefix": "Output: ",
        "output_suffix": "\n",
        "instance_prefix": "\n",
        "substitutions": [],
        "max_train_instances": first.get("num_train_instances") or 0,
        "max_eval_instances": instances,
        "num_outputs": first.get("num_completions") or 1,
        "num_train_trials": trials,
        "num_trials": 1,
        "sample_train": True,
        "model_deployment": spec["model"],
        "model": spec["model"],
        "temperature": first.get("temperature", 0.0),
        "max_tokens": first.get("max_tokens") or 0,
        "stop_sequences": list(first.get("stop") or []),
        "multi_label": False,
    }


def _run_spec(name: str, spec: Mapping[str, Any], adapter: dict[str, Any]) -> dict[str, Any]:
    perts = [p["name"] for p in spec.get("perturbations", [])]
    return {
        "name": name,
        "scenario_spec": {"class_name": SCENARIO_CLASS, "args": dict(spec["scenario"]["args"])},
        "adapter_spec": adapter,
        "metric_specs": [
            {
                "class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric",
                "args": {"names": [spec.get("main_metric", "exact_match")]},
            },
            {"class_name": "helm.benchmark.metrics.basic_metrics.BasicReferenceMetric", "args": {}},
            {"class_name": "helm.benchmark.metrics.basic_metrics.InstancesPerSplitMetric", "args": {}},
        ],
        "data_augmenter_spec": {
            "perturbation_specs": [
                {"class_name": PERTURBATIONS[p][0], "args": dict(PERTURBATIONS[p][1])} for p in perts
            ],
            "should_augment_train_instances": False,
            "should_include_original_train": False,
            "should_skip_unchanged_train": False,
            "should_augment_eval_instances": bool(perts),
            "should_include_original_eval": bool(perts),
            "should_skip_unchanged_eval": bool(perts),
            "seeds_per_instance": 1,
        },
        "groups": list(spec.get("groups") or [spec["scenario"]["name"]]),
    }


def _instance(row: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input": {"text": row["input"] or ""},
        "references": [{"output": {"text": r["output"]}, "tags": list(r["tags"] or [])} for r in row["references"]],
    }
    if row["split"] is not None:
        out["split"] = row["split"]
    if row["sub_split"] is not None:
        out["sub_split"] = row["sub_split"]
    out["id"] = row["instance_id"]
    return out


def _request_state(row: Mapping[str, Any], instance: dict[str, Any], model: str) -> dict[str, Any]:
    state: dict[str, Any] = {"instance": instance}
    if row["reference_index"] is not None:
        state["reference_index"] = row["reference_index"]
    state["train_trial_index"] = row["trial"]
    state["request"] = {
        "model_deployment": model,
        "model": model,
        "embedding": False,
        "prompt": row["prompt"] or "",
        "temperature": row["temperature"],
        "num_completions": row["num_completions"],
        "top_k_per_token": 1,
        "max_tokens": row["max_tokens"],
        "stop_sequences": list(row["stop"] or []),
        "echo_prompt": False,
        "top_p": 1,
        "presence_penalty": 0,
        "frequency_penalty": 0,
    }
    result: dict[str, Any] = {
        "success": bool(row["success"]),
        "embedding": [],
        "completions": [
            {"text": c["text"] or "", "logprob": c["logprob"] or 0.0, "tokens": []} for c in row["completions"] or []
        ],
        "cached": bool(row["cached"]),
        "request_time": row["latency_s"],
    }
    if row["error"] is not None:
        result["error"] = row["error"]
    state["result"] = result
    state["num_train_instances"] = row["num_train_instances"] or 0
    state["prompt_truncated"] = bool(row["prompt_truncated"])
    state["num_conditioning_tokens"] = 0
    return state


def _stats(run_dir: Path) -> list[dict[str, Any]]:
    rows = pq.read_table(run_dir / "stats.parquet").to_pylist()
    out = []
    for r in rows:
        pert = perturbation(r["perturbation"], "worst") if r["perturbation"] else None
        name = metric_name(r["metric"], r["split"], r["sub_split"], pert)
        sd = r["stddev"] or 0.0
        out.append(stat(name, r["count"], r["sum"], r["sum_sq"], r["min"], r["max"], r["mean"], sd))
    return out


def _per_instance_stats(run_dir: Path, perturbed: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One entry per (instance, trial, perturbation): the original instance's first, then its perturbed one's."""
    columns = ["instance_id", "trial", "metric", "split", "sub_split", "perturbation", "value"]
    table = pq.read_table(run_dir / "per_instance_stats.parquet", columns=columns)
    order: dict[str, int] = {}
    entries: dict[tuple[str, int, str | None], list[dict[str, Any]]] = {}
    for r in table.to_pylist():
        if r["value"] is None:
            continue
        pert_name = r["perturbation"]
        pert: dict[str, Any] | None = None
        if pert_name in WORST_CASE:
            if perturbed is None:
                raise ValueError(f"{run_dir.name}: a per-instance {pert_name} value, but the run has no perturbation")
            pert = perturbed
        elif pert_name is not None:
            pert = perturbation(pert_name)
        order.setdefault(r["instance_id"], len(order))
        name = metric_name(r["metric"], r["split"], r["sub_split"], pert)
        entries.setdefault((r["instance_id"], r["trial"], pert_name), []).append(single(name, float(r["value"])))
    out = []
    for iid, trial, pert_name in sorted(entries, key=lambda k: (order[k[0]], k[1], k[2] is not None, k[2] or "")):
        entry: dict[str, Any] = {"instance_id": iid}
        stats = entries[(iid, trial, pert_name)]
        if pert_name is not None:
            entry["perturbation"] = stats[0]["name"]["perturbation"]
        entry["train_trial_index"] = trial
        entry["stats"] = stats
        out.append(entry)
    return out


def _requests_and_instances(run_dir: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The run's requests (none without ``requests.parquet``) and HELM's instance of each instance id."""
    if not (run_dir / "requests.parquet").is_file():
        return [], {}
    requests = pq.read_table(run_dir / "requests.parquet", columns=_REQUEST_COLUMNS).to_pylist()
    columns = ["instance_id", "split", "sub_split", "input", "references"]
    rows = pq.read_table(run_dir / "instances.parquet", columns=columns).to_pylist()
    instances = {r["instance_id"]: _instance(r) for r in rows}
    missing = {r["instance_id"] for r in requests} - instances.keys()
    if missing:
        raise ValueError(f"{run_dir.name}: requests for instances not in instances.parquet: {sorted(missing)[:5]}")
    return requests, instances


def convert_run(run_dir: Path, runs_out: Path, indent: int | None = 2) -> tuple[str, str, str, int]:
    """Write HELM's folder for one holistic run, its JSON indented as ``helm-run`` does (``indent``
    2; None for no whitespace, the same structure in less room); returns (run name, group, main
    metric, bytes written)."""
    spec = json.loads((run_dir / "run_spec.json").read_text(encoding="utf-8"))
    model = spec["model"]
    name = run_name(spec["scenario"]["name"], spec["scenario"]["args"], model)
    perts = [p["name"] for p in spec.get("perturbations", [])]
    perturbed = perturbation(perts[0]) if perts else None  # a clear error for one HELM has no counterpart of
    requests, instances = _requests_and_instances(run_dir)
    trials = len({r["trial"] for r in requests}) or 1
    adapter = _adapter_spec(spec, requests[0] if requests else {}, len(instances), trials)
    run_spec = _run_spec(name, spec, adapter)
    folder = runs_out / name
    folder.mkdir(parents=True, exist_ok=True)
    states = [_request_state(r, instances[r["instance_id"]], model) for r in requests]
    size = _dump(folder / "run_spec.json", run_spec, indent)
    size += _dump(
        folder / "scenario.json",
        {"name": spec["scenario"]["name"], "description": "synthetic", "tags": [], "definition_path": ""},
        indent,
    )
    size += _dump(folder / "scenario_state.json", {"adapter_spec": adapter, "request_states": states}, indent)
    del states, requests, instances
    size += _dump(folder / "stats.json", _stats(run_dir), indent)
    size += _dump(folder / "per_instance_stats.json", _per_instance_stats(run_dir, perturbed), indent)
    return name, run_spec["groups"][0], spec.get("main_metric", "exact_match"), size


def _convert_one(job: tuple[Path, Path, int | None]) -> tuple[str, str, str, int]:
    return convert_run(*job)


def convert_suite(
    suite_dir: Path, output: Path, suite: str, jobs: int | None = None, indent: int | None = 2
) -> list[tuple[str, str, str, int]]:
    """Write HELM's folders of every run of ``suite_dir`` under ``output/runs/suite``, ``jobs``
    runs at a time (default: one per core), JSON indented by ``indent`` (see :func:`convert_run`);
    returns each run's (name, group, main metric, bytes)."""
    runs_out = output / "runs" / suite
    runs_out.mkdir(parents=True, exist_ok=True)
    run_dirs = sorted(p for p in (suite_dir / "runs").iterdir() if p.is_dir())
    if not run_dirs:
        raise ValueError(f"no runs under {suite_dir / 'runs'}")
    work = [(d, runs_out, indent) for d in run_dirs]
    workers = jobs or os.cpu_count() or 1
    if workers == 1:
        return [convert_run(*job) for job in work]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_convert_one, work, chunksize=8))


def _lower_is_better(metric: str) -> bool:
    return any(word in metric for word in LOWER_IS_BETTER)


def schema(groups: Iterable[tuple[str, str]], efficiency: Sequence[str], parent: str) -> dict[str, Any]:
    """HELM's schema for run groups ``(group, main metric)``: each with the accuracy, robustness
    and efficiency (``efficiency`` metrics) metric groups, and ``parent`` over all of them."""
    by_group = dict(groups)
    metrics = sorted({*by_group.values(), *efficiency})
    return {
        "metrics": [
            {"name": m, "display_name": m.replace("_", " ").capitalize(), "lower_is_better": _lower_is_better(m)}
            for m in metrics
        ],
        "perturbations": [
            {"name": "robustness", "display_name": "Robustness", "description": "Worst case over perturbations"},
            *({"name": p, "display_name": p.capitalize(), "description": p} for p in PERTURBATIONS),
        ],
        "metric_groups": [
            {
                "name": "accuracy",
                "display_name": "Accuracy",
                "metrics": [{"name": "${main_name}", "split": "${main_split}"}],
            },
            {
                "name": "robustness",
                "display_name": "Robustness",
                "metrics": [{"name": "${main_name}", "split": "${main_split}", "perturbation_name": "robustness"}],
            },
            {
                "name": "efficiency",
                "display_name": "Efficiency",
                "metrics": [{"name": m, "split": "${main_split}"} for m in efficiency],
            },
        ],
        "run_groups": [
            {
                "name": parent,
                "display_name": "Synthetic suite",
                "description": "Every scenario of the synthetic suite",
                "category": "All scenarios",
                "subgroups": sorted(by_group),
            },
            *(
                {
                    "name": g,
                    "display_name": g,
                    "description": f"Synthetic scenario {g}",
                    "metric_groups": ["accuracy", "robustness", "efficiency"],
                    "environment": {"main_name": main, "main_split": "test"},
                }
                for g, main in sorted(by_group.items())
            ),
        ],
    }


def write_schema(path: Path, converted: Iterable[tuple[str, str, str, int]], parent: str) -> Path:
    """The schema YAML for the converted runs (see :func:`schema`)."""
    groups = [(group, main) for _, group, main, _ in converted]
    efficiency = ["inference_denoised_runtime"]
    path.write_text(yaml.safe_dump(schema(groups, efficiency, parent), sort_keys=False), encoding="utf-8")
    return path


HELM_INPUTS = ("run_spec.json", "scenario.json", "scenario_state.json", "stats.json", "per_instance_stats.json")
"""The files of a run folder :func:`convert_run` writes (``helm-run``'s)."""


def folder_bytes(root: Path, names: Sequence[str] = ()) -> int:
    """The bytes of every file under ``root`` (only those named ``names``, if given)."""
    return sum(f.stat().st_size for f in _files(root) if not names or f.name in names)


def _files(root: Path) -> Iterator[Path]:
    for dirpath, _, names in os.walk(root):
        for n in names:
            yield Path(dirpath) / n
