"""Whether run folders are in HELM's format, by HELM's own classes (run in HELM's interpreter)::

    <HELM's python> helm_format_check.py RUN_FOLDER [RUN_FOLDER ...]

Each of ``run_spec.json``, ``stats.json``, ``scenario_state.json`` and ``per_instance_stats.json``
is read as ``helm-summarize`` reads it (``from_json`` into ``RunSpec``, ``list[Stat]``,
``ScenarioState``, ``list[PerInstanceStats]``) and written back as ``helm-run`` writes it
(``asdict_without_nones``): a missing field fails the reading, a field HELM does not know is
dropped by it, so the file is HELM's when what comes back equals what was read. Prints one
JSON line, ``{"folders", "differences": [...]}``; exits 1 when there are differences.
"""

import json
import sys
from dataclasses import is_dataclass
from pathlib import Path
from typing import Any

from helm.benchmark.adaptation.scenario_state import ScenarioState
from helm.benchmark.metrics.metric import PerInstanceStats
from helm.benchmark.metrics.statistic import Stat
from helm.benchmark.run_spec import RunSpec
from helm.common.codec import from_json
from helm.common.general import asdict_without_nones

FILES = {
    "run_spec.json": RunSpec,
    "stats.json": list[Stat],
    "scenario_state.json": ScenarioState,
    "per_instance_stats.json": list[PerInstanceStats],
}


def written(obj: Any) -> Any:
    if isinstance(obj, list):
        return [written(o) for o in obj]
    assert is_dataclass(obj), obj
    return asdict_without_nones(obj)


def differences(a: Any, b: Any, where: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        found = [f"{where}.{k}: only in the file" for k in a.keys() - b.keys()]
        found += [f"{where}.{k}: only in HELM's writing" for k in b.keys() - a.keys()]
        for k in a.keys() & b.keys():
            found += differences(a[k], b[k], f"{where}.{k}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} in the file, {b!r} in HELM's writing"]


found: list[str] = []
for folder in map(Path, sys.argv[1:]):
    for name, cls in FILES.items():
        text = (folder / name).read_text(encoding="utf-8")
        found += differences(json.loads(text), written(from_json(text, cls)), f"{folder.name}/{name}")
print(json.dumps({"folders": len(sys.argv) - 1, "differences": found[:50]}))
sys.exit(1 if found else 0)
