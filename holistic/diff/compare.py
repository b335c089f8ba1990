"""Compare aligned runs: metric deltas with paired bootstrap intervals, flips, comparability."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import holistic.diff.imported as imported
from holistic.core.hashing import canonical_json, sha256_hex, stable_seed
from holistic.diff.align import Side, SideRun, align
from holistic.results.schemas import PER_INSTANCE_STATS_TABLE, REQUESTS_TABLE, STATS_TABLE

EVAL_SPLITS = ("test", "valid")
DECODING_COLUMNS = ("max_tokens", "temperature", "stop", "num_completions", "top_k_logprobs")
IGNORED_ADAPTER_FIELDS = frozenset({"max_eval_instances"})


DIAGNOSTIC_PREFIXES = ("platt_", "predicted_index", "num_", "max_prob", "finish_reason", "logprob")
"""Statistics that describe how a run ran rather than how well: listed after the others."""


def metric_rank(metric: str, main_metric: str) -> int:
    """0 for the run's main metric, 2 for a diagnostic statistic, 1 for the rest."""
    if metric == main_metric:
        return 0
    return 2 if metric.startswith(DIAGNOSTIC_PREFIXES) else 1


def short_args(args: Any, width: int = 24) -> str:
    """Scenario arguments as ``k=v`` pairs a person can read: a path by its file name, a
    long value cut to ``width`` characters, nested values summarised."""
    if isinstance(args, str):
        text = args
        try:
            args = json.loads(text)
        except ValueError:
            return text[:width]
    if not isinstance(args, dict):
        return ""
    parts = []
    for key, value in sorted(args.items()):
        if isinstance(value, dict):
            text = "{" + ",".join(sorted(str(k) for k in value))[: width - 2] + "}"
        elif isinstance(value, list):
            text = ",".join(str(v) for v in value)
        else:
            text = str(value)
            if "/" in text and key in ("path", "dataset", "file"):
                text = text.rstrip("/").rsplit("/", 1)[-1]
        parts.append(f"{key}={text if len(text) <= width else text[: width - 1] + '…'}")
    return " ".join(parts)


def run_label(scenario: str, args: Any, groups: Any, model: str) -> str:
    """``groups (short args) · model``: the name a diff shows for a run."""
    names = [str(g) for g in groups] if isinstance(groups, list) and groups else [scenario]
    shown = short_args(args)
    return f"{'/'.join(dict.fromkeys(names))}{f' ({shown})' if shown else ''} · {model}"


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    old: float | None
    new: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    n_shared: int
    significant: bool


@dataclass
class RunDiff:
    """The comparison of one aligned pair of runs."""

    old_run_id: str
    new_run_id: str
    scenario: str
    scenario_args: str
    model: str
    method: str
    comparable: bool
    causes: list[str] = field(default_factory=list)
    """Why the two runs are not like for like (prompt, examples, decoding, model, schema)."""
    metrics: list[MetricDelta] = field(default_factory=list)
    flips_to_wrong: list[str] = field(default_factory=list)
    flips_to_correct: list[str] = field(default_factory=list)
    instances_added: list[str] = field(default_factory=list)
    instances_removed: list[str] = field(default_factory=list)
    main_metric: str = "exact_match"
    notes: list[str] = field(default_factory=list)
    """Facts about how the runs were compared that do not make them incomparable (e.g. instances
    paired by content because an imported run names them differently)."""
    label: str = ""
    """How a person names the run: its groups (else scenario), short arguments and model."""

    @property
    def ordered(self) -> list[MetricDelta]:
        """The main metric first, then the other metrics, then diagnostic statistics; within
        each, significant changes first, the largest first."""
        return sorted(
            self.metrics,
            key=lambda m: (metric_rank(m.metric, self.main_metric), not m.significant, -abs(m.delta or 0.0), m.metric),
        )

    @property
    def largest_significant(self) -> float:
        sig = [abs(m.delta) for m in self.metrics if m.significant and m.delta is not None]
        return max(sig) if sig else 0.0


