"""holistic's perturbations under ``protocol: helm`` against HELM's own, without installing HELM.

``perturbations_<scenario>.json`` were written by ``scripts/helm_perturbation_conformance.py``
from ``helm-run --dry-run`` (crfm-helm 0.5.16) on every core scenario (MS MARCO's two tracks,
CNN/DailyMail and XSum included), once per HELM ``data_augmentation`` (its robustness run, the
single perturbations, the deterministic fairness runs, its fairness run and ``canonical``):
HELM's loader on the files the conformance harness writes, its ids, sample, ``DataAugmenter``
and adapter. For each
augmentation the tests perturb the same originals with the corresponding holistic specs
and check that holistic makes exactly HELM's variants (HELM drops the unchanged ones),
with HELM's input and references byte for byte, and that the prompts holistic builds
from them are HELM's (by sha256; the first of each augmentation in full).

Dialect and gender read HELM's resources from the data root (``HOLISTIC_DATA_ROOT`` or
``../shared/data``: ``helm_perturbations/``), and are skipped with a reason without them.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from holistic.adaptation import adapt
from holistic.core.types import Instance, PerturbationSpec, Reference, RequestState
from holistic.helm.proofs import keeps_unchanged_variants, perturbation_proofs
from holistic.models.registry import ModelRegistry
from holistic.perturbations import apply_perturbations
from holistic.perturbations.helm_base import HELM_ID_KEY
from holistic.spec import compile_spec
from tests.conformance.test_conformance_golden import _embedded_tokenizer, _RoomyTokenizer

HERE = Path(__file__).resolve().parent
CRAFTED = HERE / "perturbations_crafted.json"
GOLDEN = sorted(p for p in HERE.glob("perturbations_*.json") if p != CRAFTED)  # one per scenario
MODEL = "embedded/smollm2-135m-instruct"
NEEDS_HELM_DATA = ("dialect", "gender")


@cache
def _golden(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _data_root() -> Path | None:
    env = os.environ.get("HOLISTIC_DATA_ROOT")
    for candidate in ([Path(env)] if env else []) + [HERE.parents[2] / "shared" / "data"]:
        if (candidate / "helm_perturbations").is_dir():
            return candidate
    return None


def _refs(raw: list[list[Any]]) -> tuple[Reference, ...]:
    return tuple(Reference(text, tuple(tags)) for text, tags in raw)


def _originals(golden: dict[str, Any]) -> dict[str, Instance]:
    return {
        o["id"]: Instance(
            id=o["id"],
            input=o["input"],
            references=_refs(o["references"]),
            split=o["split"],
            metadata={HELM_ID_KEY: o["helm_id"]},
        )
        for o in golden["originals"]
    }


def _adapter(golden: dict[str, Any], tmp_path: Path) -> Any:
    spec = {
        "suite": "golden",
        "protocol": "helm",
        "models": [MODEL],
        "runs": [{"scenario": golden["scenario"], "args": golden["args"], "perturbations": []}],
    }
    path = tmp_path / "golden.yaml"
    path.write_text(json.dumps(spec), encoding="utf-8")
    (run,) = compile_spec(path).runs
    return run.adapter


CASES = [(path, augmentation) for path in GOLDEN for augmentation in sorted(_golden(path)["augmentations"])]
IDS = [f"{path.stem.removeprefix('perturbations_')}-{augmentation}" for path, augmentation in CASES]


def _tokenizer(golden: dict[str, Any]) -> Any:
    """Roomy where HELM kept every in-context example; else the model's own tokenizer, as HELM counted."""
    if not golden["examples_dropped"]:
        return _RoomyTokenizer()
    return _embedded_tokenizer()


