"""HELM's perturbed dry runs and holistic's variants of the same instances (``protocol: helm``), with
their prompts, compared: the part of :mod:`tools.conformance.helm.perturbations` that reads both sides."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from tools.conformance.helm.compare import ROLES
from tools.conformance.helm.keys import (
    AUGMENTED,
    FAMILY_AUGMENTATIONS,
    GREEDY,
    HELM_PERTURBATION_NAMES,
    MODEL,
    SINGLE_AUGMENTATIONS,
)
from tools.conformance.helm.keys import HELM_RUN_NAMES as KEY_RUN_NAMES
from tools.conformance.helm.keys import SCENARIOS as KEYS

SCENARIOS = {key: spec for key, spec in KEYS.items() if key not in AUGMENTED and key not in GREEDY}
"""Where HELM's perturbations are compared: every core scenario the harness runs unperturbed, each
read by HELM's own loader from the files the harness gives it (``staging.scenario_data_root``
and ``prepare_helm_instances``), so HELM's runner numbers the instances (``id<n>``) and seeds every
variant with those ids; holistic's instances take the same ids by position."""
MAX_EVAL = {"mmlu": 40, "boolq": 20}
"""Evaluation instances HELM samples per scenario (10 elsewhere; ``--max-eval-instances`` overrides)."""


AUGMENTATIONS: dict[str, list[dict[str, Any]]] = {
    "robustness": FAMILY_AUGMENTATIONS["robustness"][0],
    **{name: perturbations for name, (perturbations, _, _) in SINGLE_AUGMENTATIONS.items()},
    "fairness": FAMILY_AUGMENTATIONS["fairness"][0],
    "canonical": FAMILY_AUGMENTATIONS["canonical"][0],
}
"""HELM's ``data_augmentation`` name -> the holistic perturbations (``protocol: helm``) it corresponds to;
every one is compared on every scenario of :data:`SCENARIOS` by default."""

HELM_RUN_NAMES = KEY_RUN_NAMES
"""HELM's ``data_augmentation`` -> the name its run folder carries (``PERTURBATION_SPECS_DICT``'s inner key)."""

HELM_NAMES = HELM_PERTURBATION_NAMES
"""HELM's perturbation names (its ``PerturbationDescription.name``) -> holistic's."""

NOT_RUN = {
    "synonym": "HELM's SynonymPerturbation needs spaCy's en_core_web_sm and HELM's wordnet_synonyms.json, "
    "downloaded from hosts this machine does not reach",
}


def helm_run_dir(out: Path, key: str, augmentation: str) -> Path:
    base = out / "runs" / "perturbations"
    name, *args = re.split("[:,]", SCENARIOS[key][2])
    wanted = {*args, f"data_augmentation={HELM_RUN_NAMES.get(augmentation, augmentation)}"}
    for path in sorted(base.iterdir()):
        # "mmlu:subject=anatomy,...,data_augmentation=lower,model=..." or "boolq,data_augmentation=lower:model=..."
        their_name, *theirs = re.split("[:,]", path.name)
        if (
            their_name == name
            and wanted == {a for a in theirs if not a.startswith("model=")}
            and (path / "scenario_state.json").is_file()
        ):
            return path
    raise SystemExit(f"HELM wrote no scenario state for data_augmentation={augmentation} under {base}")


def _refs(raw: list[dict[str, Any]]) -> list[list[Any]]:
    """HELM's references as [text, tags]. HELM's ranking loader (MS MARCO) also tags each passage
    with its ``docid=``, ``rank=`` and ``relevance=``, which holistic keeps as the reference's
    fields, not tags (the scenario goldens compare them; no perturbation rewrites them): of
    those tags only ``correct`` is kept."""
    return [[r["output"]["text"], [t for t in r.get("tags", []) if "=" not in t]] for r in raw]


def helm_variants(run_dir: Path, id_map: dict[str, str]) -> dict[str, Any]:
    """HELM's evaluation instances and perturbed variants (one trial), with their prompts."""
    states = json.loads((run_dir / "scenario_state.json").read_text())["request_states"]
    spec = json.loads((run_dir / "run_spec.json").read_text())["adapter_spec"]
    dropped = any(s["num_train_instances"] < spec["max_train_instances"] for s in states)
    rows: dict[tuple[str, str | None], dict[str, Any]] = {}
    for s in states:
        if s.get("train_trial_index", 0) != 0:
            continue
        inst = s["instance"]
        pert = inst.get("perturbation")
        row = rows.setdefault(
            (inst["id"], pert and pert["name"]),
            {
                "id": id_map[inst["id"]],
                "helm_id": inst["id"],
                "split": inst["split"],
                "input": inst["input"]["text"],
                "references": _refs(inst["references"]),
                "requests": [],
            },
        )
        mode = s.get("request_mode") or "original"
        row["requests"].append((s.get("reference_index"), ROLES.get(mode, mode), s["request"]["prompt"]))
        if pert is not None:
            row["perturbation"] = HELM_NAMES[pert["name"]]
            row["helm_perturbation"] = {
                k: v for k, v in pert.items() if k != "mapping_file_path" and k != "name_file_path"
            }
    originals: dict[str, Any] = {}
    variants: list[dict[str, Any]] = []
    for row in rows.values():
        row["prompt"] = joined_prompt(row.pop("requests"))
        row["prompt_sha256"] = hashlib.sha256(row["prompt"].encode("utf-8")).hexdigest()
        (variants.append(row) if "perturbation" in row else originals.setdefault(row["id"], row))
    return {"originals": originals, "variants": variants, "examples_dropped": dropped}


