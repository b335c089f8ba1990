#!/usr/bin/env python
"""Run HELM itself and holistic on the same scenarios, instances and model, and compare.

HELM (crfm-helm 0.5.16) is installed by this script in its own virtual environment
(``~/.cache/holistic/peers/helm`` by default) — it is never a dependency of holistic.
Both sides evaluate the embedded SmolLM2-135M-Instruct: holistic through its
``embedded`` deployment (transformers engine), HELM through its ``HuggingFaceClient``
on the same weights as a local Hugging Face directory (the safetensors checkpoint
holistic converts the GGUF into once), with ``apply_chat_template: false`` and the
same context window (2048 tokens).

Instances: MMLU is read by HELM's own loader from the authors' CSV files (its data
folder points at the data root). BoolQ, IMDB and RAFT loaders download from hosts
this script does not reach, so HELM is given holistic's instances through its
instance cache (``--cache-instances``), ids included, and draws its evaluation sample
and in-context examples from them itself; for RAFT the instances are first split by
``datasets``' own ``train_test_split(test_size=0.8, seed=42)`` in HELM's environment,
as HELM's loader does, and HELM's RAFT instructions file is written from holistic's
copy of the RAFT authors' instructions.

Per scenario it reports: prompts identical (n of n), request parameters identical,
the evaluated instance sample identical, per-instance prediction agreement, and the
absolute difference of every metric both report (per split), against the targets
(every prompt, >= 99% of predictions, |delta| <= 0.005; exit 1 when one is missed).
A shared metric that differs because of HELM's local client rather than its protocol
is listed under ``excluded_metrics`` with both values and the reason (``EXCLUDED``),
never dropped silently; the stats only one side reports are listed as well. ``--golden DIR`` also writes
golden files made from HELM's output (prompts, request parameters, completions,
per-instance stats for the first ``--golden-instances`` instances) that the tests
check holistic against without installing HELM.

    python scripts/helm_conformance.py --data-root DATA --max-eval-instances 10 \\
        --golden tests/conformance --report conformance.json

The machine's cores are shared: runs are small and ``nice``d.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HELM_VERSION = "0.5.16"
HELM_MODEL = "holistic/smollm2-135m-instruct"
MODEL = "embedded/smollm2-135m-instruct"
CONTEXT_WINDOW = 2048

# (holistic scenario, args, HELM run entry without the model)
SCENARIOS: dict[str, tuple[str, dict[str, Any], str]] = {
    "mmlu": ("mmlu", {"subject": "anatomy"}, "mmlu:subject=anatomy,method=multiple_choice_joint"),
    "boolq": ("boolq", {}, "boolq"),
    "imdb": ("imdb", {}, "imdb"),
    "raft": ("raft", {"subset": "ade_corpus_v2"}, "raft:subset=ade_corpus_v2"),
}
HELM_SCENARIO_DIR = {  # HELM's instance-cache folder name per scenario (name:sorted args)
    "boolq": "boolq:only_contrast=False",
    "imdb": "imdb:only_contrast=False",
    "raft": "raft:subset=ade_corpus_v2",
}


# ---------------------------------------------------------------------------
# HELM's environment
# ---------------------------------------------------------------------------


def helm_venv(path: Path) -> Path:
    """The Python of a virtual environment with crfm-helm installed (created on first use)."""
    python = path / "bin" / "python"
    if python.is_file() and _has_helm(python):
        return python
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    # HELM pins torchvision; the CPU torch it runs on is kept and torchvision removed after.
    subprocess.run(["nice", *pip, "torch==2.13.0", "torchvision==0.28.0", f"crfm-helm=={HELM_VERSION}"], check=True)
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "torchvision"], check=False)
    if not _has_helm(python):
        raise SystemExit(f"crfm-helm {HELM_VERSION} did not install into {path}")
    return python


def _has_helm(python: Path) -> bool:
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('crfm-helm'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.returncode == 0 and probe.stdout.strip() == HELM_VERSION


def write_prod_env(prod_env: Path, model_dir: Path) -> None:
    """HELM's configuration for the local model: deployment, tokenizer, metadata."""
    prod_env.mkdir(parents=True, exist_ok=True)
    (prod_env / "model_deployments.yaml").write_text(
        textwrap.dedent(f"""\
        model_deployments:
          - name: {HELM_MODEL}
            model_name: {HELM_MODEL}
            tokenizer_name: {HELM_MODEL}
            max_sequence_length: {CONTEXT_WINDOW}
            client_spec:
              class_name: "helm.clients.huggingface_client.HuggingFaceClient"
              args:
                pretrained_model_name_or_path: "{model_dir}"
                apply_chat_template: false
                torch_dtype: "float32"
        """)
    )
    (prod_env / "tokenizer_configs.yaml").write_text(
        textwrap.dedent(f"""\
        tokenizer_configs:
          - name: {HELM_MODEL}
            tokenizer_spec:
              class_name: "helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer"
              args:
                pretrained_model_name_or_path: "{model_dir}"
            end_of_text_token: "<|im_end|>"
            prefix_token: ""
        """)
    )
    (prod_env / "model_metadata.yaml").write_text(
        textwrap.dedent(f"""\
        models:
          - name: {HELM_MODEL}
            display_name: SmolLM2-135M-Instruct (holistic's embedded weights)
            description: The embedded model's weights as a local Hugging Face directory.
            creator_organization_name: HuggingFaceTB
            access: open
            release_date: 2024-11-01
            tags: [TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG, LIMITED_FUNCTIONALITY_TEXT_MODEL_TAG]
        """)
    )