@dataclass
class DiffReport:
    old_dir: str
    new_dir: str
    old_schema_version: Any
    new_schema_version: Any
    runs: list[RunDiff]
    runs_added: list[str]
    runs_removed: list[str]

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "old": self.old_dir,
            "new": self.new_dir,
            "old_schema_version": self.old_schema_version,
            "new_schema_version": self.new_schema_version,
            "runs_added": self.runs_added,
            "runs_removed": self.runs_removed,
            "runs": [asdict(r) for r in self.runs],
        }

    def metric_rows(self) -> list[dict[str, Any]]:
        rows = []
        for r in self.runs:
            for m in r.metrics:
                rows.append(
                    {
                        "old_run_id": r.old_run_id,
                        "new_run_id": r.new_run_id,
                        "scenario": r.scenario,
                        "scenario_args": r.scenario_args,
                        "model": r.model,
                        "method": r.method,
                        "comparable": r.comparable,
                        "causes": "; ".join(r.causes),
                        "metric": m.metric,
                        "old": m.old,
                        "new": m.new,
                        "delta": m.delta,
                        "ci_low": m.ci_low,
                        "ci_high": m.ci_high,
                        "n_shared": m.n_shared,
                        "significant": m.significant,
                        "flips_to_wrong": len(r.flips_to_wrong),
                        "flips_to_correct": len(r.flips_to_correct),
                    }
                )
        return rows


def _read(run: SideRun, table: str, columns: list[str]) -> dict[str, list[Any]]:
    if not run.reader.has_table(table):
        return {c: [] for c in columns}
    data: dict[str, list[Any]] = run.reader.table(table, columns).to_pydict()
    n = len(next(iter(data.values()))) if data else 0
    for c in columns:
        data.setdefault(c, [None] * n)
    return data


