"""Running both tools on one key: HELM's ``helm-run`` (the peer program ``peer/helm_run_patched.py``)
and holistic's ``helm-run``, and finding HELM's run and instance-cache folders."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tools.common import REPO
from tools.conformance.helm.environment import helm_ranking_extra, wait_for_helm
from tools.conformance.helm.keys import (
    AUGMENTED,
    GREEDY,
    HELM_MODEL,
    HELM_RUN_NAMES,
    HELM_SCENARIO_ARGS,
    MODEL,
    SCENARIOS,
    base_key,
    helm_name,
    helm_suite,
)

HELM_RUN_PATCHED = Path(__file__).with_name("peer") / "helm_run_patched.py"
"""HELM's ``helm-run``, after the changes :func:`~tools.conformance.helm.staging.helm_patches` names
(none for most scenarios): a program run by HELM's interpreter."""


def run_helm(
    key: str,
    out: Path,
    helm_python: Path,
    prod_env: Path,
    n: int,
    trials: int,
    patches: dict[str, Any] | None = None,
) -> Path:
    """Run ``helm-run`` on ``key`` (its loader reading the files :func:`prepare_helm_instances`
    placed, with :func:`helm_patches`' changes) and return its run folder."""
    base = SCENARIOS[key][2]
    entry = f"{base}{',' if ':' in base else ':'}model={HELM_MODEL}"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        # HELM's bias metrics tokenize with NLTK's punkt_tab, which NLTK downloads on first
        # use; holistic ships the same English model.
        "NLTK_DATA": str(REPO / "holistic" / "metrics" / "nltk_data"),
    }
    if helm_name(key) == "msmarco":
        extra = helm_ranking_extra(helm_python)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(extra), env.get("PYTHONPATH", "")) if p)
    done = helm_run_dir(out, key)
    if done is not None:  # --keep: HELM already ran this one
        return done
    proc = subprocess.Popen(
        [
            "nice",
            str(helm_python),
            str(HELM_RUN_PATCHED),
            json.dumps(patches or {}),
            "--run-entries",
            entry,
            "--suite",
            helm_suite(key),
            "--max-eval-instances",
            str(n),
            "--num-train-trials",
            str(trials),
            "--output-path",
            str(out),
            "--local-path",
            str(prod_env),
            "--cache-instances",
            "--num-threads",
            "1",
            "--exit-on-error",
        ],
        env=env,
        cwd=out,
    )
    wait_for_helm(proc, lambda: helm_run_dir(out, key) is not None)
    found = helm_run_dir(out, key)
    if found is None:
        raise SystemExit(
            f"HELM wrote no results for {entry} under {out / 'runs' / 'conformance'} (exit {proc.returncode})"
        )
    return found


def helm_run_dir(out: Path, key: str) -> Path | None:
    """HELM's finished run folder for ``key`` (its stats written), or ``None``."""
    base = out / "runs" / helm_suite(key)
    for path in sorted(base.glob("*")) if base.is_dir() else ():
        if (
            entry_matches(path.name, key)
            and (path / "stats.json").is_file()
            and (path / "per_instance_stats.json").is_file()
        ):
            return path
    return None


def entry_matches(run_dir: str, key: str) -> bool:
    """Whether HELM's run folder ``run_dir`` is ``key``'s run entry (with the model added):
    its scenario and every argument, so that HellaSwag's ``commonsense`` run is not OpenBookQA's."""
    # HELM names a run "mmlu:subject=anatomy,...,model=..." or, for a scenario without
    # arguments, "boolq,data_augmentation=robustness:model=..."
    name, args = _entry_args(SCENARIOS[key][2])
    if key in GREEDY:  # HELM's temperature run expander keeps the run's name: its base's temperature
        args["temperature"] = _entry_args(SCENARIOS[GREEDY[key]][2])[1]["temperature"]
    if "data_augmentation" in args:  # HELM names a single perturbation's run after its spec
        args["data_augmentation"] = HELM_RUN_NAMES.get(args["data_augmentation"], args["data_augmentation"])
    their_name, theirs = _entry_args(run_dir)
    theirs.pop("model", None)
    return their_name == name and args == theirs


def _entry_args(entry: str) -> tuple[str, dict[str, str]]:
    """A run entry (or HELM's run folder name) as its scenario name and its arguments."""
    name, *args = re.split("[:,]", entry)
    return name, dict(arg.partition("=")[::2] for arg in args)


def run_holistic(key: str, out: Path, data_root: Path, n: int, trials: int) -> Path:
    name, args, _ = SCENARIOS[key]
    spec = {
        "suite": f"conformance-{key}",
        "protocol": "helm",
        "models": [MODEL],
        "runs": [
            {
                "scenario": name,
                "args": args,
                "max_eval_instances": n,
                "num_train_trials": trials,
                "metrics": ["accuracy", "calibration", "efficiency", "bias", *AUGMENTED.get(key, ("", [], []))[2]],
                "perturbations": AUGMENTED.get(key, ("", [], []))[1],
                **({"adaptation": {"temperature": 0}} if key in GREEDY else {}),
            }
        ],
    }
    spec_path = out / f"{key}.yaml"
    spec_path.write_text(json.dumps(spec, indent=1))
    subprocess.run(
        [
            "nice",
            sys.executable,
            "-m",
            "holistic.cli.run",
            str(spec_path),
            "--output-dir",
            str(out),
            "--data-root",
            str(data_root),
            "--quiet",
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    runs = sorted((out / f"conformance-{key}" / "runs").glob("*"))
    return runs[0]


def helm_cache_folder(out: Path, key: str) -> Path | None:
    """HELM's instance-cache folder for ``key`` (``<scenario>:<args>``), if it has one."""
    name, args = helm_name(key), HELM_SCENARIO_ARGS.get(base_key(key), SCENARIOS[key][1])
    wanted = [f"{k}={v}" for k, v in args.items()]
    base = out / "scenario_instances"
    for folder in sorted(base.iterdir()) if base.is_dir() else ():
        their_name, _, their_args = folder.name.partition(":")
        if their_name == name and all(a in their_args.split(",") for a in wanted):
            return folder
    return None
