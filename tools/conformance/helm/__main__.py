"""Run HELM itself and holistic on the same scenarios, instances and model, and compare.

HELM (crfm-helm 0.5.16) is installed by this script in its own virtual environment
(``~/.cache/holistic/peers/helm`` by default) — it is never a dependency of holistic.
Both sides evaluate the embedded SmolLM2-135M-Instruct: holistic through its
``embedded`` deployment (transformers engine), HELM through its ``HuggingFaceClient``
on the same weights as a local Hugging Face directory (the safetensors checkpoint
holistic converts the GGUF into once), with ``apply_chat_template: false`` and the
same context window (2048 tokens).

Instances: HELM always runs its own loader. The authors' files are put where HELM's
download would put them (``scenarios/<name>/data/``; HELM's ``ensure_file_downloaded``
skips a target that exists): MMLU, TruthfulQA (``data/v1/TruthfulQA.csv`` at the commit
HELM pins) and RAFT from the data root as they are; BoolQ and IMDB in the authors'
format written from the copies that are here. Both tools read the same bytes, and the
harness compares every instance HELM's loader made with holistic's (input, references,
split), position by position. What cannot be given to HELM as its download would is
listed in :data:`DEVIATIONS` and in the report.

Per scenario it reports: instances identical (every instance HELM's loader made, n of
n), prompts identical (n of n), request parameters identical, the evaluated instance
sample identical, per-instance prediction agreement, and the absolute difference of
every metric both report (per split), against the targets (every instance and prompt,
>= 99% of predictions, |delta| <= 0.005; exit 1 when one is missed). For separate
scoring (HellaSwag, OpenBookQA: one request per choice, HELM echoing the choice in its
prompt) the prompt compared is holistic's prompt followed by the scored continuation,
and the prediction is the choice picked (``predicted_index``). For ranking (MS MARCO: one
generated answer per passage) the instances are compared with each passage's relevance and
first-stage rank, and the ranking stats also by scoring HELM's own answers with holistic's
ranking metric (``rescored_abs_delta``, held to the same target). The keys in
:data:`AUGMENTED` run HELM's ``data_augmentation`` (robustness: ``mild_mix``; fairness: dialect,
gender pronouns, person names; ``canonical``: both in one run, as HELM's core entries do; and on
MMLU and BoolQ each single perturbation of :data:`SINGLE_AUGMENTATIONS`) beside holistic's
perturbations, and compare perturbed prompts and worst-case stats too.
CNN/DailyMail and XSum: HELM unpickles preprocessed files of its own; the harness writes
the authors' files for holistic and, from the same records, that pickle for HELM
(:data:`DEVIATIONS`). HELM's core entries sample (temperature 0.3), so their completions and
stats are named exclusions (:data:`SAMPLED`); the :data:`GREEDY` keys run the same at
temperature 0 and compare them. HELM's summarization extra is not installable here: its
process runs without it (``peer/helm_run_patched.py``), and what that leaves uncompared is listed in
:data:`NOT_COMPARED`.
A shared metric that differs because of HELM's local client rather than its protocol
is listed under ``excluded_metrics`` with both values and the reason (``EXCLUDED``),
never dropped silently; the stats only one side reports are listed as well. ``--golden DIR`` also writes
golden files made from HELM's output (the digest of every instance, prompts, request
parameters, completions, per-instance stats for the first ``--golden-instances``
instances) that the tests check
holistic against without installing HELM; for a key of :data:`AUGMENTED`, ``DIR/augmented/
<key>.json.gz`` holds HELM's whole perturbed run instead (every original's and variant's
request and completions, their per-instance stats, and the run's perturbed, original and
worst-case stats: :func:`write_augmented_golden`).

    python -m tools.conformance.helm --data-root DATA --max-eval-instances 10 \\
        --golden tests/conformance --report conformance.json

The machine's cores are shared: runs are small and ``nice``d.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from tools.common import PEERS_CACHE, default_data_root
from tools.conformance.helm.compare import compare
from tools.conformance.helm.environment import helm_venv, write_prod_env
from tools.conformance.helm.golden import write_augmented_golden, write_golden
from tools.conformance.helm.keys import AUGMENTED, AUGMENTED_GOLDENS, GREEDY, SCENARIOS, helm_suite
from tools.conformance.helm.perturbations import place_helm_resources
from tools.conformance.helm.running import entry_matches, helm_run_dir, run_helm, run_holistic
from tools.conformance.helm.staging import helm_patches, prepare_helm_instances, scenario_data_root
from tools.conformance.helm.stats import SAMPLED_REASON


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.conformance.helm",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--data-root",
        type=Path,
        default=default_data_root(),
        help="folder with mmlu/, truthful_qa/, boolq/, imdb/, raft/ in the authors' formats",
    )
    p.add_argument("--scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    p.add_argument("--max-eval-instances", type=int, default=10)
    p.add_argument("--num-train-trials", type=int, default=1)
    p.add_argument("--work-dir", type=Path, default=PEERS_CACHE / "helm_conformance")
    p.add_argument("--helm-venv", type=Path, default=PEERS_CACHE / "helm")
    p.add_argument(
        "--golden",
        type=Path,
        help="write golden files made from HELM's output into this folder (the augmented keys' into its augmented/)",
    )
    p.add_argument("--golden-instances", type=int, default=5)
    p.add_argument("--report", type=Path, help="write the comparison as JSON")
    p.add_argument(
        "--keep",
        action="store_true",
        help="keep --work-dir and the runs already finished in it (HELM's and holistic's)",
    )
    p.add_argument(
        "--compare-only",
        action="store_true",
        help="do not run anything: compare (and write golden files from) the runs already in --work-dir",
    )
    args = p.parse_args(argv)

    from holistic.models.weights import converted_gguf_dir, embedded_gguf_path

    work = args.work_dir.resolve()
    helm_out, ours_out = work / "helm", work / "holistic"
    data_root = args.data_root.resolve()
    if not args.compare_only:
        helm_python = helm_venv(args.helm_venv)
        model_dir = converted_gguf_dir(embedded_gguf_path())
        if work.exists() and not args.keep:
            shutil.rmtree(work)
        helm_out.mkdir(parents=True, exist_ok=True)
        ours_out.mkdir(parents=True, exist_ok=True)
        write_prod_env(work / "prod_env", model_dir)

    results = []
    for key in args.scenarios:
        root = scenario_data_root(key, data_root, work)
        if args.compare_only:
            helm_dir = next(p for p in (helm_out / "runs" / helm_suite(key)).iterdir() if entry_matches(p.name, key))
            ours_dir = sorted((ours_out / f"conformance-{key}" / "runs").glob("*"))[0]
        else:
            if helm_run_dir(helm_out, key) is None:
                prepare_helm_instances(key, helm_out, root, helm_python)
                if "fairness" in AUGMENTED.get(key, ("", [], []))[2]:
                    place_helm_resources(helm_out, data_root)
            helm_dir = run_helm(
                key,
                helm_out,
                helm_python,
                work / "prod_env",
                args.max_eval_instances,
                args.num_train_trials,
                patches=helm_patches(key, root),
            )
            ours_dir = run_holistic(key, ours_out, root, args.max_eval_instances, args.num_train_trials)
        result = compare(key, helm_dir, ours_dir, root)
        results.append(result)
        if args.golden and key in AUGMENTED:  # HELM's whole perturbed run, beside the scenario's golden
            write_augmented_golden(key, helm_dir, root, args.golden / AUGMENTED_GOLDENS)
        elif args.golden and key not in GREEDY:
            write_golden(key, helm_dir, root, args.golden, args.golden_instances)
        print(format_row(result), flush=True)

    print()
    print(format_table(results))
    if args.report:
        args.report.write_text(json.dumps(results, indent=1) + "\n")
    return 0 if all(all(r["targets_met"].values()) for r in results) else 1


def format_row(r: dict[str, Any]) -> str:
    loader = r["loader"]
    instances = f"instances identical {loader['identical']}/{loader['helm']} (holistic has {loader['holistic']})"
    worst = max(r["metric_abs_delta"].values(), default=0.0)
    return (
        f"{r['scenario']}: prompts {r['prompts_identical']}/{r['instances']}, "
        f"params {r['request_params_identical']}/{r['instances']}, "
        f"predictions {r['prediction_agreement']}/{r.get('predictions', r['instances'])}, "
        f"same sample {r['same_sample']}, {instances}, max |delta| {worst:.4f} over {len(r['metric_abs_delta'])} metrics"
        + (
            f"; HELM's answers rescored by holistic: max |delta| {max(r['rescored_abs_delta'].values(), default=0.0):.4f} "
            f"over {len(r['rescored_abs_delta'])} ranking stats"
            if "rescored_abs_delta" in r
            else ""
        )
        + "".join(
            f"; excluded {name} (HELM {e['helm']:.4f}, holistic {e['holistic']:.4f}: "
            f"see {'SAMPLED' if e['reason'] == SAMPLED_REASON else 'EXCLUDED'})"
            for name, e in r["excluded_metrics"].items()
        )
        + ("" if all(r["targets_met"].values()) else f"; TARGETS NOT MET: {r['targets_met']}")
    )


def format_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | instances identical | prompts identical | request params | same sample "
        "| predictions agree | max abs delta (metrics) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        loader = r["loader"]
        same = f"{loader['identical']}/{loader['helm']}"
        n = r["instances"]
        worst = max(r["metric_abs_delta"].items(), key=lambda kv: kv[1], default=("-", 0.0))
        lines.append(
            f"| {r['scenario']} | {same} | {r['prompts_identical']}/{n} | {r['request_params_identical']}/{n} | "
            f"{'yes' if r['same_sample'] else 'no'} | {r['prediction_agreement']}/{r.get('predictions', n)} | "
            f"{worst[1]:.4f} ({worst[0]}; {len(r['metric_abs_delta'])} shared) |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