# ---------------------------------------------------------------------------
# Instances given to HELM
# ---------------------------------------------------------------------------


def holistic_instances(key: str, data_root: Path) -> list[Any]:
    """Every instance of the scenario as holistic loads it (before sampling)."""
    sys.path.insert(0, str(ROOT))
    from holistic.core.interfaces import ScenarioContext
    from holistic.core.types import ScenarioSpec
    from holistic.scenarios.registry import create_scenario

    name, args, _ = SCENARIOS[key]
    scenario = create_scenario(ScenarioSpec.make(name, args))
    return list(scenario.get_instances(ScenarioContext(data_root=data_root, offline=True)))


def helm_instance_json(instance: Any) -> dict[str, Any]:
    """A holistic instance in HELM's ``Instance`` JSON (train stays train; valid/test as is)."""
    return {
        "input": {"text": instance.input},
        "references": [{"output": {"text": r.output}, "tags": list(r.tags)} for r in instance.references],
        "split": instance.split,
        "id": instance.id,
    }


_RAFT_SPLIT = r"""
import csv, json, sys
import datasets
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
fields, out = json.loads(sys.argv[2]), []
split = datasets.Dataset.from_list(rows).train_test_split(test_size=0.8, seed=42)
for name, part in (("train", split["train"]), ("test", split["test"])):
    for x in part:
        out.append({"input": {"text": "\n".join(f"{f}: {x[f]}" for f in fields)},
                    "references": [{"output": {"text": x["Label"]}, "tags": ["correct"]}],
                    "split": name, "id": "ade_corpus_v2-" + x["ID"]})
json.dump(out, open(sys.argv[3], "w"), indent=1)
"""


def prepare_helm_instances(key: str, out: Path, data_root: Path, helm_python: Path) -> None:
    """Put the scenario's data where HELM's runner finds it instead of downloading."""
    if key == "mmlu":
        scenario_dir = out / "scenarios" / "mmlu"
        scenario_dir.mkdir(parents=True, exist_ok=True)
        link = scenario_dir / "data"
        if not link.exists():
            link.symlink_to((data_root / "mmlu").resolve(), target_is_directory=True)
        return
    target = out / "scenario_instances" / HELM_SCENARIO_DIR[key] / "input_instances.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    if key == "raft":
        sys.path.insert(0, str(ROOT))
        from holistic.scenarios.raft import FIELD_ORDERING, TASK_INSTRUCTIONS

        settings = out / "scenarios" / "raft" / "prompt_construction_settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps(FIELD_ORDERING) + "\n" + json.dumps(TASK_INSTRUCTIONS) + "\n", encoding="utf-8")
        subprocess.run(
            [
                str(helm_python),
                "-c",
                _RAFT_SPLIT,
                str(data_root / "raft" / "ade_corpus_v2" / "train.csv"),
                json.dumps(FIELD_ORDERING["ade_corpus_v2"]),
                str(target),
            ],
            check=True,
        )
        return
    target.write_text(json.dumps([helm_instance_json(i) for i in holistic_instances(key, data_root)], indent=1))


