#!/usr/bin/env python
"""Run HELM's own perturbations and holistic's (``protocol: helm``) on the same instances, and compare.

HELM (crfm-helm 0.5.16, installed in its own environment by ``helm_conformance.helm_venv``)
runs ``helm-run --dry-run`` on every core scenario the conformance harness runs unperturbed
(``helm_conformance.SCENARIOS``: MS MARCO's two tracks, and CNN/DailyMail and XSum at HELM's
core temperature, included), each read by HELM's own loader from the files that harness
gives both tools (``scenario_data_root``, ``prepare_helm_instances``), once per
``data_augmentation`` in :data:`AUGMENTATIONS`: ``robustness``, the single robustness
perturbations, the deterministic dialect, gender and person-name runs, ``fairness``, and
``canonical`` (both sets in one ``DataAugmenter``, HELM's core setting). Its
runner gives the instances their ids, samples the evaluation instances, perturbs them with
its ``DataAugmenter`` (seeded per instance by those ids) and builds every prompt with its
adapter; ``--dry-run`` stops before the model, so no model answers are needed (the model's
tokenizer is, for fitting prompts into the window). Each run entry reads the scenario with
HELM's loader afresh (no ``--cache-instances``: HELM reads cached instances back as a plain
``Input``, and would then drop the unchanged variants its ``PassageQuestionInput``
scenarios keep).

HELM's resources are placed where its download would put them (``ensure_file_downloaded``
skips an existing file): the SAE->AAVE dictionary from the data root
(``helm_perturbations/``), and, for the person-name perturbation, holistic's name lists
written in HELM's ``person_names.txt`` format (HELM's own file is not public: the
comparison then proves HELM's algorithm on holistic's names, a named deviation).
HELM's synonyms cannot run here (spaCy's ``en_core_web_sm`` and HELM's WordNet export
cannot be downloaded); they are reported as not compared.

holistic then perturbs the same instances (its own loader, HELM's ids by position) with
the matching specs under ``protocol: helm`` (keeping unchanged variants where the scenario
declares HELM does) and builds its prompts (on MS MARCO, one per passage); the report
counts, per augmentation, the variants whose input, references and prompt are
byte-identical, and the variants one side made and the other did not.

    python scripts/helm_perturbation_conformance.py --data-root DATA \\
        --golden tests/conformance --report perturbation_conformance.json

``--golden DIR`` writes ``perturbations_<scenario>.json`` (HELM's variants and prompt hashes) for
``tests/conformance/test_perturbations_golden_helm.py``, which checks holistic against it
without HELM. Runs are ``nice``d; the dry runs take about ten minutes on two cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import helm_conformance as hc

ROOT = hc.ROOT
SCENARIOS = {key: spec for key, spec in hc.SCENARIOS.items() if key not in hc.AUGMENTED and key not in hc.GREEDY}
"""Where HELM's perturbations are compared: every core scenario the harness runs unperturbed, each
read by HELM's own loader from the files the harness gives it (``helm_conformance.scenario_data_root``
and ``prepare_helm_instances``), so HELM's runner numbers the instances (``id<n>``) and seeds every
variant with those ids; holistic's instances take the same ids by position."""
MAX_EVAL = {"mmlu": 40, "boolq": 20}
"""Evaluation instances HELM samples per scenario (10 elsewhere; ``--max-eval-instances`` overrides)."""


AUGMENTATIONS: dict[str, list[dict[str, Any]]] = {
    "robustness": hc.FAMILY_AUGMENTATIONS["robustness"][0],
    **{name: perturbations for name, (perturbations, _, _) in hc.SINGLE_AUGMENTATIONS.items()},
    "fairness": hc.FAMILY_AUGMENTATIONS["fairness"][0],
    "canonical": hc.FAMILY_AUGMENTATIONS["canonical"][0],
}
"""HELM's ``data_augmentation`` name -> the holistic perturbations (``protocol: helm``) it corresponds to;
every one is compared on every scenario of :data:`SCENARIOS` by default."""

HELM_RUN_NAMES = hc.HELM_RUN_NAMES
"""HELM's ``data_augmentation`` -> the name its run folder carries (``PERTURBATION_SPECS_DICT``'s inner key)."""

HELM_NAMES = hc.HELM_PERTURBATION_NAMES
"""HELM's perturbation names (its ``PerturbationDescription.name``) -> holistic's."""

