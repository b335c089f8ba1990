"""HELM's run folders: finding them, telling their layout version, refusing what is not one.

A HELM suite is ``benchmark_output/runs/<suite>/``, holding one folder per run named by
its run spec (``mmlu:subject=anatomy,method=multiple_choice_joint,model=...``). Every
HELM from 0.2 to 0.5 writes these files into a run folder:

- ``run_spec.json`` — the run spec (name, scenario spec, adapter spec, metric specs, groups);
- ``scenario_state.json`` — ``{"adapter_spec", "request_states": [...]}``: every request
  with its instance, prompt and result;
- ``per_instance_stats.json`` — ``[{"instance_id", "train_trial_index", "perturbation"?, "stats"}]``;
- ``stats.json`` — the run's aggregated ``Stat`` list (HELM leaves NaN stats out).

(``scenario.json``, the scenario's description, is read when present but not needed.)

The layouts differ in where the model is named: 0.2 and 0.3 put ``model`` in the adapter
spec and the requests; 0.4 and 0.5 add ``model_deployment`` (the deployment that served
it) beside it. HELM records no version number in a run folder, so the import records
the layout it recognised and the version only when the user states it
(``--helm-version``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.helm.imports.stream import HelmFileError

RUN_SPEC = "run_spec.json"
SCENARIO_STATE = "scenario_state.json"
PER_INSTANCE_STATS = "per_instance_stats.json"
STATS = "stats.json"
SCENARIO = "scenario.json"
REQUIRED = (RUN_SPEC, SCENARIO_STATE, PER_INSTANCE_STATS, STATS)

LAYOUT_04_05 = "0.4-0.5"
LAYOUT_02_03 = "0.2-0.3"


def find_run_folders(path: Path) -> list[Path]:
    """``path`` itself when it is a run folder, else its run folders (a HELM suite folder)."""
    path = Path(path)
    if not path.exists():
        raise HelmFileError(path, "no such folder")
    if not path.is_dir():
        raise HelmFileError(path, "not a folder: give a HELM run folder or a benchmark_output/runs/<suite> folder")
    if (path / RUN_SPEC).exists():
        return [path]
    runs = sorted(p for p in path.iterdir() if p.is_dir() and (p / RUN_SPEC).exists())
    if not runs:
        suites = sorted(
            p.name
            for p in path.iterdir()
            if p.is_dir() and any((q / RUN_SPEC).exists() for q in p.iterdir() if q.is_dir())
        )
        if suites:
            raise HelmFileError(
                path,
                "a folder of HELM suites, not one suite: give one of "
                + ", ".join(str(path / s) for s in suites[:5])
                + (" ..." if len(suites) > 5 else ""),
            )
        raise HelmFileError(
            path,
            f"not a HELM run: no {RUN_SPEC} here nor in any sub-folder (give a HELM run folder, or "
            "benchmark_output/runs/<suite> holding them)",
        )
    return runs


def check_files(run_dir: Path) -> None:
    """Every file the import needs is there; a layout older than HELM 0.2 is refused by name."""
    missing = [name for name in REQUIRED if not (run_dir / name).is_file()]
    if not missing:
        return
    if PER_INSTANCE_STATS in missing and (run_dir / STATS).is_file() and (run_dir / SCENARIO_STATE).is_file():
        raise HelmFileError(
            run_dir / PER_INSTANCE_STATS,
            "missing: this run folder has stats.json but no per_instance_stats.json, a layout older than "
            "HELM 0.2 (not supported: holistic needs the per-instance values for its intervals)",
        )
    raise HelmFileError(run_dir / missing[0], "missing (every HELM run folder from 0.2 to 0.5 has it)")


@dataclass(frozen=True)
class RunSpecFacts:
    """What the import needs from HELM's ``run_spec.json``."""

    name: str
    scenario_class: str
    scenario_args: dict[str, Any]
    adapter_spec: dict[str, Any]
    method: str
    model: str
    model_deployment: str | None
    groups: tuple[str, ...]
    metric_classes: tuple[str, ...]
    layout: str


def _require(data: dict[str, Any], key: str, kind: type, path: Path, where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise HelmFileError(path, f"expected {kind.__name__}, found {found}", field=f"{where}{key}")
    return value


def run_spec_facts(data: Any, path: Path) -> RunSpecFacts:
    """Read ``run_spec.json`` (0.2-0.5 layouts), naming the field at fault otherwise."""
    if not isinstance(data, dict):
        raise HelmFileError(path, "not a HELM run spec (expected a JSON object)")
    name = _require(data, "name", str, path, "")
    scenario = _require(data, "scenario_spec", dict, path, "")
    scenario_class = _require(scenario, "class_name", str, path, "scenario_spec.")
    args = scenario.get("args") or {}
    if not isinstance(args, dict):
        raise HelmFileError(path, "expected an object", field="scenario_spec.args")
    adapter = _require(data, "adapter_spec", dict, path, "")
    method = _require(adapter, "method", str, path, "adapter_spec.")
    deployment = adapter.get("model_deployment")
    model = adapter.get("model") or deployment
    if not isinstance(model, str) or not model:
        raise HelmFileError(path, "expected the model's name, found none", field="adapter_spec.model")
    metric_specs = data.get("metric_specs") or []
    if not isinstance(metric_specs, list):
        raise HelmFileError(path, "expected a list", field="metric_specs")
    groups = data.get("groups") or []
    return RunSpecFacts(
        name=name,
        scenario_class=scenario_class,
        scenario_args=dict(args),
        adapter_spec=dict(adapter),
        method=method,
        model=model,
        model_deployment=deployment if isinstance(deployment, str) and deployment else None,
        groups=tuple(str(g) for g in groups) if isinstance(groups, list) else (),
        metric_classes=tuple(str(m.get("class_name", "?")) for m in metric_specs if isinstance(m, dict)),
        layout=LAYOUT_04_05 if "model_deployment" in adapter else LAYOUT_02_03,
    )