# ---------------------------------------------------------------------------
# Running both
# ---------------------------------------------------------------------------


def run_helm(key: str, out: Path, helm_python: Path, prod_env: Path, n: int, trials: int) -> Path:
    base = SCENARIOS[key][2]
    entry = f"{base}{',' if ':' in base else ':'}model={HELM_MODEL}"
    helm_run = helm_python.parent / "helm-run"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        # HELM's bias metrics tokenize with NLTK's punkt_tab, which NLTK downloads on first
        # use; holistic ships the same English model.
        "NLTK_DATA": str(ROOT / "holistic" / "metrics" / "nltk_data"),
    }
    done = _helm_run_dir(out, key)
    if done is not None:  # --keep: HELM already ran this one
        return done
    proc = subprocess.Popen(
        [
            "nice",
            str(helm_run),
            "--run-entries",
            entry,
            "--suite",
            "conformance",
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
    # helm-run 0.5.16 can linger after "Done." (threads of the Hugging Face server); once its
    # results are written and a minute has passed, it is stopped.
    finished_at = None
    while proc.poll() is None:
        if finished_at is None and _helm_run_dir(out, key) is not None:
            finished_at = time.monotonic()
        if finished_at is not None and time.monotonic() - finished_at > 60:
            proc.kill()
            proc.wait()
            break
        time.sleep(5)
    found = _helm_run_dir(out, key)
    if found is None:
        raise SystemExit(
            f"HELM wrote no results for {entry} under {out / 'runs' / 'conformance'} (exit {proc.returncode})"
        )
    return found


def _helm_run_dir(out: Path, key: str) -> Path | None:
    """HELM's finished run folder for ``key`` (its stats written), or ``None``."""
    base = out / "runs" / "conformance"
    for path in sorted(base.glob("*")) if base.is_dir() else ():
        if (
            _entry_matches(path.name, key)
            and (path / "stats.json").is_file()
            and (path / "per_instance_stats.json").is_file()
        ):
            return path
    return None


def _args_text(args: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(args.items()))


def _entry_matches(run_dir: str, key: str) -> bool:
    return run_dir.split(":")[0] == SCENARIOS[key][2].split(":")[0]


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
                "metrics": ["accuracy", "calibration", "efficiency", "bias"],
                "perturbations": [],
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
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    runs = sorted((out / f"conformance-{key}" / "runs").glob("*"))
    return runs[0]


# ---------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------


def helm_states(run_dir: Path) -> list[dict[str, Any]]:
    return json.loads((run_dir / "scenario_state.json").read_text())["request_states"]


def helm_instance_ids(key: str, data_root: Path, states: list[dict[str, Any]]) -> dict[str, str]:
    """HELM instance id -> holistic id. MMLU (read by HELM itself) is matched by position
    in the scenario; the others carry holistic's ids."""
    if key != "mmlu":
        return {i.id: i.id for i in holistic_instances(key, data_root)}
    ours = holistic_instances(key, data_root)
    return {f"id{i}": inst.id for i, inst in enumerate(ours)}


def compare(key: str, helm_dir: Path, ours_dir: Path, data_root: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    states = helm_states(helm_dir)
    id_map = helm_instance_ids(key, data_root, states)
    ours = {(r["instance_id"], r["trial"]): r for r in pq.read_table(ours_dir / "requests.parquet").to_pylist()}
    loader_mismatch = 0
    if key == "mmlu":
        by_id = {i.id: i for i in holistic_instances(key, data_root)}
        loader_mismatch = sum(
            by_id[id_map[s["instance"]["id"]]].input != s["instance"]["input"]["text"] for s in states
        )
    prompts = params = agree = 0
    missing = []
    for s in states:
        hid = id_map.get(s["instance"]["id"], s["instance"]["id"])
        row = ours.get((hid, s["train_trial_index"]))
        if row is None:
            missing.append(hid)
            continue
        req = s["request"]
        prompts += row["prompt"] == req["prompt"]
        params += (row["max_tokens"], row["temperature"], list(row["stop"]), row["num_completions"]) == (
            req["max_tokens"],
            req["temperature"],
            list(req.get("stop_sequences", [])),
            req["num_completions"],
        )
        helm_text = s["result"]["completions"][0]["text"].strip() if s.get("result") else None
        agree += (row["completion"] or "").strip() == helm_text
    helm_stats = _helm_stats(helm_dir)
    our_stats = _our_stats(ours_dir)
    shared = [n for n in sorted(helm_stats) if n in our_stats and not any(t in n for t in _TIMING)]
    deltas = {name: abs(helm_stats[name] - our_stats[name]) for name in shared if excluded_reason(name) is None}
    excluded = {
        name: {
            "helm": helm_stats[name],
            "holistic": our_stats[name],
            "abs_delta": abs(helm_stats[name] - our_stats[name]),
            "reason": excluded_reason(name),
        }
        for name in shared
        if excluded_reason(name) is not None
    }
    n = len(states)
    met = {
        "prompts_identical": prompts == n,
        "prediction_agreement": agree >= TARGET_AGREEMENT * n,
        "metric_abs_delta": all(d <= TARGET_DELTA for d in deltas.values()),
        "same_sample": not missing,
    }
    return {
        "scenario": key,
        "instances": n,
        "same_sample": not missing,
        "missing_in_holistic": missing,
        "loader_mismatches": loader_mismatch,
        "prompts_identical": prompts,
        "request_params_identical": params,
        "prediction_agreement": agree,
        "metric_abs_delta": deltas,
        "excluded_metrics": excluded,
        # Reported by one side only, so never compared (e.g. HELM's request counts and finish
        # reasons; holistic's calibration stats where HELM's run spec has none).
        "helm_only": _names(n for n in helm_stats if n not in our_stats),
        "holistic_only": _names(n for n in our_stats if n not in helm_stats),
        "targets_met": met,
        "helm": {k: helm_stats[k] for k in deltas},
        "holistic": {k: our_stats[k] for k in deltas},
    }


TARGET_AGREEMENT = 0.99
TARGET_DELTA = 0.005
"""The targets: every prompt identical, >= 99% of predictions the same, |delta| <= 0.005 per shared metric."""

EXCLUDED = {
    "max_prob": "HELM's Hugging Face client (not its protocol) returns log-probabilities after temperature "
    "scaling, and greedy decoding runs at temperature 1e-7, so every completion of a local model has "
    "log-probability 0 and max_prob 1 in HELM; holistic reports the model's own probability. The calibration "
    "stats built on it (ece_*, selective_*, platt_*) differ on local models for the same reason.",
}
"""Shared metrics not held to the target, each with its reason (reported with both values)."""
_CALIBRATION = ("ece_", "selective_", "platt_")


def _names(keys: Iterable[str]) -> list[str]:
    """The metric names of ``name[split]`` keys, timing aside."""
    return sorted({k.split("[")[0] for k in keys if not any(t in k for t in _TIMING)})


def excluded_reason(key: str) -> str | None:
    """Why the shared metric ``key`` (``name[split]``) is not held to the target, or ``None`` when it is."""
    name = key.split("[")[0]
    if name in EXCLUDED:
        return EXCLUDED[name]
    if name.startswith(_CALIBRATION):
        return EXCLUDED["max_prob"]
    return None


_TIMING = ("runtime", "co2", "energy", "batch_size", "request_time", "latency")
"""Stats that measure the machine, not the model's answers: never compared."""


def _helm_stats(run_dir: Path) -> dict[str, float]:
    """``name[split]`` -> mean, unperturbed, over every evaluated split (MMLU's sample has both)."""
    out: dict[str, float] = {}
    for stat in json.loads((run_dir / "stats.json").read_text()):
        name = stat["name"]
        if name.get("perturbation") or name.get("sub_split") or stat.get("count", 0) == 0:
            continue
        if name.get("split") in ("valid", "test") and "mean" in stat:
            out.setdefault(f"{name['name']}[{name['split']}]", stat["mean"])
    return out


def _our_stats(run_dir: Path) -> dict[str, float]:
    import pyarrow.parquet as pq

    out: dict[str, float] = {}
    for row in pq.read_table(run_dir / "stats.parquet").to_pylist():
        if row.get("perturbation") or row.get("sub_split") or row.get("mean") is None:
            continue
        out.setdefault(f"{row['metric']}[{row['split']}]", row["mean"])
    return out


# ---------------------------------------------------------------------------
# Golden files
# ---------------------------------------------------------------------------


def write_golden(key: str, helm_dir: Path, data_root: Path, target: Path, k: int) -> None:
    """HELM's own prompts, requests, completions and per-instance stats for ``k`` instances."""
    states = helm_states(helm_dir)
    id_map = helm_instance_ids(key, data_root, states)
    run_spec = json.loads((helm_dir / "run_spec.json").read_text())
    cached = helm_dir.parents[2] / "scenario_instances"
    folder = HELM_SCENARIO_DIR.get(key, f"{SCENARIOS[key][0]}:{_args_text(SCENARIOS[key][1])}")
    instances = json.loads((cached / folder / "input_instances.json").read_text())
    if key == "mmlu":  # HELM gave them ids in order when it read them
        instances = [{**inst, "id": f"id{i}"} for i, inst in enumerate(instances)]
    per_instance = json.loads((helm_dir / "per_instance_stats.json").read_text())
    keep = list(dict.fromkeys(s["instance"]["id"] for s in states))[:k]
    stats = {
        id_map[p["instance_id"]]: {
            st["name"]["name"]: st["mean"] for st in p["stats"] if not st["name"].get("perturbation") and "mean" in st
        }
        for p in per_instance
        if p["instance_id"] in keep and p.get("train_trial_index", 0) == 0
    }
    kept = [s["request"]["prompt"] for s in states if s["instance"]["id"] in keep]
    all_inputs = any(s["num_train_instances"] < run_spec["adapter_spec"]["max_train_instances"] for s in states)
    name, args, entry = SCENARIOS[key]
    golden = {
        "made_by": f"crfm-helm {HELM_VERSION}, scripts/helm_conformance.py, model {HELM_MODEL} "
        "(holistic's embedded SmolLM2-135M-Instruct weights as a local Hugging Face directory)",
        "scenario": name,
        "args": args,
        "helm_run_entry": entry,
        "adapter_spec": run_spec["adapter_spec"],
        "max_eval_instances": run_spec["adapter_spec"]["max_eval_instances"],
        "train": [
            {
                "id": id_map.get(i["id"], i["id"]),
                # Only the examples some kept prompt shows carry their text (HELM's draw reads the
                # pool's labels and order, never its inputs), unless HELM dropped examples to fit
                # the window: the examples it dropped are needed to check that, and no output names them.
                "input": i["input"]["text"] if all_inputs or any(i["input"]["text"] in p for p in kept) else None,
                "references": [[r["output"]["text"], r.get("tags", [])] for r in i["references"]],
            }
            for i in instances
            if i["split"] == "train"
        ],
        # The instances HELM had (for RAFT, split in HELM's environment), in its order.
        "eval_pool_ids": [id_map.get(i["id"], i["id"]) for i in instances if i["split"] != "train"],
        "selected_eval_ids": list(
            dict.fromkeys(id_map[s["instance"]["id"]] for s in states if s["train_trial_index"] == 0)
        ),
        "request_states": [
            {
                "instance": {
                    "id": id_map[s["instance"]["id"]],
                    "input": s["instance"]["input"]["text"],
                    "split": s["instance"]["split"],
                    "references": [[r["output"]["text"], r.get("tags", [])] for r in s["instance"]["references"]],
                },
                "trial": s["train_trial_index"],
                "prompt": s["request"]["prompt"],
                "request": {
                    f: s["request"].get(f)
                    for f in ("max_tokens", "temperature", "stop_sequences", "num_completions", "top_k_per_token")
                },
                "output_mapping": s.get("output_mapping"),
                "num_train_instances": s["num_train_instances"],
                "completions": [
                    {
                        "text": c["text"],
                        "logprob": c["logprob"],
                        "tokens": [[t["text"], t["logprob"]] for t in c.get("tokens", [])],
                    }
                    for c in s["result"]["completions"]
                ],
            }
            for s in states
            if s["instance"]["id"] in keep
        ],
        "per_instance_stats": stats,
    }
    target.mkdir(parents=True, exist_ok=True)
    (target / f"{key}.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--data-root",
        type=Path,
        default=Path(os.environ.get("HOLISTIC_DATA_ROOT", "../shared/data")),
        help="folder with mmlu/, boolq/, imdb/, raft/ in the authors' formats",
    )
    p.add_argument("--scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    p.add_argument("--max-eval-instances", type=int, default=10)
    p.add_argument("--num-train-trials", type=int, default=1)
    p.add_argument("--work-dir", type=Path, default=Path.home() / ".cache" / "holistic" / "peers" / "helm_conformance")
    p.add_argument("--helm-venv", type=Path, default=Path.home() / ".cache" / "holistic" / "peers" / "helm")
    p.add_argument("--golden", type=Path, help="write golden files made from HELM's output into this folder")
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

    sys.path.insert(0, str(ROOT))
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
        if args.compare_only:
            helm_dir = next(p for p in (helm_out / "runs" / "conformance").iterdir() if _entry_matches(p.name, key))
            ours_dir = sorted((ours_out / f"conformance-{key}" / "runs").glob("*"))[0]
        else:
            prepare_helm_instances(key, helm_out, data_root, helm_python)
            helm_dir = run_helm(
                key, helm_out, helm_python, work / "prod_env", args.max_eval_instances, args.num_train_trials
            )
            ours_dir = run_holistic(key, ours_out, data_root, args.max_eval_instances, args.num_train_trials)
        result = compare(key, helm_dir, ours_dir, data_root)
        results.append(result)
        if args.golden:
            write_golden(key, helm_dir, data_root, args.golden, args.golden_instances)
        print(format_row(result), flush=True)

    print()
    print(format_table(results))
    if args.report:
        args.report.write_text(json.dumps(results, indent=1) + "\n")
    return 0 if all(all(r["targets_met"].values()) for r in results) else 1


def format_row(r: dict[str, Any]) -> str:
    worst = max(r["metric_abs_delta"].values(), default=0.0)
    return (
        f"{r['scenario']}: prompts {r['prompts_identical']}/{r['instances']}, "
        f"params {r['request_params_identical']}/{r['instances']}, "
        f"predictions {r['prediction_agreement']}/{r['instances']}, "
        f"same sample {r['same_sample']}, max |delta| {worst:.4f} over {len(r['metric_abs_delta'])} metrics"
        + "".join(
            f"; excluded {name} (HELM {e['helm']:.4f}, holistic {e['holistic']:.4f}: see EXCLUDED)"
            for name, e in r["excluded_metrics"].items()
        )
        + ("" if all(r["targets_met"].values()) else f"; TARGETS NOT MET: {r['targets_met']}")
    )


def format_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | prompts identical | request params | same instances | predictions agree | max abs delta (metrics) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        n = r["instances"]
        worst = max(r["metric_abs_delta"].items(), key=lambda kv: kv[1], default=("-", 0.0))
        lines.append(
            f"| {r['scenario']} | {r['prompts_identical']}/{n} | {r['request_params_identical']}/{n} | "
            f"{'yes' if r['same_sample'] else 'no'} | {r['prediction_agreement']}/{n} | "
            f"{worst[1]:.4f} ({worst[0]}; {len(r['metric_abs_delta'])} shared) |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
