"""Golden files made from HELM's output, which the tests check holistic against without HELM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tools.conformance.helm.compare import (
    helm_cached_instances,
    helm_instance_ids,
    helm_instance_rows,
    helm_states,
    instances_digest,
)
from tools.conformance.helm.deviations import DEVIATIONS
from tools.conformance.helm.keys import AUGMENTED, HELM_MODEL, HELM_VERSION, SCENARIOS, base_key
from tools.conformance.helm.stats import TIMING, helm_perturbation, helm_run_stats


def _golden_head(key: str) -> dict[str, Any]:
    """What every golden file says first: who made it, the scenario, HELM's run entry, the deviations."""
    name, args, entry = SCENARIOS[key]
    return {
        "made_by": f"crfm-helm {HELM_VERSION}, tools.conformance.helm, model {HELM_MODEL} "
        "(holistic's embedded SmolLM2-135M-Instruct weights as a local Hugging Face directory)",
        "scenario": name,
        "args": args,
        "helm_run_entry": entry,
        "harness_key": key,
        "deviations": DEVIATIONS.get(base_key(key), []),
    }


def write_golden(key: str, helm_dir: Path, data_root: Path, target: Path, k: int) -> None:
    """HELM's own prompts, requests, completions and per-instance stats for ``k`` instances."""
    states = helm_states(helm_dir)
    id_map = helm_instance_ids(key, data_root, states)
    run_spec = json.loads((helm_dir / "run_spec.json").read_text())
    # HELM numbers the instances in its loader's order
    instances = [{**inst, "id": f"id{i}"} for i, inst in enumerate(helm_cached_instances(helm_dir.parents[2], key))]
    per_instance = json.loads((helm_dir / "per_instance_stats.json").read_text())
    keep = list(dict.fromkeys(s["instance"]["id"] for s in states))[:k]
    # HELM lists an instance once per metric that scored it (MS MARCO: its ranking metric, then
    # the reference metric; summarization: SummarizationMetric's, then BasicMetric's): their stats are merged.
    stats: dict[str, dict[str, float]] = {}
    for p in per_instance:
        if p["instance_id"] in keep and p.get("train_trial_index", 0) == 0:
            stats.setdefault(id_map[p["instance_id"]], {}).update(
                (st["name"]["name"], st["mean"])
                for st in p["stats"]
                if not st["name"].get("perturbation") and "mean" in st
            )
    kept = [s["request"]["prompt"] for s in states if s["instance"]["id"] in keep]
    all_inputs = any(s["num_train_instances"] < run_spec["adapter_spec"]["max_train_instances"] for s in states)
    rows = helm_instance_rows(key, helm_cached_instances(helm_dir.parents[2], key))
    golden = {
        **_golden_head(key),
        # Every instance HELM's loader made, as instances_digest of helm_instance_rows.
        "helm_instances": {"count": len(rows), "sha256": instances_digest(rows)},
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
        "request_states": [golden_state(s, id_map) for s in states if s["instance"]["id"] in keep],
        "per_instance_stats": stats,
    }
    target.mkdir(parents=True, exist_ok=True)
    (target / f"{key}.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def golden_state(s: dict[str, Any], id_map: dict[str, str]) -> dict[str, Any]:
    """One of HELM's request states as the golden files keep it: the instance (holistic's id;
    a perturbed variant's HELM ``PerturbationDescription``), the request, its completions."""
    instance = s["instance"]
    return {
        "instance": {
            "id": id_map[instance["id"]],
            "input": instance["input"]["text"],
            "split": instance["split"],
            "sub_split": instance.get("sub_split"),
            "references": [[r["output"]["text"], r.get("tags", [])] for r in instance["references"]],
            **({"perturbation": instance["perturbation"]} if instance.get("perturbation") else {}),
        },
        "trial": s["train_trial_index"],
        # separate scoring: the choice this request scores, and "original" or "calibration"
        "reference_index": s.get("reference_index"),
        "request_mode": s.get("request_mode"),
        "prompt": s["request"]["prompt"],
        "request": {
            f: s["request"].get(f)
            for f in (
                "max_tokens",
                "temperature",
                "stop_sequences",
                "num_completions",
                "top_k_per_token",
                "echo_prompt",
            )
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


def write_augmented_golden(key: str, helm_dir: Path, data_root: Path, target: Path) -> Path:
    """For a key of :data:`AUGMENTED`: every request state of HELM's run (the originals and their
    variants: prompts, requests, completions), HELM's per-instance stats of each original and
    variant, and its run's stats (perturbed, ``computed_on=original`` and ``worst``, and the
    ``robustness`` / ``fairness`` worst cases), gzipped as ``<key>.json.gz``. The run is kept
    whole (keep it small), since its worst cases are means over all its instances."""
    import gzip

    states = helm_states(helm_dir)
    id_map = helm_instance_ids(key, data_root, states)
    run_spec = json.loads((helm_dir / "run_spec.json").read_text())
    # HELM lists an instance (and variant) once per metric class that scored it: merged
    per_instance: dict[tuple[str, int, str | None], dict[str, float]] = {}
    for p in json.loads((helm_dir / "per_instance_stats.json").read_text()):
        place = (id_map[p["instance_id"]], p.get("train_trial_index", 0), helm_perturbation(p.get("perturbation")))
        per_instance.setdefault(place, {}).update(
            (st["name"]["name"], st["mean"])
            for st in p["stats"]
            if "mean" in st and st.get("count", 0) and not any(t in st["name"]["name"] for t in TIMING)
        )
    base, perturbations, categories = AUGMENTED[key]
    golden = {
        **_golden_head(key),
        "unperturbed_key": base,
        # holistic's perturbations (protocol: helm) for HELM's data_augmentation, and the
        # metric categories that report their worst cases
        "holistic_perturbations": perturbations,
        "metrics": ["accuracy", "calibration", "efficiency", "bias", *categories],
        "adapter_spec": run_spec["adapter_spec"],
        "max_eval_instances": run_spec["adapter_spec"]["max_eval_instances"],
        "request_states": [golden_state(s, id_map) for s in states],
        # HELM's per-instance stats of each original (perturbation None) and variant (holistic's
        # name of HELM's perturbation), timing aside
        "per_instance_stats": [
            {"id": i, "trial": trial, "perturbation": pert, "stats": stats}
            for (i, trial, pert), stats in per_instance.items()
        ],
        # HELM's run stats, name[split]{perturbation} (helm_perturbation's naming), timing aside
        "stats": {k: v for k, v in helm_run_stats(helm_dir).items() if not any(t in k for t in TIMING)},
    }
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{key}.json.gz"
    with gzip.GzipFile(path, "wb", mtime=0) as fh:
        fh.write((json.dumps(golden, indent=0, ensure_ascii=False) + "\n").encode("utf-8"))
    return path
