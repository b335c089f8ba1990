"""Run HELM's own perturbations and holistic's (``protocol: helm``) on the same instances, and compare.

HELM (crfm-helm 0.5.16, installed in its own environment by ``tools.conformance.helm.environment.helm_venv``)
runs ``helm-run --dry-run`` on every core scenario the conformance harness runs unperturbed
(``tools.conformance.helm.keys.SCENARIOS``: MS MARCO's two tracks, and CNN/DailyMail and XSum at HELM's
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

    python -m tools.conformance.helm.perturbations --data-root DATA \\
        --golden tests/conformance --report perturbation_conformance.json

``--golden DIR`` writes ``perturbations_<scenario>.json`` (HELM's variants and prompt hashes) for
``tests/conformance/test_perturbations_golden_helm.py``, which checks holistic against it
without HELM. Runs are ``nice``d; the dry runs take about ten minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tools.common import PEERS_CACHE, default_data_root
from tools.conformance.helm.compare import CORRECT_ONLY
from tools.conformance.helm.environment import helm_venv, write_prod_env
from tools.conformance.helm.keys import HELM_MODEL, HELM_VERSION
from tools.conformance.helm.perturbation_runs import (
    AUGMENTATIONS,
    HELM_NAMES,
    MAX_EVAL,
    NOT_RUN,
    SCENARIOS,
    compare,
    helm_run_dir,
    helm_variants,
    holistic_variants,
)
from tools.conformance.helm.running import HELM_RUN_PATCHED
from tools.conformance.helm.staging import helm_patches, holistic_instances, prepare_helm_instances, scenario_data_root

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

HELM_CRAFTED = Path(__file__).with_name("peer") / "helm_perturb_crafted.py"
"""HELM's ``DataAugmenter`` on :data:`CRAFTED`: a program run by HELM's interpreter."""


def run_helm_direct(out: Path, helm_python: Path, augmentations: list[str]) -> Path:
    """HELM's ``DataAugmenter`` (as its runner calls it) on :data:`CRAFTED`; returns its output file."""
    target = out / "crafted_variants.json"
    subprocess.run(
        ["nice", str(helm_python), str(HELM_CRAFTED), json.dumps(CRAFTED), json.dumps(augmentations), str(target)],
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
    from holistic.perturbations.base import HELM_ID_KEY

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
        made = apply_perturbations(originals, specs, seed=0, helm=True, data_root=data_root, offline=True)
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
            "made_by": f"crfm-helm {HELM_VERSION} DataAugmenter, tools.conformance.helm.perturbations",
            "crafted": CRAFTED,
            "augmentations": golden,
        }
        path = golden_dir / "perturbations_crafted.json"
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return results


def place_helm_resources(out: Path, data_root: Path) -> None:
    """HELM's dialect dictionary and a person-name file where HELM's downloads would write them."""
    from holistic.helm.perturbations.fairness import helm_name_file_lines
    from holistic.helm.perturbations.resources import DIALECT, resource_path

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
    HELM's process (``staging.helm_patches``: RAFT's dataset call)."""
    base = SCENARIOS[key][2]
    entries = [f"{base}{',' if ':' in base else ':'}data_augmentation={a},model={HELM_MODEL}" for a in augmentations]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    subprocess.run(
        [
            "nice",
            str(helm_python),
            str(HELM_RUN_PATCHED),
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.conformance.helm.perturbations", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--data-root", type=Path, default=default_data_root())
    p.add_argument("--max-eval-instances", type=int, help="default: 40 for MMLU, 20 for BoolQ, 10 elsewhere")
    p.add_argument(
        "--augmentations",
        nargs="*",
        choices=list(AUGMENTATIONS),
        help="default: every one",
    )
    p.add_argument("--scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    p.add_argument("--work-dir", type=Path, default=PEERS_CACHE / "helm_perturbations")
    p.add_argument("--helm-venv", type=Path, default=PEERS_CACHE / "helm")
    p.add_argument("--golden", type=Path, help="write perturbations_<scenario>.json (HELM's variants) into this folder")
    p.add_argument("--report", type=Path)
    p.add_argument("--compare-only", action="store_true", help="compare the HELM runs already in --work-dir")
    p.add_argument("--keep", action="store_true", help="keep --work-dir (and the HELM runs already in it)")
    args = p.parse_args(argv)

    from holistic.models.weights import converted_gguf_dir, embedded_gguf_path

    data_root = args.data_root.resolve()
    work = args.work_dir.resolve()
    out = work / "helm"
    if not args.compare_only:
        helm_python = helm_venv(args.helm_venv)
        if work.exists() and not args.keep:
            shutil.rmtree(work)
        out.mkdir(parents=True, exist_ok=True)
        write_prod_env(work / "prod_env", converted_gguf_dir(embedded_gguf_path()))
        place_helm_resources(out, data_root)
        for key in args.scenarios:
            root = scenario_data_root(key, data_root, work)  # the files the harness gives both tools
            prepare_helm_instances(key, out, root, helm_python)
            n = args.max_eval_instances or MAX_EVAL.get(key, 10)
            augmentations = args.augmentations or list(AUGMENTATIONS)
            run_helm_dry(out, helm_python, work / "prod_env", key, n, augmentations, helm_patches(key, root))
        run_helm_direct(out, helm_python, args.augmentations or list(AUGMENTATIONS))

    results = []
    for key in args.scenarios:
        n = args.max_eval_instances or MAX_EVAL.get(key, 10)
        root = scenario_data_root(key, data_root, work)
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
    from holistic.perturbations.base import with_helm_ids

    loaded = holistic_instances(key, data_root)
    # HELM's runner numbered the instances its loader made (id<n>); holistic's are the same, in order
    id_map = {f"id{i}": inst.id for i, inst in enumerate(loaded)}
    by_id = {inst.id: inst for inst in with_helm_ids(loaded)}
    train = [i for i in loaded if i.split == "train"]
    # HELM keeps a variant whose input is unchanged on its PassageQuestionInput scenarios
    keep = keeps_unchanged_variants(SCENARIOS[key][0], SCENARIOS[key][1])
    correct_only = key in CORRECT_ONLY
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
            "made_by": f"crfm-helm {HELM_VERSION} helm-run --dry-run, tools.conformance.helm.perturbations",
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