NOT_RUN = {
    "synonym": "HELM's SynonymPerturbation needs spaCy's en_core_web_sm and HELM's wordnet_synonyms.json, "
    "downloaded from hosts this machine does not reach",
}


CRAFTED: list[tuple[str, list[tuple[str, bool]]]] = [
    (
        "Adam told Emily that his father and her brother had met Greg Olson at the king's hall.",
        [("Adam and Emily", True), ("Greg", False)],
    ),
    (
        "When Sarah Schmidt called, he said the boys and their sons were with the waiter himself.",
        [("Sarah Schmidt", True), ("the waiter", False)],
    ),
    (
        "Did Matthew, Anne or Tyler Meyer see him? The man says ADAM and MOLLY left with his grandfather.",
        [("Matthew", False), ("Anne and Molly", True)],
    ),
    (
        "Jill and Jake Murphy are siblings; she is older, and he is about to graduate with the men.",
        [("Jill", True), ("Jake", False)],
    ),
    (
        "Brad's nephew asked whether Heather Sullivan, a queen of chess, would teach him this year.",
        [("Heather Sullivan", True), ("Brad", False)],
    ),
    (
        "The server gave Claire and Logan Becker their dinner; Logan thanked him, and Claire thanked the waitress.",
        [("Claire", False), ("Logan Becker", True)],
    ),
]
"""Sentences written for this comparison, with names from holistic's lists, pronouns, gendered
terms and SAE words, and references that name the same people (so the name choices must persist
across references and input as HELM keeps them). HELM's ``DataAugmenter`` perturbs them directly."""

_HELM_DIRECT = r"""
import json, sys
from helm.benchmark.augmentations.data_augmenter import DataAugmenter
from helm.benchmark.augmentations.perturbation import create_perturbation
from helm.benchmark.run_expander import PERTURBATION_SPECS_DICT
from helm.benchmark.scenarios.scenario import Input, Instance, Output, Reference

crafted, augmentations = json.loads(sys.argv[1]), json.loads(sys.argv[2])
instances = [
    Instance(
        input=Input(text=text),
        references=[Reference(output=Output(text=r), tags=["correct"] if ok else []) for r, ok in refs],
        split="test",
        id=f"id{i}",
    )
    for i, (text, refs) in enumerate(crafted)
]
out = {}
for name in augmentations:
    (specs,) = PERTURBATION_SPECS_DICT[name].values()
    augmenter = DataAugmenter(perturbations=[create_perturbation(s) for s in specs])
    made = augmenter.generate(instances, include_original=True, skip_unchanged=True, seeds_per_instance=1)
    out[name] = [
        {"helm_id": m.id, "perturbation": m.perturbation.name, "input": m.input.text,
         "references": [[r.output.text, r.tags] for r in m.references]}
        for m in made if m.perturbation is not None
    ]
json.dump(out, open(sys.argv[3], "w"), indent=1)
"""


