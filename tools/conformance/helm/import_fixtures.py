"""Make the HELM run folders that ``tests/helm_import/`` imports, with HELM itself.

crfm-helm 0.5.16 runs in its own virtual environment (``~/.cache/holistic/peers/helm``,
made by ``tools.conformance.helm.environment.helm_venv`` on first use; never a dependency
of holistic) on the embedded SmolLM2-135M-Instruct weights, given to HELM as a local
Hugging Face directory exactly as the conformance harness does (its ``prod_env``). Two
run entries, in one ``helm-run`` of suite ``fixtures``:

- ``mmlu:subject=anatomy,method=multiple_choice_joint`` — HELM's own MMLU loader reads
  the authors' CSV files from the data root (linked where HELM's download would put
  them);
- ``synthetic_reasoning_natural:difficulty=easy`` — a generation scenario whose
  problems HELM generates itself (no data needed).

``--max-eval-instances`` instances each (HELM draws them), one trial. HELM's run folders
(``run_spec.json``, ``scenario.json``, ``scenario_state.json``, ``stats.json``,
``per_instance_stats.json``) are copied unchanged into ``--target``
(default ``tests/helm_import/helm_runs/fixtures``).

    nice .venv/bin/python -m tools.conformance.helm.import_fixtures --data-root DATA

The machine's cores are shared: HELM runs ``nice``d with one thread.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from pathlib import Path

from tools.common import PEERS_CACHE, REPO, default_data_root
from tools.conformance.helm.environment import helm_venv, wait_for_helm, write_prod_env
from tools.conformance.helm.keys import HELM_MODEL
from tools.conformance.helm.staging import prepare_helm_instances

ENTRIES = (
    "mmlu:subject=anatomy,method=multiple_choice_joint",
    "synthetic_reasoning_natural:difficulty=easy",
)
SUITE = "fixtures"
RUN_FILES = ("run_spec.json", "scenario.json", "scenario_state.json", "stats.json", "per_instance_stats.json")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.conformance.helm.import_fixtures", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--data-root", type=Path, default=default_data_root())
    p.add_argument("--max-eval-instances", type=int, default=5)
    p.add_argument("--work-dir", type=Path, default=PEERS_CACHE / "helm_fixtures")
    p.add_argument("--helm-venv", type=Path, default=PEERS_CACHE / "helm")
    p.add_argument("--target", type=Path, default=REPO / "tests" / "helm_import" / "helm_runs" / SUITE)
    args = p.parse_args(argv)

    from holistic.models.weights import converted_gguf_dir, embedded_gguf_path

    helm_python = helm_venv(args.helm_venv)
    work = args.work_dir.resolve()
    if work.exists():
        shutil.rmtree(work)
    out = work / "benchmark_output"
    out.mkdir(parents=True)
    write_prod_env(work / "prod_env", converted_gguf_dir(embedded_gguf_path()))
    prepare_helm_instances("mmlu", out, args.data_root.resolve(), helm_python)

    entries = [f"{e}{',' if ':' in e else ':'}model={HELM_MODEL}" for e in ENTRIES]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "NLTK_DATA": str(REPO / "holistic" / "metrics" / "nltk_data"),
        "OMP_NUM_THREADS": "1",
    }
    command = [
        "nice",
        str(helm_python.parent / "helm-run"),
        "--run-entries",
        *entries,
        "--suite",
        SUITE,
        "--max-eval-instances",
        str(args.max_eval_instances),
        "--num-train-trials",
        "1",
        "--output-path",
        str(out),
        "--local-path",
        str(work / "prod_env"),
        "--num-threads",
        "1",
        "--exit-on-error",
    ]
    proc = subprocess.Popen(command, env=env, cwd=work)
    runs = out / "runs" / SUITE
    wait_for_helm(
        proc,
        lambda: (
            runs.is_dir() and sum((d / "per_instance_stats.json").is_file() for d in runs.iterdir()) == len(entries)
        ),
    )
    folders = sorted(d for d in runs.iterdir() if d.is_dir() and (d / "per_instance_stats.json").is_file())
    if len(folders) != len(entries):
        raise SystemExit(f"HELM wrote {len(folders)} of {len(entries)} runs under {runs} (exit {proc.returncode})")
    if args.target.exists():
        shutil.rmtree(args.target)
    for folder in folders:
        dest = args.target / folder.name
        dest.mkdir(parents=True)
        for name in RUN_FILES:
            shutil.copyfile(folder / name, dest / name)
        print(f"{dest}: {sum((dest / n).stat().st_size for n in RUN_FILES):,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
