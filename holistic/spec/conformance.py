"""What is proven about a run's HELM conformance, from one declared table.

A run under ``protocol: helm`` claims HELM 0.5.16's protocol. The claim is **proven**
only where a golden file made by HELM itself, and a test checking holistic against it in
CI, cover both the run's scenario and every one of its perturbations (with these
arguments); otherwise the run's conformance is only **claimed**, and :func:`conformance`
says what was never compared or what differs. :data:`SCENARIO_PROOFS` and
:data:`PERTURBATION_PROOFS` are that table; ``tests/spec/test_conformance_table.py``
keeps it in sync with the golden files under ``tests/conformance/``.

``--plan``, every run's ``run_spec.json`` (``helm_conformance``) and the site's run page
show the verdict; a perturbation with a named deviation (HELM's data cannot be had
here: :class:`holistic.perturbations.helm_base.Deviation`) gets a warning in ``--plan``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from holistic.core.types import PerturbationSpec, RunSpec

PROVEN = "proven"
CLAIMED = "claimed"
NOT_CLAIMED = "not claimed"


@dataclass(frozen=True)
class ScenarioProof:
    """A scenario whose prompts, requests and scores were compared with HELM's own run."""

    golden: str
    """Golden file under ``tests/conformance/``."""
    test: str
    """The test module that checks holistic against it."""
    proven: bool
    """Whether the golden covers the whole protocol (HELM's own loader included)."""
    note: str = ""
    """What the golden leaves uncompared (shown when ``proven`` is false)."""


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


_GOLDEN_TEST = "tests/conformance/test_conformance_golden.py"
_PERTURBATION_TEST = "tests/conformance/test_perturbations_golden_helm.py"

_SAFETY_GOLDEN = "safety/helm_requests.json.gz"
_SAFETY_TEST = "tests/conformance/test_conformance_safety.py"
_CAPABILITIES_GOLDEN = "capabilities/helm_requests.json"
_CAPABILITIES_TEST = "tests/conformance/test_conformance_capabilities.py"
_HUB_COPY = (
    "requests equal HELM's on the authors' CSV rows; HELM reads the Hub copy %s, which could not be had here "
    "(its rows and their order are taken to be the CSV's)"
)

_RELEASE_ROWS = (
    "requests (and judge prompts) equal HELM's on rows written in the release's schema; "
    "the real %s were never read by both"
)

_LOADERS_ONLY = "HELM's loader gives the same instances on the same bytes; prompts and stats never compared"