def run_helm_direct(out: Path, helm_python: Path, augmentations: list[str]) -> Path:
    """HELM's ``DataAugmenter`` (as its runner calls it) on :data:`CRAFTED`; returns its output file."""
    target = out / "crafted_variants.json"
    subprocess.run(
        ["nice", str(helm_python), "-c", _HELM_DIRECT, json.dumps(CRAFTED), json.dumps(augmentations), str(target)],
        cwd=out,
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    return target


def compare_crafted(
    out: Path, data_root: Path, augmentations: list[str], golden_dir: Path | None
) -> list[dict[str, Any]]:
    """holistic's variants of :data:`CRAFTED` against HELM's, per augmentation (inputs and references)."""
    from holistic.core.types import Instance, PerturbationSpec, Reference
    from holistic.perturbations import apply_perturbations
    from holistic.perturbations.helm_base import HELM_ID_KEY

    helm = json.loads((out / "crafted_variants.json").read_text(encoding="utf-8"))
    originals = [
        Instance(
            id=f"crafted-{i}",
            input=text,
            references=tuple(Reference(r, ("correct",) if ok else ()) for r, ok in refs),
            metadata={HELM_ID_KEY: f"id{i}"},
        )
        for i, (text, refs) in enumerate(CRAFTED)
    ]
    results = []
    golden: dict[str, Any] = {}
    for augmentation in augmentations:
        specs = [PerturbationSpec.make(s["name"], s.get("args", {})) for s in AUGMENTATIONS[augmentation]]
        made = apply_perturbations(originals, specs, seed=0, protocol="helm", data_root=data_root, offline=True)
        ours = {(str(v.metadata[HELM_ID_KEY]), v.perturbation.name.split("~")[0]): v for v in made if v.perturbation}
        theirs = {(v["helm_id"], HELM_NAMES[v["perturbation"]]): v for v in helm[augmentation]}
        same = sum(
            k in ours
            and ours[k].input == v["input"]
            and [[r.output, list(r.tags)] for r in ours[k].references] == v["references"]
            for k, v in theirs.items()
        )
        results.append(
            {
                "scenario": "crafted",
                "augmentation": augmentation,
                "perturbations": [s["name"] for s in AUGMENTATIONS[augmentation]],
                "originals": len(originals),
                "helm_variants": len(theirs),
                "holistic_variants": len(ours),
                "only_helm": sorted(f"{i}/{n}" for i, n in theirs if (i, n) not in ours),
                "only_holistic": sorted(f"{i}/{n}" for i, n in ours if (i, n) not in theirs),
                "inputs_identical": same,
                "references_identical": same,
                "prompts_identical": same,  # no prompts here: inputs and references are the comparison
            }
        )
        print(format_row(results[-1]), flush=True)
        golden[augmentation] = {
            "holistic_perturbations": AUGMENTATIONS[augmentation],
            "variants": [{**v, "perturbation": HELM_NAMES[v["perturbation"]]} for v in helm[augmentation]],
        }
    if golden_dir is not None:
        doc = {
            "made_by": f"crfm-helm {hc.HELM_VERSION} DataAugmenter, scripts/helm_perturbation_conformance.py",
            "crafted": CRAFTED,
            "augmentations": golden,
        }
        path = golden_dir / "perturbations_crafted.json"
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return results


def place_helm_resources(out: Path, data_root: Path) -> None:
    """HELM's dialect dictionary and a person-name file where HELM's downloads would write them."""
    sys.path.insert(0, str(ROOT))
    from holistic.perturbations.helm_fairness import helm_name_file_lines
    from holistic.perturbations.helm_resources import DIALECT, resource_path

    for base in (out, out / "benchmark_output"):
        dialect = base / "perturbations" / "dialect" / "SAE_to_AAVE_mapping.json"
        dialect.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(resource_path(DIALECT, data_root, offline=True), dialect)
        names = base / "perturbations" / "person_name" / "data" / "person_names.txt"
        names.parent.mkdir(parents=True, exist_ok=True)
        names.write_text("\n".join(helm_name_file_lines()) + "\n", encoding="utf-8")


def run_helm_dry(
    out: Path, helm_python: Path, prod_env: Path, key: str, n: int, augmentations: list[str], patches: dict[str, Any]
) -> None:
    """``helm-run --dry-run`` of ``key`` once per augmentation, with the harness's changes to
    HELM's process (``helm_conformance.helm_patches``: RAFT's dataset call)."""
    base = SCENARIOS[key][2]
    entries = [f"{base}{',' if ':' in base else ':'}data_augmentation={a},model={hc.HELM_MODEL}" for a in augmentations]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    subprocess.run(
        [
            "nice",
            str(helm_python),
            "-c",
            hc._HELM_MAIN,
            json.dumps(patches),
            "--run-entries",
            *entries,
            "--suite",
            "perturbations",
            "--max-eval-instances",
            str(n),
            "--output-path",
            str(out),
            "--local-path",
            str(prod_env),
            "--dry-run",
            "--num-threads",
            "1",
        ],
        env=env,
        cwd=out,
        check=True,
    )


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
        row["requests"].append((s.get("reference_index"), hc._ROLES.get(mode, mode), s["request"]["prompt"]))
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
        originals, perturbation_specs, seed=0, protocol="helm", data_root=data_root, offline=True, keep_unchanged=keep
    )
    variants = [v for v in out if v.perturbation is not None]
    from holistic.models.counting import local_tokenizer

    adapter = _adapter(key)
    deployment = ModelRegistry().get(hc.MODEL)
    tokenizer = local_tokenizer(deployment)  # the tokenizer HELM fitted prompts with
    if tokenizer is None:
        raise SystemExit(f"no local tokenizer for {hc.MODEL}: run holistic once on it first")
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


