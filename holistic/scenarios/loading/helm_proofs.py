"""The HELM goldens scenarios declare: the suites' request goldens (``ScenarioInfo.helm_proof``)
and the perturbation goldens (``ScenarioInfo.helm_perturbation_proofs``).

HELM Safety's golden holds the candidate requests and HELM runner's sample (the judge prompts
and parsing are in ``judges_helm.json``); HELM Capabilities' holds the candidate requests.
A proof with a ``note`` is only claimed: the note names what was never compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from holistic.core.interfaces import PerturbationProof, ScenarioProof

_SAFETY = ("safety/helm_requests.json.gz", "tests/conformance/test_conformance_safety.py")
_CAPABILITIES = ("capabilities/helm_requests.json", "tests/conformance/test_conformance_capabilities.py")


def safety_proof(note: str = "") -> ScenarioProof:
    """HELM Safety's golden: proven unless ``note`` says what differs."""
    return ScenarioProof(golden=_SAFETY[0], test=_SAFETY[1], proven=not note, note=note)


def capabilities_proof(note: str = "") -> ScenarioProof:
    """HELM Capabilities' golden: proven unless ``note`` says what differs."""
    return ScenarioProof(golden=_CAPABILITIES[0], test=_CAPABILITIES[1], proven=not note, note=note)


def hub_copy_note(hub: str) -> str:
    """The note of a scenario HELM reads from a Hugging Face copy that could not be had."""
    return (
        f"requests equal HELM's on the authors' CSV rows; HELM reads the Hub copy {hub}, which could not be had "
        "here (its rows and their order are taken to be the CSV's)"
    )


def release_rows_note(what: str) -> str:
    """The note of a scenario compared only on rows written in its release's schema."""
    return (
        "requests (and judge prompts) equal HELM's on rows written in the release's schema; "
        f"the real {what} {'were' if what.endswith('s') else 'was'} never read by both"
    )


def pickle_proof(dataset: str, pickle: str, golden: str) -> ScenarioProof:
    """The proof of a scenario HELM reads from its own pickle: claimed, with the deviation named."""
    return ScenarioProof(
        golden=golden,
        proven=False,
        note=f"a named deviation: HELM 0.5.16 reads its own preprocessed pickle of {dataset} ({pickle}), which "
        "holistic does not load (unpickling runs code); instances, prompts, requests and stats equal HELM's on a "
        "pickle written from the same records as the authors' files holistic reads, but HELM's own pickle was "
        "never read by both",
    )


def helm_augmentation_proofs(scenario: str, **keys: Mapping[str, Any]) -> tuple[PerturbationProof, ...]:
    """The perturbations of HELM's augmentations compared on ``scenario`` by
    ``tools/conformance/helm/perturbations.py`` (``perturbations_<key>.json`` for each key, with
    the scenario arguments of its run; default the scenario's name: HELM's runner, on HELM's loader
    reading the files the conformance harness writes, with HELM's instance ids and per-instance
    seeding): its robustness run (``mild_mix``),
    the single robustness perturbations, and the deterministic dialect and gender runs (also the
    fairness and canonical runs' dialect and gender pronouns). ``person_names`` and ``synonyms``
    are absent on purpose: both carry a named deviation (HELM's name list and WordNet export
    cannot be had)."""
    return tuple(
        PerturbationProof(
            scenario, name, args, golden=f"perturbations_{key}.json", augmentation=augmentation, scenario_args=run
        )
        for key, run in (keys or {scenario: {}}).items()
        for name, args, augmentation in (
            ("mild_mix", {}, "robustness"),
            ("misspellings", {"prob": 0.2}, "misspelling_medium"),
            ("typos", {"prob": 0.1}, "typo_easy"),
            ("lowercase", {}, "lower"),
            ("contractions", {}, "contract"),
            ("expansions", {}, "contract"),
            ("whitespace", {"max_spaces": 3}, "space"),
            ("dialect", {"prob": 1.0}, "dialect_deterministic"),
            ("gender", {"mode": "terms", "prob": 1.0}, "gender_terms_deterministic"),
            ("gender", {"mode": "pronouns", "prob": 1.0}, "gender_pronouns_deterministic"),
        )
    )