def joined_prompt(requests: list[tuple[int | None, str, str]]) -> str:
    """The prompts of one instance's requests as one text: the prompt itself where there is one
    request; for separate scoring (a request per choice, HELM echoing the choice in its prompt,
    and a calibration request per choice) every request's text, ordered by choice and role,
    joined by ``\\n\\x00\\n``. The golden test joins holistic's the same way."""
    if len(requests) == 1:
        return requests[0][2]
    ordered = sorted(requests, key=lambda r: (-1 if r[0] is None else r[0], r[1]))
    return "\n\x00\n".join(text for _, _, text in ordered)


def holistic_variants(
    key: str, originals: list[Any], train: list[Any], specs: list[dict[str, Any]], data_root: Path, keep: bool
) -> dict[tuple[str, str], dict[str, Any]]:
    """holistic's variants (protocol helm) of ``originals`` and their prompts: (id, name) -> row."""
    from holistic.adaptation import adapt
    from holistic.core.types import PerturbationSpec
    from holistic.models.registry import ModelRegistry
    from holistic.perturbations import apply_perturbations

    perturbation_specs = [PerturbationSpec.make(s["name"], s.get("args", {})) for s in specs]
    out = apply_perturbations(
        originals, perturbation_specs, seed=0, helm=True, data_root=data_root, offline=True, keep_unchanged=keep
    )
    variants = [v for v in out if v.perturbation is not None]
    from holistic.models.counting import local_tokenizer

    adapter = run_adapter(key)
    deployment = ModelRegistry().get(MODEL)
    tokenizer = local_tokenizer(deployment)  # the tokenizer HELM fitted prompts with
    if tokenizer is None:
        raise SystemExit(f"no local tokenizer for {MODEL}: run holistic once on it first")
    states = adapt(train, variants, adapter, deployment, tokenizer, seed=0)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for state in states:
        inst, pert = state.instance, state.instance.perturbation
        if state.trial != 0 or pert is None:
            continue
        # a deviation's tag ("person_names~holistic_names") is holistic's label, not part of the text compared
        row = rows.setdefault(
            (inst.id, pert.name.split("~")[0]),
            {"input": inst.input, "references": [[r.output, list(r.tags)] for r in inst.references], "requests": []},
        )
        row["requests"].append((state.reference_index, str(state.role), sent_text(state)))
    for row in rows.values():
        row["prompt"] = joined_prompt(row.pop("requests"))
    return rows


def sent_text(state: Any) -> str:
    """A request's text as HELM's ``prompt`` holds it (a scored continuation echoed after the prompt)."""
    request = state.request
    return str(request.prompt) + (request.continuation if request.kind == "loglikelihood" else "")


def run_adapter(key: str) -> Any:
    import tempfile

    from holistic.spec import compile_spec

    spec = {
        "suite": "perturbation-conformance",
        "protocol": "helm",
        "models": [MODEL],
        "runs": [{"scenario": SCENARIOS[key][0], "args": SCENARIOS[key][1], "perturbations": []}],
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.yaml"
        path.write_text(json.dumps(spec), encoding="utf-8")
        (run,) = compile_spec(path).runs
    return run.adapter


def compare(augmentation: str, helm: dict[str, Any], ours: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    theirs = {(v["id"], v["perturbation"]): v for v in helm["variants"]}
    same_input = same_refs = same_prompt = 0
    for key, h in theirs.items():
        mine = ours.get(key)
        if mine is None:
            continue
        same_input += mine["input"] == h["input"]
        same_refs += mine["references"] == h["references"]
        same_prompt += mine["prompt"] == h["prompt"]
    return {
        "augmentation": augmentation,
        "perturbations": [s["name"] for s in AUGMENTATIONS[augmentation]],
        "originals": len(helm["originals"]),
        "helm_variants": len(theirs),
        "holistic_variants": len(ours),
        "only_helm": sorted(f"{i}/{n}" for i, n in theirs if (i, n) not in ours),
        "only_holistic": sorted(f"{i}/{n}" for i, n in ours if (i, n) not in theirs),
        "inputs_identical": same_input,
        "references_identical": same_refs,
        "prompts_identical": same_prompt,
    }