def _variants(golden: dict[str, Any], augmentation: str) -> tuple[dict[str, Any], list[Instance]]:
    entry = golden["augmentations"][augmentation]
    specs = [PerturbationSpec.make(s["name"], s.get("args", {})) for s in entry["holistic_perturbations"]]
    root = _data_root()
    if root is None and any(s.name in NEEDS_HELM_DATA for s in specs):
        pytest.skip(
            "HELM's perturbation resources not available (set HOLISTIC_DATA_ROOT or place them at ../shared/data)"
        )
    originals = _originals(golden)
    evaluated = [originals[i] for i in entry["evaluated"]]
    # HELM keeps a variant whose input is unchanged on its PassageQuestionInput scenarios (where
    # HELM's loader made the instances): what the HELM layer records, as a run reads it
    keep = golden["helm_ids"] and keeps_unchanged_variants(golden["scenario"], golden["args"])
    out = apply_perturbations(
        evaluated, specs, seed=0, protocol="helm", data_root=root, offline=True, keep_unchanged=keep
    )
    return entry, [v for v in out if v.perturbation is not None]


def _key(inst: Instance) -> tuple[str, str]:
    assert inst.perturbation is not None
    return inst.id, inst.perturbation.name.split("~")[0]


AUGMENTATIONS = (
    *("robustness", "misspelling_medium", "typo_easy", "lower", "contract", "space"),
    *("dialect_deterministic", "gender_terms_deterministic", "gender_pronouns_deterministic"),
    *("person_name_first_deterministic", "person_name_last_deterministic", "fairness", "canonical"),
)
"""HELM's augmentations every golden file holds: its robustness run, the single robustness
perturbations, the deterministic fairness runs, its fairness run and its core setting (canonical)."""


def test_golden_files_exist() -> None:
    """Each golden file the proof declarations name (every core scenario, MS MARCO's two tracks
    and the summarization scenarios included) holds every one of HELM's augmentations."""
    named = {proof.golden for proof in perturbation_proofs()}
    assert {p.name for p in GOLDEN} == named
    assert {"perturbations_msmarco_regular.json", "perturbations_msmarco_trec.json"} <= named
    assert {"perturbations_cnn_dailymail.json", "perturbations_xsum.json"} <= named
    for name in named:
        assert set(_golden(HERE / name)["augmentations"]) == set(AUGMENTATIONS), name


def test_core_suite_asks_for_helms_canonical_perturbations() -> None:
    """HELM's core entries run ``data_augmentation=canonical`` (its robustness and fairness
    perturbations in one ``DataAugmenter``); each run of runspecs/core.yaml asks for the same
    perturbations in the same order, whose variants and prompts the golden files' ``canonical``
    entries hold. CNN/DailyMail and XSum are unperturbed, as HELM's core entries are."""
    scenarios = {_golden(path)["scenario"]: _golden(path) for path in GOLDEN}
    for run in compile_spec(HERE.parents[1] / "runspecs" / "core.yaml").runs:
        if run.scenario.name in ("cnn_dailymail", "xsum"):
            assert run.perturbations == (), run.run_id
            continue
        entry = scenarios[run.scenario.name]["augmentations"]["canonical"]
        wanted = [PerturbationSpec.make(s["name"], s.get("args", {})) for s in entry["holistic_perturbations"]]
        assert list(run.perturbations) == wanted, run.run_id


@pytest.mark.parametrize(("path", "augmentation"), CASES, ids=IDS)
def test_holistic_makes_helms_variants(path: Path, augmentation: str) -> None:
    golden = _golden(path)
    entry, ours = _variants(golden, augmentation)
    helm = {(v["id"], v["perturbation"]): v for v in entry["variants"]}
    mine = {_key(v): v for v in ours}
    assert sorted(mine) == sorted(helm), "variants made (HELM drops those whose input is unchanged)"
    originals = {o["id"]: o for o in golden["originals"]}
    for key, theirs in helm.items():
        assert mine[key].input == theirs["input"], key
        # the golden keeps a variant's references only where HELM rewrote them
        references = theirs.get("references", originals[key[0]]["references"])
        # where HELM's loader lists the correct reference alone, holistic's others are left out
        made = [r for r in mine[key].references if r.is_correct or not golden.get("correct_references_only")]
        assert [[r.output, list(r.tags)] for r in made] == references, key