SCENARIO_PROOFS: dict[str, ScenarioProof] = {
    "mmlu": ScenarioProof(golden="mmlu.json", test=_GOLDEN_TEST, proven=True),
    "boolq": ScenarioProof(golden="boolq.json", test=_GOLDEN_TEST, proven=True),
    "raft": ScenarioProof(golden="raft.json", test=_GOLDEN_TEST, proven=True),
    "truthful_qa": ScenarioProof(golden="truthful_qa.json", test=_GOLDEN_TEST, proven=True),
    "narrative_qa": ScenarioProof(golden="narrative_qa.json", test=_GOLDEN_TEST, proven=True),
    "imdb": ScenarioProof(
        golden="imdb.json",
        test=_GOLDEN_TEST,
        proven=False,
        note="loader, prompts and stats equal HELM's on the same files, but HELM reads the archive's reviews "
        "in a pinned order it downloads, which could not be had here: a sample of the full archive may differ",
    ),
    "quac": ScenarioProof(golden="loaders/quac.json", test=_GOLDEN_TEST, proven=False, note=_LOADERS_ONLY),
    "hellaswag": ScenarioProof(golden="loaders/hellaswag.json", test=_GOLDEN_TEST, proven=False, note=_LOADERS_ONLY),
    "openbookqa": ScenarioProof(golden="loaders/openbookqa.json", test=_GOLDEN_TEST, proven=False, note=_LOADERS_ONLY),
    # HELM Safety: candidate requests and sampling (HELM's scenarios, run specs and runner), judge prompts
    # and parsing (judges_helm.json), HELM's safety stats.
    "harm_bench": ScenarioProof(golden=_SAFETY_GOLDEN, test=_SAFETY_TEST, proven=True),
    "xstest": ScenarioProof(golden=_SAFETY_GOLDEN, test=_SAFETY_TEST, proven=False, note=_HUB_COPY % "walledai/XSTest"),
    "simple_safety_tests": ScenarioProof(
        golden=_SAFETY_GOLDEN, test=_SAFETY_TEST, proven=False, note=_HUB_COPY % "Bertievidgen/SimpleSafetyTests"
    ),
    "anthropic_red_team": ScenarioProof(
        golden=_SAFETY_GOLDEN,
        test=_SAFETY_TEST,
        proven=False,
        note="requests equal HELM's on a small file in the published format; the real file was never read by both",
    ),
    "bbq": ScenarioProof(
        golden=_SAFETY_GOLDEN,
        test=_SAFETY_TEST,
        proven=False,
        note="HELM Safety's entry (zero-shot, its instructions) equals HELM's one category at a time; HELM's "
        "subject=all needs all 11 category files, which were never compared (the split is HELM's algorithm)",
    ),
    # HELM Capabilities: candidate requests (HELM's scenarios, run specs and adapters).
    "gpqa": ScenarioProof(golden=_CAPABILITIES_GOLDEN, test=_CAPABILITIES_TEST, proven=True),
    "ifeval": ScenarioProof(golden=_CAPABILITIES_GOLDEN, test=_CAPABILITIES_TEST, proven=True),
    "mmlu_pro": ScenarioProof(
        golden=_CAPABILITIES_GOLDEN, test=_CAPABILITIES_TEST, proven=False, note=_RELEASE_ROWS % "Parquet files"
    ),
    "wildbench": ScenarioProof(
        golden=_CAPABILITIES_GOLDEN, test=_CAPABILITIES_TEST, proven=False, note=_RELEASE_ROWS % "rows"
    ),
    "omni_math": ScenarioProof(
        golden=_CAPABILITIES_GOLDEN, test=_CAPABILITIES_TEST, proven=False, note=_RELEASE_ROWS % "file"
    ),
}
"""Scenario -> the golden test comparing it with HELM (scenarios absent: HELM never compared)."""

PERTURBATION_PROOFS: tuple[PerturbationProof, ...] = (
    PerturbationProof("mmlu", "mild_mix", {}, augmentation="robustness"),
    PerturbationProof("mmlu", "misspellings", {"prob": 0.2}, augmentation="misspelling_medium"),
    PerturbationProof("mmlu", "typos", {"prob": 0.1}, augmentation="typo_easy"),
    PerturbationProof("mmlu", "lowercase", {}, augmentation="lower"),
    PerturbationProof("mmlu", "contractions", {}, augmentation="contract"),
    PerturbationProof("mmlu", "expansions", {}, augmentation="contract"),
    PerturbationProof("mmlu", "whitespace", {"max_spaces": 3}, augmentation="space"),
    PerturbationProof("mmlu", "dialect", {"prob": 1.0}, augmentation="dialect_deterministic"),
    PerturbationProof("mmlu", "gender", {"mode": "terms", "prob": 1.0}, augmentation="gender_terms_deterministic"),
    PerturbationProof(
        "mmlu", "gender", {"mode": "pronouns", "prob": 1.0}, augmentation="gender_pronouns_deterministic"
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
    proof = SCENARIO_PROOFS.get(scenario)
    if proof is None:
        reasons.append(f"scenario {scenario!r}: never compared with HELM")
    else:
        evidence.append(proof.golden)
        if not proof.proven:
            reasons.append(f"scenario {scenario!r}: {proof.note}")
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
            compared = ", ".join(f"{p.scenario} with {_show_args(p.args)}" for p in elsewhere)
            reasons.append(f"perturbation {shown}: HELM's algorithm, compared with HELM on {compared} only")
        else:
            reasons.append(f"perturbation {shown}: never compared with HELM")
    status = PROVEN if not reasons else CLAIMED
    return Conformance(status, tuple(reasons), tuple(deviations), tuple(dict.fromkeys(evidence)))


def _show_args(args: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in sorted(args.items())) + "}" if args else "no arguments"


def _show(spec: PerturbationSpec) -> str:
    return f"{spec.name!r} ({_show_args(spec.args_dict)})"