def _instance_values(run: SideRun, rename: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """metric -> instance id -> value averaged over trials (unperturbed, eval split)."""
    d = _read(run, PER_INSTANCE_STATS_TABLE, ["instance_id", "metric", "split", "perturbation", "value"])
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for inst, metric, split, pert, value in zip(
        d["instance_id"], d["metric"], d["split"], d["perturbation"], d["value"], strict=True
    ):
        if pert is None and split in EVAL_SPLITS and value is not None:
            acc[metric][rename.get(inst, inst)].append(float(value))
    return {m: {i: float(np.mean(v)) for i, v in per.items()} for m, per in acc.items()}


def _stat_means(run: SideRun) -> dict[str, float]:
    d = _read(run, STATS_TABLE, ["metric", "split", "sub_split", "perturbation", "mean"])
    out: dict[str, float] = {}
    for split in reversed(EVAL_SPLITS):  # test overrides valid
        for metric, s, sub, pert, mean in zip(
            d["metric"], d["split"], d["sub_split"], d["perturbation"], d["mean"], strict=True
        ):
            if s == split and sub is None and pert is None and mean is not None:
                out[metric] = float(mean)
    return out


def _request_facts(run: SideRun, rename: Mapping[str, str]) -> dict[str, Any]:
    cols = [
        "instance_id",
        "trial",
        "request_index",
        "role",
        "perturbation",
        "prompt",
        "messages",
        "continuation",
        "train_ids",
        "engine",
        *DECODING_COLUMNS,
    ]
    d = _read(run, REQUESTS_TABLE, cols)
    prompts: dict[str, list[str]] = defaultdict(list)
    first_prompt: dict[str, tuple[Any, ...]] = {}
    examples: dict[str, list[str]] = defaultdict(list)
    decoding: set[str] = set()
    for i in range(len(d["instance_id"])):
        inst = d["instance_id"][i]
        key = f"{rename.get(inst, inst)}|{d['perturbation'][i]}"
        text = canonical_json(
            [d["trial"][i], d["request_index"][i], d["role"][i], d["prompt"][i], d["messages"][i], d["continuation"][i]]
        )
        prompts[key].append(text)
        order = (d["trial"][i], d["request_index"][i])
        if key not in first_prompt or order < first_prompt[key][:2]:
            first_prompt[key] = (*order, inst, d["prompt"][i] + d["continuation"][i])
        examples[key].append(canonical_json([d["trial"][i], d["train_ids"][i]]))
        decoding.add(canonical_json({c: d[c][i] for c in DECODING_COLUMNS}))
    return {
        "first_prompt": first_prompt,
        "prompts": {k: sha256_hex("\n".join(sorted(v))) for k, v in prompts.items()},
        "examples": {k: sha256_hex("\n".join(sorted(v))) for k, v in examples.items()},
        "decoding": sorted(decoding),
        "engines": sorted({e for e in d["engine"] if e}),
    }


def paired_bootstrap(old: np.ndarray, new: np.ndarray, *, seed: int, num: int = 1000) -> tuple[float, float]:
    """95% interval of mean(new - old) by resampling shared instances."""
    diffs = np.asarray(new, dtype=float) - np.asarray(old, dtype=float)
    if len(diffs) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(diffs), size=(num, len(diffs)))
    means = diffs[idx].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def compare_runs(old: SideRun, new: SideRun, *, seed: int = 0, num_bootstrap: int = 1000) -> RunDiff:
    diff = RunDiff(
        old_run_id=old.run_id,
        new_run_id=new.run_id,
        scenario=old.scenario,
        scenario_args=old.scenario_args,
        model=old.model,
        method=old.method,
        comparable=True,
        main_metric=str(new.spec.get("main_metric") or old.spec.get("main_metric") or "exact_match"),
        label=run_label(old.scenario, old.scenario_args, new.spec.get("groups") or old.spec.get("groups"), old.model),
    )
    rename = imported.instance_pairing(old, new) if old.imported or new.imported else imported.Pairing()
    if rename.note:
        diff.notes.append(rename.note)
    _comparability(diff, old, new, rename)

    old_vals, new_vals = _instance_values(old, rename.old), _instance_values(new, rename.new)
    old_means, new_means = _stat_means(old), _stat_means(new)
    unpaired = imported.logprob_metrics_unpaired(old, new, set(old_means) & set(new_means))
    if unpaired:
        diff.notes.append(unpaired.note)
    for metric in sorted(set(old_means) | set(new_means)):
        o, n = old_means.get(metric), new_means.get(metric)
        shared = sorted(set(old_vals.get(metric, {})) & set(new_vals.get(metric, {})))
        if metric in unpaired.metrics:
            shared = []
        lo = hi = None
        significant = False
        if len(shared) >= 2:
            a = np.array([old_vals[metric][i] for i in shared])
            b = np.array([new_vals[metric][i] for i in shared])
            lo, hi = paired_bootstrap(a, b, seed=stable_seed(seed, old.run_id, new.run_id, metric), num=num_bootstrap)
            significant = bool(lo > 0 or hi < 0)
        diff.metrics.append(
            MetricDelta(
                metric=metric,
                old=o,
                new=n,
                delta=None if o is None or n is None else n - o,
                ci_low=lo,
                ci_high=hi,
                n_shared=len(shared),
                significant=significant,
            )
        )
    main_old = old_vals.get(diff.main_metric, {})
    main_new = new_vals.get(diff.main_metric, {})
    for inst in sorted(set(main_old) & set(main_new)):
        was, now = main_old[inst] >= 0.5, main_new[inst] >= 0.5
        if was and not now:
            diff.flips_to_wrong.append(inst)
        elif now and not was:
            diff.flips_to_correct.append(inst)
    old_ids = {i for per in old_vals.values() for i in per}
    new_ids = {i for per in new_vals.values() for i in per}
    diff.instances_added = sorted(new_ids - old_ids)
    diff.instances_removed = sorted(old_ids - new_ids)
    return diff


