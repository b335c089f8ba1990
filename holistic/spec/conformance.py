"""What is proven about a run's HELM conformance, from what each scenario declares.

A run under ``protocol: helm`` claims HELM 0.5.16's protocol. The claim is **proven**
only where a golden file made by HELM itself, and a test checking holistic against it in
CI, cover both the run's scenario and every one of its perturbations (with these
arguments); otherwise the run's conformance is only **claimed**, and :func:`conformance`
says what was never compared or what differs. Each scenario declares its own proof
(``ScenarioInfo.helm_proof``, read from the scenario registry by :func:`scenario_proof`);
:data:`PERTURBATION_PROOFS` declares the perturbations'. ``tests/spec/test_conformance_table.py``
keeps both in sync with the golden files under ``tests/conformance/``.

``--plan``, every run's ``run_spec.json`` (``helm_conformance``) and the site's run page
show the verdict; a perturbation with a named deviation (HELM's data cannot be had
here: :class:`holistic.perturbations.helm_base.Deviation`) gets a warning in ``--plan``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from holistic.core.interfaces import ScenarioProof
from holistic.core.types import PerturbationSpec, RunSpec

PROVEN = "proven"
CLAIMED = "claimed"
NOT_CLAIMED = "not claimed"


@dataclass(frozen=True)
class PerturbationProof:
    """A perturbation (with these arguments) compared variant by variant with HELM's on a scenario."""

    scenario: str
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    golden: str = "perturbations_mmlu.json"
    augmentation: str = ""
    """HELM's ``data_augmentation`` the golden file holds it under."""

    def matches(self, scenario: str, spec: PerturbationSpec) -> bool:
        return scenario == self.scenario and spec.name == self.name and dict(spec.args_dict) == dict(self.args)


_PERTURBATION_TEST = "tests/conformance/test_perturbations_golden_helm.py"


def scenario_proof(scenario: str) -> ScenarioProof | None:
    """The proof the scenario declares (``ScenarioInfo.helm_proof``); ``None`` when HELM never
    compared it or no scenario has that name."""
    from holistic.scenarios.registry import SCENARIOS

    if scenario not in SCENARIOS:
        return None
    return SCENARIOS.get(scenario).info.helm_proof


def scenario_proofs() -> dict[str, ScenarioProof]:
    """Every registered scenario's declared proof (scenarios absent: HELM never compared)."""
    from holistic.scenarios.registry import SCENARIOS

    found = {name: scenario_proof(name) for name in SCENARIOS.names()}
    return {name: proof for name, proof in found.items() if proof is not None}


PERTURBATION_PROOFS: tuple[PerturbationProof, ...] = (
    # every single perturbation HELM names, on MMLU anatomy and BoolQ
    *(
        PerturbationProof(scenario, name, args, golden=f"perturbations_{scenario}.json", augmentation=augmentation)
        for scenario in ("mmlu", "boolq")
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
    ),
    # HELM's core robustness (mild_mix) and fairness (dialect, gender pronouns; person names deviate) runs
    *(
        PerturbationProof(scenario, name, args, golden=f"perturbations_{key}.json", augmentation=augmentation)
        for scenario, key in (
            ("truthful_qa", "truthful_qa"),
            ("imdb", "imdb"),
            ("raft", "raft"),
            ("narrative_qa", "narrative_qa"),
            ("quac", "quac"),
            ("hellaswag", "hellaswag"),
            ("openbookqa", "openbookqa"),
            ("civil_comments", "civil_comments"),
            ("natural_qa", "natural_qa_closedbook"),
            ("natural_qa", "natural_qa_openbook_longans"),
        )
        for name, args, augmentation in (
            ("mild_mix", {}, "robustness"),
            ("dialect", {"prob": 1.0}, "fairness"),
            ("gender", {"mode": "pronouns", "prob": 1.0}, "fairness"),
        )
    ),
)
"""Perturbations whose HELM variants and prompts holistic reproduces on a scenario (golden + test).

``person_names`` and ``synonyms`` are absent on purpose: both carry a named deviation
(HELM's name list and HELM's WordNet export cannot be had), so they cannot be proven."""


@dataclass(frozen=True)
class Conformance:
    """A run's HELM conformance: the verdict and, unless proven, why."""

    status: str
    """``proven``, ``claimed`` (under ``protocol: helm`` without full proof) or ``not claimed``."""
    reasons: tuple[str, ...] = ()
    """What was never compared, or what differs (empty when proven)."""
    deviations: tuple[str, ...] = ()
    """Named deviations of the run's perturbations (each also a reason)."""
    evidence: tuple[str, ...] = ()
    """The golden files the proven parts rest on."""

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reasons": list(self.reasons),
            "deviations": list(self.deviations),
            "evidence": list(self.evidence),
        }

    def summary(self) -> str:
        if self.status != CLAIMED:
            return self.status
        return f"{CLAIMED}: " + "; ".join(self.reasons)


def perturbation_deviation(spec: PerturbationSpec) -> str | None:
    """The named deviation of HELM's algorithm for ``spec`` under ``protocol: helm`` (``None``: none)."""
    from holistic.perturbations.registry import perturbation_class

    deviation = getattr(perturbation_class(spec.name, "helm"), "deviation", None)
    return None if deviation is None else f"perturbation {spec.name!r} deviates from HELM: {deviation.reason}"


def conformance(run: RunSpec) -> Conformance:
    """The verdict for ``run`` (see the module docstring)."""
    if run.adapter.protocol != "helm":
        return Conformance(NOT_CLAIMED, ("protocol 'holistic': HELM's protocol is not claimed",))
    scenario = run.scenario.name
    reasons: list[str] = []
    deviations: list[str] = []
    evidence: list[str] = []
    proof = scenario_proof(scenario)
    if proof is None:
        reasons.append(f"scenario {scenario!r}: never compared with HELM")
    else:
        if proof.golden is not None:
            evidence.append(proof.golden)
        if not proof.proven or proof.golden is None:
            reasons.append(f"scenario {scenario!r}: {proof.note}")
        args = run.scenario.args_dict
        for name, value in proof.requires.items():
            if args.get(name, value) != value:
                reasons.append(
                    f"scenario {scenario!r} with {name} {args[name]!r}: HELM's run was compared with {name} {value!r} only"
                )
    for spec in run.perturbations:
        deviation = perturbation_deviation(spec)
        if deviation is not None:
            deviations.append(deviation)
            reasons.append(deviation)
            continue
        found = next((p for p in PERTURBATION_PROOFS if p.matches(scenario, spec)), None)
        if found is not None:
            evidence.append(f"{found.golden} ({found.augmentation})")
            continue
        elsewhere = [p for p in PERTURBATION_PROOFS if p.name == spec.name]
        shown = _show(spec)
        if elsewhere:
            compared = ", ".join(dict.fromkeys(f"{p.scenario} with {_show_args(p.args)}" for p in elsewhere))
            reasons.append(f"perturbation {shown}: HELM's algorithm, compared with HELM on {compared} only")
        else:
            reasons.append(f"perturbation {shown}: never compared with HELM")
    status = PROVEN if not reasons else CLAIMED
    return Conformance(status, tuple(reasons), tuple(deviations), tuple(dict.fromkeys(evidence)))


def _show_args(args: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in sorted(args.items())) + "}" if args else "no arguments"


def _show(spec: PerturbationSpec) -> str:
    return f"{spec.name!r} ({_show_args(spec.args_dict)})"
