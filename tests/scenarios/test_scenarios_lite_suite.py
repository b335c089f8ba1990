"""``runspecs/lite.yaml``: HELM Lite's nine families planned (proven, claimed and why, data missing) and run
offline on the embedded model for every family whose data is in the mirror."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from holistic.cli.run import main as helm_run

LITE = Path(__file__).resolve().parents[2] / "runspecs" / "lite.yaml"
FAMILIES = ("narrative_qa", "natural_qa", "openbookqa", "mmlu", "math", "gsm8k", "legalbench", "med_qa", "wmt_14")


def test_lite_plans_all_nine_families_with_verdicts_and_missing_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a mirror: every family is planned; LegalBench, MedQA and WMT14 are claimed with HELM's
    differences named; OpenBookQA's joint method (HELM Lite's) is claimed, not proven by the core golden."""
    empty = tmp_path / "data"
    empty.mkdir()
    assert helm_run([str(LITE), "--plan", "--data-root", str(empty), "--output-dir", str(tmp_path / "o")]) == 0
    plan = capsys.readouterr().out
    runs = [m.group(1) for m in re.finditer(r"^  (\w+) .*\s(?:generation|multiple_choice_joint)\s+helm\s", plan, re.M)]
    assert set(runs) == set(FAMILIES)
    assert len(runs) == 1 + 2 + 1 + 5 + 7 + 1 + 5 + 1 + 5
    assert "mmlu (subject=abstract_algebra) · embedded/smollm2-135m-instruct: proven" in plan
    assert "scenario 'openbookqa' with method 'multiple_choice_joint': HELM's run was compared with method" in plan
    assert "scenario 'legalbench': prompts, requests and reference stats equal HELM's" in plan
    assert "scenario 'med_qa':" in plan and "scenario 'wmt_14':" in plan
    assert "test data missing: international_citizenship_questions/test.tsv" in plan
    assert "no training pairs under" in plan and "no validation files" in plan


def _has_data(root: Path, scenario: str, args: dict[str, Any]) -> bool:
    """Whether the mirror holds the files this run reads (offline)."""
    if scenario == "mmlu":
        return (root / "mmlu" / "test" / f"{args['subject']}_test.csv").is_file()
    if scenario == "math":
        return (root / "math" / "test" / str(args["subject"])).is_dir()
    if scenario == "gsm8k":
        return (root / "gsm8k" / "train.jsonl").is_file()
    if scenario == "legalbench":
        folder = root / "legalbench" / str(args["subset"])
        return (folder / "test.tsv").is_file() or (folder / "test_prerelease_2d7f2ca.tsv").is_file()
    if scenario == "med_qa":
        return (root / "med_qa" / "data_clean" / "questions" / "US" / "4_options").is_dir()
    if scenario == "wmt_14":
        x = args["language_pair"].split("-")[0]
        return (root / "wmt_14" / "test-full" / f"newstest2014-{x}en-src.{x}.sgm").is_file()
    return (root / scenario).is_dir()


def _with_data(root: Path) -> tuple[dict[str, Any], list[str]]:
    """lite.yaml restricted to the argument values whose data is in the mirror; and the run names kept."""
    spec = yaml.safe_load(LITE.read_text(encoding="utf-8"))
    runs, names = [], []
    for run in spec["runs"]:
        args = run.get("args", {})
        listed = {k: v for k, v in args.items() if isinstance(v, list)}
        key, values = next(iter(listed.items())) if listed else (None, [None])
        kept = [v for v in values if _has_data(root, run["scenario"], {**args, **({key: v} if key else {})})]
        if kept:
            runs.append({**run, "args": {**args, key: kept}} if key else run)
            names += [f"{run['scenario']}:{v}" if key else run["scenario"] for v in kept]
    return {**spec, "suite": "lite_available", "runs": runs}, names


@pytest.mark.slow
@pytest.mark.real_model
@pytest.mark.needs_data
def test_lite_runs_offline_on_the_embedded_model_where_data_is_here(data_root: Path, tmp_path: Path) -> None:
    spec, names = _with_data(data_root)
    assert {n.split(":")[0] for n in names} >= {"mmlu", "math", "gsm8k", "legalbench", "med_qa", "wmt_14"}
    path = tmp_path / "lite.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    out = tmp_path / "out"
    argv = [str(path), "--quiet", "--max-eval-instances", "2", "--data-root", str(data_root)]
    assert helm_run([*argv, "--output-dir", str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
    runs = sorted((out / "lite_available" / "runs").iterdir())
    assert len(runs) == len(names)
    headline = {"legalbench": "quasi_exact_match", "med_qa": "exact_match", "wmt_14": "bleu_4"}
    seen = set()
    for run in runs:
        rows = pq.read_table(run / "stats.parquet").to_pylist()
        scenario = json.loads((run / "run_spec.json").read_text(encoding="utf-8"))["scenario_info"]["name"]
        seen.add(scenario)
        means = {r["metric"]: r["mean"] for r in rows if r["sub_split"] is None and r["perturbation"] is None}
        if scenario in headline:
            assert 0.0 <= means[headline[scenario]] <= 1.0, run.name
            assert max(r["count"] for r in rows if r["metric"] == headline[scenario]) == 2
    assert {"legalbench", "med_qa", "wmt_14"} <= seen