def _comparability(diff: RunDiff, old: SideRun, new: SideRun, rename: imported.Pairing) -> None:
    fo, fn = _request_facts(old, rename.old), _request_facts(new, rename.new)
    shared = sorted(set(fo["prompts"]) & set(fn["prompts"]))
    across_tools = old.imported or new.imported
    # An imported HELM run records no in-context example ids: its prompts (which hold the
    # examples) are compared instead, and the adapter fields, named differently by each tool, are not.
    changed_examples = [] if across_tools else [k for k in shared if fo["examples"][k] != fn["examples"][k]]
    changed_prompts = [k for k in shared if fo["prompts"][k] != fn["prompts"][k]]
    if changed_examples:
        diff.causes.append(f"in-context examples changed for {len(changed_examples)} of {len(shared)} instances")
    prompt_only = [k for k in changed_prompts if k not in set(changed_examples)]
    if prompt_only:
        diff.causes.append(
            f"prompt text changed for {len(prompt_only)} of {len(shared)} instances; "
            + imported.first_difference(fo["first_prompt"][prompt_only[0]], fn["first_prompt"][prompt_only[0]])
        )
    if across_tools and not shared:
        diff.causes.append("no instance in common (neither by id nor by content), so no prompt could be compared")
    if fo["decoding"] != fn["decoding"]:
        diff.causes.append(
            "decoding parameters changed: " + imported.decoding_difference(fo["decoding"], fn["decoding"])
        )
    if across_tools:
        diff.comparable = not diff.causes
        return
    if fo["engines"] != fn["engines"]:
        diff.causes.append(f"model engine changed ({', '.join(fo['engines'])} -> {', '.join(fn['engines'])})")
    ident_old = old.spec.get("model_identity")
    ident_new = new.spec.get("model_identity")
    if ident_old is not None and ident_new is not None and canonical_json(ident_old) != canonical_json(ident_new):
        diff.causes.append("model revision or weights changed")
    ao = {k: v for k, v in old.adapter.items() if k not in IGNORED_ADAPTER_FIELDS}
    an = {k: v for k, v in new.adapter.items() if k not in IGNORED_ADAPTER_FIELDS}
    changed_fields = sorted(k for k in set(ao) | set(an) if canonical_json(ao.get(k)) != canonical_json(an.get(k)))
    if changed_fields:
        diff.causes.append("adaptation changed: " + ", ".join(changed_fields))
    diff.causes.extend(judge_changes(old.spec, new.spec))
    diff.comparable = not diff.causes


def _judges(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(j.get("name")): j for j in spec.get("judges") or [] if isinstance(j, dict)}


def judge_changes(old_spec: dict[str, Any], new_spec: dict[str, Any]) -> list[str]:
    """Why two runs' judged scores are not comparable: a judge is part of the protocol, so
    another judge, another prompt version or another verdict rule each changes it."""
    old, new = _judges(old_spec), _judges(new_spec)
    causes: list[str] = []
    old_models = sorted(str(j.get("model")) for j in old.values())
    new_models = sorted(str(j.get("model")) for j in new.values())
    if old_models != new_models:
        causes.append(f"judge changed ({', '.join(old_models) or 'none'} -> {', '.join(new_models) or 'none'})")
        return causes
    by_model_old = {str(j.get("model")): j for j in old.values()}
    for model, j in sorted({str(j.get("model")): j for j in new.values()}.items()):
        was = by_model_old[model]
        if was.get("prompt_sha256") != j.get("prompt_sha256"):
            causes.append(
                f"judge prompt changed for {model} ({str(was.get('prompt_sha256'))[:12]} -> "
                f"{str(j.get('prompt_sha256'))[:12]})"
            )
        if canonical_json(was.get("rule")) != canonical_json(j.get("rule")):
            causes.append(f"judge verdict rule changed for {model}")
        rest = [k for k in ("stat", "max_tokens", "temperature", "retries") if was.get(k) != j.get(k)]
        if rest:
            causes.append(f"judge settings changed for {model}: {', '.join(rest)}")
    return causes


def diff_suites(old: Side, new: Side, *, seed: int = 0, num_bootstrap: int = 1000) -> DiffReport:
    alignment = imported.pair_across_tools(align(old, new))
    runs = [compare_runs(o, n, seed=seed, num_bootstrap=num_bootstrap) for o, n in alignment.pairs]
    sv_old, sv_new = old.meta.get("schema_version"), new.meta.get("schema_version")
    if sv_old != sv_new:
        for r in runs:
            r.causes.append(f"results schema_version changed ({sv_old} -> {sv_new})")
            r.comparable = False
    runs.sort(key=lambda r: (-r.largest_significant, r.scenario, r.scenario_args, r.model, r.old_run_id))
    return DiffReport(
        old_dir=str(old.suite_dir),
        new_dir=str(new.suite_dir),
        old_schema_version=sv_old,
        new_schema_version=sv_new,
        runs=runs,
        runs_added=[r.run_id for r in alignment.added],
        runs_removed=[r.run_id for r in alignment.removed],
    )


def dump_json(report: DiffReport) -> str:
    def clean(v: Any) -> Any:
        if isinstance(v, float) and v != v:
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    return json.dumps(clean(report.to_json()), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