@pytest.mark.parametrize(("path", "augmentation"), CASES, ids=IDS)
def test_prompts_of_the_variants_are_helms(path: Path, augmentation: str, tmp_path: Path) -> None:
    golden = _golden(path)
    entry, ours = _variants(golden, augmentation)
    # A training example no prompt shows has no text in the file (HELM's draw never reads it).
    train = [
        Instance(id=t["id"], input=t["input"] or "", references=_refs(t["references"]), split="train")
        for t in golden["train"]
    ]
    deployment = ModelRegistry().get(MODEL)
    states = adapt(train, ours, _adapter(golden, tmp_path), deployment, _tokenizer(golden), seed=0)
    requests: dict[tuple[str, str], list[RequestState]] = {}
    for state in states:
        if state.trial == 0:
            requests.setdefault(_key(state.instance), []).append(state)
    prompts = {key: _joined_prompt(made) for key, made in requests.items()}
    for theirs in entry["variants"]:
        prompt = prompts[(theirs["id"], theirs["perturbation"])]
        if "prompt" in theirs:
            assert prompt == theirs["prompt"]
        assert hashlib.sha256(prompt.encode("utf-8")).hexdigest() == theirs["prompt_sha256"], theirs["id"]


def _joined_prompt(states: list[RequestState]) -> str:
    """A variant's prompts as the golden file hashes them: the prompt of its one request; for
    separate scoring each choice's request (prompt and the continuation HELM echoes in it) and
    calibration request, ordered by choice and role, joined by ``\\n\\x00\\n``."""
    sent = [
        (
            -1 if s.reference_index is None else s.reference_index,
            str(s.role),
            s.request.prompt + (s.request.continuation if s.request.kind == "loglikelihood" else ""),
        )
        for s in states
    ]
    if len(sent) == 1:
        return sent[0][2]
    return "\n\x00\n".join(text for _, _, text in sorted(sent))


def test_mild_mix_draws_spaces_after_misspellings_as_helm() -> None:
    """The difference issue 27 found: HELM draws mild_mix's spaces from the generator its
    misspellings used, seeded by HELM's id alone; holistic drew them apart."""
    entry, ours = _variants(_golden(HERE / "perturbations_mmlu.json"), "robustness")
    helm = {v["id"]: v["input"] for v in entry["variants"]}
    assert len(helm) == len(entry["evaluated"])  # lower-casing changes every MMLU question
    assert [v.input for v in ours] == [helm[v.id] for v in ours]
    assert any("  " in text for text in helm.values())


CRAFTED_CASES = sorted(_golden(CRAFTED)["augmentations"])


@pytest.mark.parametrize("augmentation", CRAFTED_CASES)
def test_helms_data_augmenter_on_crafted_sentences(augmentation: str) -> None:
    """Names (first and last, kept the same across references and input), pronouns and gendered
    terms, which MMLU anatomy and a small BoolQ sample hardly have: HELM's ``DataAugmenter`` run
    on sentences written for this, against holistic under ``protocol: helm``."""
    golden = _golden(CRAFTED)
    entry = golden["augmentations"][augmentation]
    specs = [PerturbationSpec.make(s["name"], s.get("args", {})) for s in entry["holistic_perturbations"]]
    root = _data_root()
    if root is None and any(s.name in NEEDS_HELM_DATA for s in specs):
        pytest.skip(
            "HELM's perturbation resources not available (set HOLISTIC_DATA_ROOT or place them at ../shared/data)"
        )
    originals = [
        Instance(
            id=f"crafted-{i}",
            input=text,
            references=tuple(Reference(r, ("correct",) if ok else ()) for r, ok in refs),
            metadata={HELM_ID_KEY: f"id{i}"},
        )
        for i, (text, refs) in enumerate(golden["crafted"])
    ]
    made = apply_perturbations(originals, specs, seed=0, protocol="helm", data_root=root, offline=True)
    ours = [
        {
            "helm_id": v.metadata[HELM_ID_KEY],
            "perturbation": _key(v)[1],
            "input": v.input,
            "references": [[r.output, list(r.tags)] for r in v.references],
        }
        for v in made
        if v.perturbation is not None
    ]
    key = lambda v: (v["helm_id"], v["perturbation"])  # noqa: E731
    assert sorted(ours, key=key) == sorted(entry["variants"], key=key)
