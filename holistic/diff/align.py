"""Read two suites from the Parquet store and align their runs.

Runs are aligned by what they measure — scenario, scenario arguments, model,
adaptation method and perturbations — not by run id, because the run id hashes
the whole spec and changes with any prompt edit, which is exactly what a diff
must be able to show. When one side holds several runs with the same key
(e.g. a sweep over ``max_train_instances``), the adapter fields that differ
between them are added to the key.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import StoreError
from holistic.core.hashing import canonical_json
from holistic.results import RunReader, SuiteReader, check_suite_name
from holistic.results.fs import Location
from holistic.results.layout import SUITE_FILE


@dataclass(frozen=True)
class SideRun:
    """One completed run of one side."""

    run_id: str
    reader: RunReader
    spec: dict[str, Any]
    scenario: str
    scenario_args: str
    model: str
    method: str
    perturbations: str

    @property
    def base_key(self) -> tuple[str, str, str, str, str]:
        return (self.scenario, self.scenario_args, self.model, self.method, self.perturbations)

    @property
    def imported(self) -> bool:
        """Imported from another tool's results (``helm-import``), not run by holistic."""
        return bool(self.spec.get("imported_from"))

    @property
    def adapter(self) -> dict[str, Any]:
        return dict(self.spec.get("adapter", {}))


@dataclass(frozen=True)
class Side:
    suite_dir: Location
    meta: dict[str, Any]
    runs: tuple[SideRun, ...]


def resolve_suite_dir(path: Path, suite: str | None) -> Path:
    """A suite directory, given either it or an output directory plus a suite name."""
    if suite is not None:
        path = path / check_suite_name(suite, where="--suite")
    if not path.is_dir():
        raise StoreError(f"{path}: no {SUITE_FILE} here (no such directory)")
    try:
        SuiteReader(path)
    except StoreError as exc:
        hint = "" if suite else " (pass an output directory with --suite NAME, or a suite directory)"
        raise StoreError(f"{exc}{hint}") from None
    return path


def read_side(suite_dir: Location) -> Side:
    """A suite's verified runs (a damaged run stops here with an error naming it and its file)."""
    reader = SuiteReader(suite_dir)
    runs = []
    for run in reader.runs:
        spec = run.spec
        scenario = spec.get("scenario", {})
        runs.append(
            SideRun(
                run_id=spec.get("run_id", run.run_id),
                reader=run,
                spec=spec,
                scenario=scenario.get("name", "?"),
                scenario_args=canonical_json(scenario.get("args", {})),
                model=spec.get("model", "?"),
                method=spec.get("adapter", {}).get("method", "generation"),
                perturbations=canonical_json(spec.get("perturbations", [])),
            )
        )
    return Side(suite_dir=suite_dir, meta=reader.meta, runs=tuple(runs))


def _keys(runs: tuple[SideRun, ...]) -> dict[tuple[Any, ...], SideRun]:
    groups: dict[tuple[str, ...], list[SideRun]] = defaultdict(list)
    for run in runs:
        groups[run.base_key].append(run)
    out: dict[tuple[Any, ...], SideRun] = {}
    for base, members in groups.items():
        if len(members) == 1:
            out[base] = members[0]
            continue
        fields = sorted({k for m in members for k in m.adapter})
        varying = [f for f in fields if len({canonical_json(m.adapter.get(f)) for m in members}) > 1]
        for m in members:
            out[(*base, tuple((f, canonical_json(m.adapter.get(f))) for f in varying))] = m
    return out


@dataclass(frozen=True)
class Alignment:
    pairs: tuple[tuple[SideRun, SideRun], ...]
    removed: tuple[SideRun, ...]
    added: tuple[SideRun, ...]


def align(old: Side, new: Side) -> Alignment:
    """Pair runs by key; a run whose key has no exact partner is paired with the one
    unmatched run of the other side that shares its base key, if there is exactly one."""
    old_keys, new_keys = _keys(old.runs), _keys(new.runs)
    pairs: list[tuple[SideRun, SideRun]] = []
    unmatched_old: list[SideRun] = []
    matched_new: set[str] = set()
    for key, run in sorted(old_keys.items(), key=lambda kv: kv[1].run_id):
        partner = new_keys.get(key)
        if partner is None:
            unmatched_old.append(run)
        else:
            matched_new.add(partner.run_id)
            pairs.append((run, partner))
    removed: list[SideRun] = []
    for run in unmatched_old:
        candidates = [r for r in new.runs if r.base_key == run.base_key and r.run_id not in matched_new]
        if len(candidates) == 1:
            matched_new.add(candidates[0].run_id)
            pairs.append((run, candidates[0]))
        else:
            removed.append(run)
    added = sorted((r for r in new.runs if r.run_id not in matched_new), key=lambda r: r.run_id)
    return Alignment(pairs=tuple(pairs), removed=tuple(removed), added=tuple(added))