def _adapter(key: str) -> Any:
    import tempfile

    from holistic.spec import compile_spec

    spec = {
        "suite": "perturbation-conformance",
        "protocol": "helm",
        "models": [hc.MODEL],
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-root", type=Path, default=Path(os.environ.get("HOLISTIC_DATA_ROOT", "../shared/data")))
    p.add_argument("--max-eval-instances", type=int, help="default: 40 for MMLU, 20 for BoolQ, 10 elsewhere")
    p.add_argument(
        "--augmentations",
        nargs="*",
        choices=list(AUGMENTATIONS),
        help="default: every one",
    )
    p.add_argument("--scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    p.add_argument(
        "--work-dir", type=Path, default=Path.home() / ".cache" / "holistic" / "peers" / "helm_perturbations"
    )
    p.add_argument("--helm-venv", type=Path, default=Path.home() / ".cache" / "holistic" / "peers" / "helm")
    p.add_argument("--golden", type=Path, help="write perturbations_<scenario>.json (HELM's variants) into this folder")
    p.add_argument("--report", type=Path)
    p.add_argument("--compare-only", action="store_true", help="compare the HELM runs already in --work-dir")
    p.add_argument("--keep", action="store_true", help="keep --work-dir (and the HELM runs already in it)")
    args = p.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from holistic.models.weights import converted_gguf_dir, embedded_gguf_path

    data_root = args.data_root.resolve()
    work = args.work_dir.resolve()
    out = work / "helm"
    if not args.compare_only:
        helm_python = hc.helm_venv(args.helm_venv)
        if work.exists() and not args.keep:
            shutil.rmtree(work)
        out.mkdir(parents=True, exist_ok=True)
        hc.write_prod_env(work / "prod_env", converted_gguf_dir(embedded_gguf_path()))
        place_helm_resources(out, data_root)
        for key in args.scenarios:
            root = hc.scenario_data_root(key, data_root, work)  # the files the harness gives both tools
            hc.prepare_helm_instances(key, out, root, helm_python)
            n = args.max_eval_instances or MAX_EVAL.get(key, 10)
            augmentations = args.augmentations or list(AUGMENTATIONS)
            run_helm_dry(out, helm_python, work / "prod_env", key, n, augmentations, hc.helm_patches(key, root))
        run_helm_direct(out, helm_python, args.augmentations or list(AUGMENTATIONS))

    results = []
    for key in args.scenarios:
        n = args.max_eval_instances or MAX_EVAL.get(key, 10)
        root = hc.scenario_data_root(key, data_root, work)
        results += compare_scenario(key, out, root, args.augmentations or list(AUGMENTATIONS), n, args.golden)
    results += compare_crafted(out, data_root, args.augmentations or list(AUGMENTATIONS), args.golden)
    print()
    print(format_table(results))
    if args.report:
        args.report.write_text(json.dumps(results, indent=1) + "\n")
    ok = all(
        r["inputs_identical"] == r["prompts_identical"] == r["helm_variants"] == r["holistic_variants"]
        and not r["only_helm"]
        and not r["only_holistic"]
        for r in results
    )
    return 0 if ok else 1


def _golden_variant(row: dict[str, Any], original: dict[str, Any], full_prompt: bool) -> dict[str, Any]:
    """A variant as the golden file keeps it: references only where HELM changed them, the prompt
    in full for the first (its sha256 for all)."""
    keep = ["id", "helm_id", "perturbation", "input", "prompt_sha256"]
    if row["references"] != original["references"]:
        keep.append("references")
    if full_prompt:
        keep.append("prompt")
    return {k: row[k] for k in keep}


def compare_scenario(
    key: str, out: Path, data_root: Path, augmentations: list[str], n: int, golden_dir: Path | None
) -> list[dict[str, Any]]:
    """Compare every augmentation HELM ran on ``key``; write its golden file into ``golden_dir``."""
    from holistic.helm.proofs import keeps_unchanged_variants
    from holistic.perturbations.helm_base import with_helm_ids

    loaded = hc.holistic_instances(key, data_root)
    # HELM's runner numbered the instances its loader made (id<n>); holistic's are the same, in order
    id_map = {f"id{i}": inst.id for i, inst in enumerate(loaded)}
    by_id = {inst.id: inst for inst in with_helm_ids(loaded)}
    train = [i for i in loaded if i.split == "train"]
    # HELM keeps a variant whose input is unchanged on its PassageQuestionInput scenarios
    keep = keeps_unchanged_variants(SCENARIOS[key][0], SCENARIOS[key][1])
    correct_only = key in hc._CORRECT_ONLY
    results, golden, first, shown = [], {}, None, []
    for augmentation in augmentations:
        helm = helm_variants(helm_run_dir(out, key, augmentation), id_map)
        first = first or helm
        # a variant's prompt may fit in-context examples its original's had no room for
        shown += [row["prompt"] for row in [*helm["originals"].values(), *helm["variants"]]]
        originals = [by_id[i] for i in helm["originals"]]
        ours = holistic_variants(key, originals, train, AUGMENTATIONS[augmentation], data_root, keep)
        if correct_only:  # HELM's loader gives the correct reference alone (neither prompt nor score reads the others)
            for row in ours.values():
                row["references"] = [r for r in row["references"] if "correct" in r[1]]
        result = {"scenario": key, **compare(augmentation, helm, ours)}
        results.append(result)
        print(format_row(result), flush=True)
        golden[augmentation] = {
            "holistic_perturbations": AUGMENTATIONS[augmentation],
            "helm_perturbations": list(
                {json.dumps(v["helm_perturbation"]): v["helm_perturbation"] for v in helm["variants"]}.values()
            ),
            "evaluated": list(helm["originals"]),
            "examples_dropped": helm["examples_dropped"],
            "variants": [
                _golden_variant(row, helm["originals"][row["id"]], i < 1) for i, row in enumerate(helm["variants"])
            ],
        }
    if golden_dir is not None and first is not None:
        dropped = any(g["examples_dropped"] for g in golden.values())
        name, args, entry = SCENARIOS[key]
        doc = {
            "made_by": f"crfm-helm {hc.HELM_VERSION} helm-run --dry-run, scripts/helm_perturbation_conformance.py",
            "scenario": name,
            "args": args,
            "helm_run_entry": entry,
            "helm_ids": True,
            # HELM's loader lists the correct reference alone where holistic lists every label
            "correct_references_only": correct_only,
            # HELM left out in-context examples to fit some prompt into the window: the tests
            # then count with the model's own tokenizer, as HELM did.
            "examples_dropped": dropped,
            "max_eval_instances": n,
            "not_run": NOT_RUN,
            "originals": [
                {k: o[k] for k in ("id", "helm_id", "split", "input", "references")}
                for o in first["originals"].values()
            ],
            # The pool in order (HELM's draw reads it); only the examples the prompts show carry their
            # text, unless HELM left some out to fit a prompt (then every one: the fit counts them).
            "train": [
                {
                    "id": t.id,
                    "input": t.input if dropped or any(t.input in p for p in shown) else None,
                    "references": [[r.output, list(r.tags)] for r in t.references],
                }
                for t in train
            ],
            "augmentations": golden,
        }
        golden_dir.mkdir(parents=True, exist_ok=True)
        target = golden_dir / f"perturbations_{key}.json"
        target.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return results


def format_row(r: dict[str, Any]) -> str:
    n = r["helm_variants"]
    return (
        f"{r['scenario']} {r['augmentation']} ({', '.join(r['perturbations'])}): {r['originals']} instances, variants HELM {n} / "
        f"holistic {r['holistic_variants']}; inputs {r['inputs_identical']}/{n}, references "
        f"{r['references_identical']}/{n}, prompts {r['prompts_identical']}/{n}"
        + (f"; only HELM: {r['only_helm'][:5]}" if r["only_helm"] else "")
        + (f"; only holistic: {r['only_holistic'][:5]}" if r["only_holistic"] else "")
    )


def format_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | HELM data_augmentation | holistic perturbations | variants (HELM / holistic) | inputs identical "
        "| prompts identical |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        n = r["helm_variants"]
        lines.append(
            f"| {r['scenario']} | `{r['augmentation']}` | {', '.join(r['perturbations'])} | {n} / {r['holistic_variants']} | "
            f"{r['inputs_identical']}/{n} | {r['prompts_identical']}/{n} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
