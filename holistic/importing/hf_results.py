"""Hugging Face ``.eval_results/`` (the Hub's community evaluation results): a suite out.

``helm-summarize --export hf-eval-results DIR`` writes, for each model of the suite,
``DIR/<model>/.eval_results/<run>.yaml``: a YAML list with one entry per completed run whose main
metric is a proportion (every value in [0, 1]), as the Hub reads it::

    - dataset: {id: <scenario>, task_id: <run name>}
      value: <mean of the main metric, as a percentage, 0-100>
      date: 'YYYY-MM-DD'
      source: {name: holistic, url: <the suite's URL or folder name>}
      notes: "<metric> over N instances; 95% interval [low, high]"

The folder ``<model>/.eval_results/`` is what goes into that model's repository on the Hub.
Runs whose main metric is not a proportion are listed as skipped (the Hub's values are 0-100).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in text).strip("._")[:100] or "unknown"


def export_suite(suite_dir: Path, out: Path, *, source_url: str | None = None) -> tuple[list[Path], list[str]]:
    """The YAML files written and the runs skipped (with why)."""
    from holistic.results import SuiteReader
    from holistic.results.schemas import STATS_TABLE

    reader = SuiteReader(suite_dir)
    written: list[Path] = []
    skipped: list[str] = []
    for run in reader.runs:
        spec = run.spec
        main = str(spec.get("main_metric") or "exact_match")
        rows = [
            s
            for s in run.table(STATS_TABLE).to_pylist()
            if s["metric"] == main and s["split"] == "test" and s["sub_split"] is None and s["perturbation"] is None
        ]
        name = str(spec.get("name") or run.run_id)
        if not rows or rows[0]["mean"] is None:
            skipped.append(f"{name}: no test value of its main metric {main}")
            continue
        s = rows[0]
        if s["min"] is None or s["min"] < 0 or s["max"] > 1:
            skipped.append(f"{name}: its main metric {main} is not a proportion (values in [0, 1])")
            continue
        interval = f"; 95% interval [{s['ci_low']:.4f}, {s['ci_high']:.4f}]" if s["ci_low"] is not None else ""
        entry: dict[str, Any] = {
            "dataset": {"id": str((spec.get("scenario") or {}).get("name") or name), "task_id": name},
            "value": round(100 * float(s["mean"]), 4),
            "source": {"name": "holistic", "url": source_url or f"holistic suite {reader.suite}"},
            "notes": f"{main} over {s['count']} instances{interval}",
        }
        created = str(spec.get("created") or "")[:10]
        if len(created) == 10:
            entry["date"] = created
        model = str(spec.get("model") or "unknown")
        path = out / _safe(model.replace("/", "__")) / ".eval_results" / f"{_safe(name)}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump([entry], sort_keys=False, allow_unicode=True), encoding="utf-8")
        written.append(path)
    return written, skipped
