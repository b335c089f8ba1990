"""``helm-import``: HELM run folders into an ordinary holistic suite.

For each HELM run folder (see :mod:`holistic.helm.imports.layout`) the import writes one
holistic run, through the results store like ``helm-run`` does:

- ``instances`` and ``requests`` from ``scenario_state.json``, streamed (bounded memory,
  :mod:`holistic.helm.imports.stream`) and written in batches;
- ``per_instance_stats`` from ``per_instance_stats.json``, streamed the same way;
- ``stats`` from ``stats.json`` with HELM's count, sum, sum of squares, min, max, mean and
  standard deviation exactly as HELM wrote them, plus holistic's bootstrap interval of the
  mean computed from the per-instance values (as for a native run; none where HELM has no
  per-instance values for that stat, e.g. calibration);
- ``run_spec.json`` with holistic's fields (scenario, args, method, model, groups, main
  metric) and ``imported_from``: HELM's run spec name and full run spec, the layout
  recognised, the HELM version when given, and the size and sha256 of every file read;
- ``artifacts.json`` with what could not be mapped (field paths kept in the ``raw``
  columns, unknown stat names, an unmapped scenario).

All the checks that need no writing (every folder is a HELM run, every file is there,
every ``run_spec.json`` and ``stats.json`` parses, no unknown stat name) run before the
suite is touched. A run is marked complete only after every one of its files is written;
a run that fails midway is removed, so nothing half-imported looks complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holistic.core.errors import HolisticError, StoreError
from holistic.core.hashing import canonical_json, short_hash
from holistic.core.types import MetricName
from holistic.core.untrusted import check_type, terminal_safe
from holistic.helm.imports import convert
from holistic.helm.imports.checks import check_names, check_untrusted_paths
from holistic.helm.imports.intervals import Interval, intervals_from_parquet
from holistic.helm.imports.layout import (
    PER_INSTANCE_STATS,
    RUN_SPEC,
    SCENARIO,
    SCENARIO_STATE,
    STATS,
    RunSpecFacts,
    check_files,
    find_run_folders,
    run_spec_facts,
)
from holistic.helm.imports.names import scenario_name_and_args, stat_info
from holistic.helm.imports.stream import HelmFileError, JsonStream, read_json
from holistic.results.layout import ARTIFACTS_FILE, RUN_SPEC_FILE
from holistic.results.manifest import file_sha256
from holistic.results.schemas import (
    INSTANCES_TABLE,
    PER_INSTANCE_STATS_TABLE,
    REQUESTS_TABLE,
    STATS_TABLE,
    table_from_rows,
)
from holistic.results.store import RunWriter, SuiteStore

BATCH_ROWS = 2000
"""Rows held before a batch is written (requests and per-instance stats)."""


@dataclass(frozen=True)
class ImportOptions:
    """What ``helm-import`` is asked to do (its command-line options)."""

    output_dir: Path
    """Where suites live; the import writes ``output_dir/suite``."""
    suite: str
    force: bool = False
    """Import into an existing suite: runs of the same HELM run spec are replaced, others kept."""
    keep_unknown_stats: bool = False
    """Import stat names holistic does not know (under HELM's names, no category) instead of stopping."""
    model_map: Mapping[str, str] = field(default_factory=dict)
    """HELM model (or deployment) name -> holistic model name."""
    helm_version: str | None = None
    """The HELM version that wrote the runs, recorded with them (HELM's folders do not say)."""
    seed: int = 0
    """Seed of the bootstrap that gives HELM's means their intervals."""


@dataclass
class RunImport:
    """What the import of one run did."""

    run_id: str
    helm_name: str
    folder: Path
    scenario: str
    model: str
    method: str
    instances: int = 0
    requests: int = 0
    failed_requests: int = 0
    requests_with_logprobs: int = 0
    stats: int = 0
    unmapped_fields: list[str] = field(default_factory=list)
    unknown_stats: list[str] = field(default_factory=list)
    scenario_mapped: bool = True


@dataclass(frozen=True)
class _Prepared:
    """One HELM run folder, checked before anything is written."""

    folder: Path
    facts: RunSpecFacts
    run_spec: dict[str, Any]
    """HELM's ``run_spec.json``, as read."""
    run_spec_sha256: str
    unknown_stats: tuple[str, ...]
    """Stat names holistic does not know (kept only under ``keep_unknown_stats``)."""


def _file_facts(path: Path, sha256: str) -> dict[str, Any]:
    return {"size": path.stat().st_size, "sha256": sha256}


def _stat_entries(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with JsonStream(path) as stream:
        for i, entry in enumerate(stream.top_array("stats")):
            if not isinstance(entry, dict):
                raise HelmFileError(path, "expected a stat object", field=f"[{i}]")
            yield i, entry
        stream.finish()


def _check_stat_names(path: Path, keep_unknown: bool) -> tuple[str, ...]:
    """Every stat of ``stats.json`` parses; the names holistic does not know (exit 2 unless kept)."""
    unknown: dict[str, int] = {}
    for i, entry in _stat_entries(path):
        name = entry.get("name")
        metric = name.get("name") if isinstance(name, dict) else None
        if not isinstance(metric, str) or not metric:
            raise HelmFileError(path, "expected a stat name (a string)", field=f"[{i}].name.name")
        if stat_info(metric) is None:
            unknown.setdefault(metric, i)
    if unknown and not keep_unknown:
        first, index = next(iter(unknown.items()))
        names = ", ".join(repr(n) for n in unknown)
        raise HelmFileError(
            path,
            f"stat name{'s' if len(unknown) > 1 else ''} holistic does not know: {names}; nothing was imported. "
            "Pass --keep-unknown-stats to import them under HELM's names (kept as HELM wrote them, with no "
            "category, and listed in the import report)",
            field=f"[{index}].name.name ({first!r})",
        )
    return tuple(unknown)


def prepare(folder: Path, options: ImportOptions, root: Path | None = None) -> _Prepared:
    """The checks of one run folder that need no writing."""
    check_untrusted_paths(folder, folder if root is None else root)
    check_files(folder)
    data, sha = read_json(folder / RUN_SPEC)
    facts = run_spec_facts(data, folder / RUN_SPEC)
    check_names(facts, _model_name(facts, options.model_map), folder / RUN_SPEC)
    unknown = _check_stat_names(folder / STATS, options.keep_unknown_stats)
    return _Prepared(folder=folder, facts=facts, run_spec=data, run_spec_sha256=sha, unknown_stats=unknown)


def _model_name(facts: RunSpecFacts, model_map: Mapping[str, str]) -> str:
    for key in (facts.model_deployment, facts.model):
        if key and key in model_map:
            return model_map[key]
    return facts.model_deployment or facts.model


def _run_id(scenario: str, model: str, prepared: _Prepared) -> str:
    slug = "".join(ch if ch.isalnum() or ch in "_-." else "_" for ch in f"helm_{scenario}_{model}")[:80]
    return f"{slug}-{short_hash(canonical_json({'helm_run_spec': prepared.run_spec}))}"


class _Batched:
    """Rows gathered and written as Parquet batches."""

    def __init__(self, writer: RunWriter, table: str, join: Mapping[str, Any]) -> None:
        self.table = table
        self.join = dict(join)
        self.out = writer.table_batches(table)
        self.rows: list[dict[str, Any]] = []

    def add(self, row: Mapping[str, Any]) -> None:
        self.rows.append({**self.join, **row})
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.out.write(table_from_rows(self.table, self.rows))
            self.rows = []

    def close(self) -> int:
        self.flush()
        self.out.close()
        return self.out.rows

    def abort(self) -> None:
        self.out.abort()


def _field_error(path: Path, where: str, exc: Exception) -> HelmFileError:
    text = str(exc)
    field_name, _, problem = text.partition(": ")
    if not problem:
        return HelmFileError(path, text, field=where)
    return HelmFileError(path, problem, field=f"{where}.{field_name}")


def _import_states(
    path: Path, method: str, requests: _Batched, instances: _Batched, unmapped: convert.Unmapped
) -> tuple[dict[str, Any], str, int]:
    """Stream ``scenario_state.json``; returns the other top-level members, the sha256 and
    the number of failed requests."""
    counter = convert.RequestCounter()
    seen: dict[tuple[str, str | None], str] = {}
    failed = 0
    with_logprobs = 0
    others: dict[str, Any] = {}
    found_states = False
    with JsonStream(path) as stream:
        if stream.begin() != "{":
            raise HelmFileError(path, "expected a JSON object with request_states, found an array")
        for key, value in stream.members(streamed="request_states"):
            if key != "request_states":
                others[key] = value
                continue
            found_states = True
            for i, state in enumerate(stream.elements("request_states")):
                if not isinstance(state, dict):
                    raise HelmFileError(path, "expected a request state object", field=f"request_states[{i}]")
                try:
                    row, inst = convert.request_row(state, method, counter, unmapped)
                except (ValueError, TypeError, AttributeError, KeyError, IndexError, OverflowError) as exc:
                    raise _field_error(path, f"request_states[{i}]", exc) from None
                requests.add(row)
                failed += not row["success"]
                with_logprobs += row["has_logprobs"]
                key_ = (inst["instance_id"], inst["perturbation"])
                content = short_hash(canonical_json({k: v for k, v in inst.items() if k != "split"}))
                if key_ not in seen:
                    seen[key_] = content
                    instances.add(inst)
                elif seen[key_] != content:  # two instances under one id: never merged silently
                    raise HelmFileError(
                        path,
                        f"instance id {terminal_safe(key_[0])!r} names two different instances (an earlier "
                        "request state's instance has other text or references); HELM gives each its own id",
                        field=f"request_states[{i}].instance.id",
                    )
        stream.finish()
    if not found_states:
        raise HelmFileError(path, "missing (not a HELM scenario state)", field="request_states")
    others["_requests_with_logprobs"] = with_logprobs
    return others, stream.sha256, failed


def _import_per_instance(path: Path, rows: _Batched, unmapped: convert.Unmapped) -> tuple[Counter[MetricName], str]:
    """Stream ``per_instance_stats.json``; returns how many values each stat name has, and the sha256."""
    values: Counter[MetricName] = Counter()
    with JsonStream(path) as stream:
        for i, entry in enumerate(stream.top_array("per-instance stats")):
            where = f"[{i}]"
            if not isinstance(entry, dict):
                raise HelmFileError(path, "expected an object", field=where)
            entry = dict(entry)
            instance_id = entry.pop("instance_id", None)
            if not isinstance(instance_id, str):
                raise HelmFileError(path, "expected the instance id (a string)", field=f"{where}.instance_id")
            trial = entry.pop("train_trial_index", 0)
            if not isinstance(trial, int) or isinstance(trial, bool):
                raise HelmFileError(path, "expected a whole number", field=f"{where}.train_trial_index")
            entry_pert = entry.pop("perturbation", None)
            stats = entry.pop("stats", None)
            if not isinstance(stats, list):
                raise HelmFileError(path, "expected a list", field=f"{where}.stats")
            unmapped.note("per_instance_stats[]", entry)
            seen: set[MetricName] = set()
            for j, stat in enumerate(stats):
                at = f"{where}.stats[{j}]"
                if not isinstance(stat, dict) or not isinstance(stat.get("name"), dict):
                    raise HelmFileError(path, "expected a stat with a name", field=at)
                stat = dict(stat)
                try:
                    name_data = dict(check_type(stat.pop("name"), "an object", "name"))
                    if "perturbation" not in name_data and entry_pert:
                        name_data["perturbation"] = {**entry_pert, "computed_on": "perturbed"}
                    name, rest = convert.stat_name(name_data, unmapped, "per_instance_stats[].stats[]")
                    numbers = convert.stat_values(stat)
                except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
                    raise _field_error(path, at, exc) from None
                unmapped.note("per_instance_stats[].stats[]", stat)
                rest.update(stat)
                if numbers.count != 1:
                    rest.update(count=numbers.count, sum=numbers.sum, sum_squared=numbers.sum_sq)
                if numbers.mean is None:
                    continue  # no value for this instance (HELM's count 0)
                metric = MetricName(name.metric, name.split, name.sub_split, name.perturbation)
                if metric in seen:
                    raise HelmFileError(
                        path, f"a second value of {name.metric!r} for instance {instance_id!r}, trial {trial}", field=at
                    )
                seen.add(metric)
                rows.add(
                    {
                        "instance_id": instance_id,
                        "trial": trial,
                        "metric": name.metric,
                        "split": name.split,
                        "sub_split": name.sub_split,
                        "perturbation": name.perturbation,
                        "value": numbers.mean,
                        "details": None,
                        "raw": canonical_json(rest) if rest else None,
                    }
                )
                values[metric] += 1
        stream.finish()
    return values, stream.sha256


def _import_stats(
    path: Path, rows: list[dict[str, Any]], intervals: Mapping[MetricName, Interval], unmapped: convert.Unmapped
) -> str:
    for i, stat in _stat_entries(path):
        try:
            name, rest = convert.stat_name(dict(stat.pop("name")), unmapped, "stats[]")
            numbers = convert.stat_values(stat)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            raise _field_error(path, f"[{i}]", exc) from None
        unmapped.note("stats[]", stat)
        rest.update(stat)
        info = stat_info(name.metric)
        agg = intervals.get(MetricName(name.metric, name.split, name.sub_split, name.perturbation))
        mean = numbers.mean
        rows.append(
            {
                "metric": name.metric,
                "split": name.split,
                "sub_split": name.sub_split,
                "perturbation": name.perturbation,
                "count": numbers.count,
                "sum": numbers.sum,
                "sum_sq": numbers.sum_sq,
                "min": numbers.min,
                "max": numbers.max,
                "mean": mean,
                "stddev": numbers.stddev,
                "ci_low": None if agg is None or mean is None else min(agg.ci_low, mean),
                "ci_high": None if agg is None or mean is None else max(agg.ci_high, mean),
                "num_trials": agg.num_trials if agg is not None else 1,
                "trial_stddev": agg.trial_stddev if agg is not None else None,
                "higher_is_better": info.higher_is_better if info else None,
                "category": info.category if info else None,
                "raw": canonical_json(rest) if rest else None,
            }
        )
    return file_sha256(path)


def import_run(store: SuiteStore, prepared: _Prepared, options: ImportOptions) -> RunImport:
    """Write one imported run; on any failure its folder is removed (nothing half-imported)."""
    facts = prepared.facts
    folder = prepared.folder
    scenario, args, mapped = scenario_name_and_args(facts.scenario_class, facts.scenario_args)
    model = _model_name(facts, options.model_map)
    run_id = _run_id(scenario, model, prepared)
    report = RunImport(
        run_id=run_id,
        helm_name=facts.name,
        folder=folder,
        scenario=scenario,
        model=model,
        method=facts.method,
        scenario_mapped=mapped,
    )
    join = {
        "suite": store.suite,
        "run_id": run_id,
        "run_name": facts.name,
        "scenario": scenario,
        "scenario_args": canonical_json(args),
        "model": model,
        "method": facts.method,
    }
    unmapped = convert.Unmapped()
    writer = store.begin_run(run_id)
    open_tables: list[_Batched] = []
    try:
        requests = _Batched(writer, REQUESTS_TABLE, join)
        instances = _Batched(writer, INSTANCES_TABLE, join)
        open_tables += [requests, instances]
        others, state_sha, failed = _import_states(folder / SCENARIO_STATE, facts.method, requests, instances, unmapped)
        report.requests = requests.close()
        report.instances = instances.close()
        report.failed_requests = failed
        report.requests_with_logprobs = others.pop("_requests_with_logprobs")
        per_instance = _Batched(writer, PER_INSTANCE_STATS_TABLE, join)
        open_tables.append(per_instance)
        counts, pis_sha = _import_per_instance(folder / PER_INSTANCE_STATS, per_instance, unmapped)
        per_instance.close()
        intervals = intervals_from_parquet(per_instance.out.path, counts, seed=options.seed)
        stat_rows: list[dict[str, Any]] = []
        stats_sha = _import_stats(folder / STATS, stat_rows, intervals, unmapped)
        writer.write_table(STATS_TABLE, table_from_rows(STATS_TABLE, [{**join, **r} for r in stat_rows]))
        report.stats = len(stat_rows)
        files = {
            RUN_SPEC: _file_facts(folder / RUN_SPEC, prepared.run_spec_sha256),
            SCENARIO_STATE: _file_facts(folder / SCENARIO_STATE, state_sha),
            PER_INSTANCE_STATS: _file_facts(folder / PER_INSTANCE_STATS, pis_sha),
            STATS: _file_facts(folder / STATS, stats_sha),
        }
        if (folder / SCENARIO).is_file():
            files[SCENARIO] = _file_facts(folder / SCENARIO, file_sha256(folder / SCENARIO))
        report.unmapped_fields = unmapped.names()
        report.unknown_stats = list(prepared.unknown_stats)
        writer.write_json(
            RUN_SPEC_FILE, _run_spec_document(store.suite, report, prepared, args, files, others, options)
        )
        writer.write_json(ARTIFACTS_FILE, _artifacts(report, unmapped))
        writer.complete(requests=report.requests, failed_requests=failed)
    except BaseException:
        for table in open_tables:
            table.abort()
        with contextlib.suppress(OSError):
            shutil.rmtree(writer.folder)  # type: ignore[arg-type]
        raise
    return report


def _main_metric(scenario: str, mapped_scenario: bool) -> str:
    if not mapped_scenario and scenario.startswith("helm:"):
        return "exact_match"
    from holistic.scenarios.registry import scenario_info

    try:
        return scenario_info(scenario).main_metric
    except Exception:  # an unmapped or plugin scenario: HELM's usual headline
        return "exact_match"


def _run_spec_document(
    suite: str,
    report: RunImport,
    prepared: _Prepared,
    args: Mapping[str, Any],
    files: Mapping[str, Any],
    others: Mapping[str, Any],
    options: ImportOptions,
) -> dict[str, Any]:
    facts = prepared.facts
    adapter = facts.adapter_spec
    return {
        "name": facts.name,
        "suite": suite,
        "run_id": report.run_id,
        "scenario": {"name": report.scenario, "args": dict(args)},
        "adapter": {
            "method": facts.method,
            **{k: adapter[k] for k in ("max_train_instances", "num_train_trials") if k in adapter},
        },
        "model": report.model,
        "metrics": list(facts.metric_classes),
        "perturbations": [],
        "groups": list(facts.groups),
        "main_metric": _main_metric(report.scenario, report.scenario_mapped),
        "model_identity": None,
        "imported_from": {
            "tool": "crfm-helm",
            "helm_version": options.helm_version,
            "layout": facts.layout,
            "run_spec_name": facts.name,
            "run_folder": prepared.folder.name,
            "helm_model": facts.model,
            "helm_model_deployment": facts.model_deployment,
            "helm_scenario_class": facts.scenario_class,
            "helm_scenario_args": facts.scenario_args,
            "scenario_mapped": report.scenario_mapped,
            "real_logprobs": report.requests_with_logprobs > 0,
            "files": dict(files),
            "helm_run_spec": prepared.run_spec,
            "scenario_state_other_members": dict(others),
        },
    }


def _artifacts(report: RunImport, unmapped: convert.Unmapped) -> dict[str, Any]:
    return {
        "execution": {
            "instances": report.instances,
            "requests": report.requests,
            "failed_requests": report.failed_requests,
            "error_rate": report.failed_requests / report.requests if report.requests else 0.0,
        },
        "import": {
            "unmapped_fields": {name: unmapped.fields[name] for name in unmapped.names()},
            "unknown_stats": report.unknown_stats,
            "scenario_mapped": report.scenario_mapped,
        },
    }


def import_helm(
    source: Path, options: ImportOptions, *, on_run: Callable[[RunImport], None] | None = None
) -> list[RunImport]:
    """Import every HELM run under ``source`` into ``options.suite``; the reports of the runs."""
    from holistic.results.lock import suite_lock

    folders = find_run_folders(source)
    prepared = [prepare(folder, options, Path(source)) for folder in folders]  # every check before any write
    store = SuiteStore(options.output_dir, options.suite)
    existed = store.read_suite_json() is not None
    if existed and not options.force:
        raise StoreError(
            f"{store.suite_file}: suite {options.suite!r} already exists; pass --force to import into it "
            "(runs of the same HELM run spec are replaced, the others kept) or choose another --suite"
        )
    ids: dict[str, Path] = {}
    for p in prepared:
        scenario, _, _ = scenario_name_and_args(p.facts.scenario_class, p.facts.scenario_args)
        run_id = _run_id(scenario, _model_name(p.facts, options.model_map), p)
        if run_id in ids:
            raise HelmFileError(
                p.folder / RUN_SPEC, f"the same HELM run spec as {ids[run_id] / RUN_SPEC}; import them separately"
            )
        ids[run_id] = p.folder
    reports: list[RunImport] = []
    digest = hashlib.sha256()
    for p in prepared:
        digest.update(p.run_spec_sha256.encode())
    try:
        with suite_lock(store.suite_dir, wait=False):
            store.open(spec_path=f"helm-import {Path(source).name}", spec_sha256=digest.hexdigest())
            # every run pending first: an import killed midway leaves them so, and helm-summarize says so
            store.record_runs([_entry(run_id, p, "pending") for run_id, p in zip(ids, prepared, strict=True)])
            for run_id, p in zip(ids, prepared, strict=True):
                try:
                    report = import_run(store, p, options)
                except HolisticError as exc:  # its folder is removed: the suite says why the run is missing
                    store.record_runs([_entry(run_id, p, "failed", str(exc))])
                    raise
                store.record_runs([_suite_entry(report)])
                reports.append(report)
                if on_run is not None:
                    on_run(report)
    except HolisticError:
        if not existed and not reports and isinstance(store.suite_dir, Path):
            with contextlib.suppress(OSError):  # a suite this import made and filled with nothing: none is left
                shutil.rmtree(store.suite_dir)
        raise
    return reports


def _entry(run_id: str, prepared: _Prepared, status: str, error: str | None = None) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "name": prepared.facts.name,
        "scenario": prepared.facts.scenario_class,
        "model": prepared.facts.model,
        "method": prepared.facts.method,
        "status": status,
        "error": error,
        "requests": 0,
        "failed_requests": 0,
        "error_rate": 0.0,
        "imported_from": "crfm-helm",
    }


def _suite_entry(report: RunImport) -> dict[str, Any]:
    return {
        "run_id": report.run_id,
        "name": report.helm_name,
        "scenario": report.scenario,
        "model": report.model,
        "method": report.method,
        "status": "partial" if report.failed_requests else "complete",
        "error": None,
        "requests": report.requests,
        "failed_requests": report.failed_requests,
        "error_rate": report.failed_requests / report.requests if report.requests else 0.0,
        "imported_from": "crfm-helm",
    }
