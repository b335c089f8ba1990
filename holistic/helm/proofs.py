"""The proof records of HELM conformance, read from ``proofs.yaml`` (keyed by scenario name).

Which golden file made by HELM 0.5.16 proves which scenario (:class:`ScenarioProof`) and which
perturbation on it (:class:`PerturbationProof`), the HELM scenario class each scenario
reproduces (:class:`HelmCounterpart`, for ``helm-import``) and where HELM keeps perturbed
variants that did not change (:func:`keeps_unchanged_variants`). Golden files and tests are
named relative to the conformance suite (``tests/conformance/`` in the source tree), never by a
path inside the package. A plugin scenario that reproduces a HELM scenario declares its
counterpart with :func:`declare_counterpart` when its module is imported.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from holistic.core.types import PerturbationSpec

GOLDEN_TEST = "test_conformance_golden.py"
"""The conformance suite's test of the single-scenario golden files (a proof's default ``test``)."""

PERTURBATION_TEST = "test_perturbations_golden_helm.py"
"""The conformance suite's test of the perturbation golden files."""


@dataclass(frozen=True)
class ScenarioProof:
    """A scenario's evidence of HELM conformance: a golden file made by HELM 0.5.16 itself and
    the test checking holistic against it (both in the conformance suite)."""

    golden: str | None
    """Golden file in the conformance suite; ``None`` for a scenario HELM's run cannot be
    compared with (its ``note`` names the deviation, and it is never proven)."""
    proven: bool = True
    """Whether the golden covers the whole protocol (HELM's own loader, prompts, requests, stats)."""
    note: str = ""
    """What the golden leaves uncompared or what differs (shown when ``proven`` is false)."""
    test: str = GOLDEN_TEST
    """The conformance suite's test module that checks holistic against it."""
    requires: Mapping[str, Any] = field(default_factory=dict)
    """Scenario arguments the golden holds for (MS MARCO's ``source: helm``); a run given
    another value is only claimed. An argument left out takes its default, which must be this."""
    method: str | None = None
    """The adaptation method HELM's run in the golden used, where a run may choose another
    (OpenBookQA: HELM's core runs score each choice, HELM Lite's put them in one prompt); a run
    with another method is only claimed."""


@dataclass(frozen=True)
class PerturbationProof:
    """A perturbation (with these arguments) compared variant by variant with HELM's on a scenario:
    the golden file HELM's runner made on HELM's own instance ids, and the augmentation it holds
    it under."""

    scenario: str
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    golden: str = field(kw_only=True)
    """The golden file (in the conformance suite) HELM's variants of it are kept in."""
    augmentation: str = ""
    """HELM's ``data_augmentation`` the golden file holds it under."""
    scenario_args: Mapping[str, Any] = field(default_factory=dict)
    """The scenario's arguments in the golden file's run where they pick one of several (MS MARCO's
    ``track``): a run with these (or without them) cites this golden file first."""
    test: str = PERTURBATION_TEST
    """The conformance suite's test module that checks holistic's variants against it."""

    def matches(self, scenario: str, spec: PerturbationSpec) -> bool:
        """Whether ``spec`` on ``scenario`` is this one."""
        return scenario == self.scenario and spec.name == self.name and dict(spec.args_dict) == dict(self.args)

    def fits(self, args: Mapping[str, Any]) -> bool:
        """Whether a run with the scenario arguments ``args`` is the golden file's run."""
        return all(args.get(name, value) == value for name, value in self.scenario_args.items())


@dataclass(frozen=True)
class HelmCounterpart:
    """The HELM scenario class a scenario reproduces, so that ``helm-import`` files HELM's
    runs of it under the scenario's own name and argument names."""

    class_name: str
    """HELM's scenario class as its run specs name it
    (``helm.benchmark.scenarios.mmlu_scenario.MMLUScenario``)."""
    args: Mapping[str, str] = field(default_factory=dict)
    """HELM argument -> the scenario's argument."""
    defaults_dropped: Mapping[str, Any] = field(default_factory=dict)
    """HELM arguments the scenario has no counterpart for, dropped when they hold this value."""


@dataclass(frozen=True)
class ScenarioRecord:
    """What ``proofs.yaml`` says about one scenario."""

    proof: ScenarioProof | None = None
    perturbations: tuple[PerturbationProof, ...] = ()
    counterpart: HelmCounterpart | None = None
    keeps_unchanged_variants: bool | Mapping[str, tuple[Any, ...]] = False
    """``True``, or argument -> the values for which HELM keeps unchanged variants."""


_SCENARIO_KEYS = frozenset({"proof", "perturbation_goldens", "counterpart", "keeps_unchanged_variants"})


@functools.cache
def records() -> dict[str, ScenarioRecord]:
    """Every scenario's record, read once from ``proofs.yaml``."""
    text = resources.files(__package__).joinpath("proofs.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    augmentations = [(a["perturbation"], a.get("args") or {}, a["augmentation"]) for a in data["augmentations"]]
    return {name: _record(name, raw, augmentations) for name, raw in data["scenarios"].items()}


def _record(name: str, raw: Mapping[str, Any], augmentations: list[tuple[str, dict[str, Any], str]]) -> ScenarioRecord:
    unknown = set(raw) - _SCENARIO_KEYS
    if unknown:
        raise ValueError(f"proofs.yaml: scenario {name!r} has unknown keys {sorted(unknown)}")
    proof = None
    if "proof" in raw:
        p = dict(raw["proof"])
        proof = ScenarioProof(
            golden=p.pop("golden"),
            proven=p.pop("proven", True),
            note=p.pop("note", ""),
            test=p.pop("test", GOLDEN_TEST),
            requires=p.pop("requires", {}),
            method=p.pop("method", None),
        )
        if p:
            raise ValueError(f"proofs.yaml: scenario {name!r}: unknown proof keys {sorted(p)}")
    perturbations = tuple(
        PerturbationProof(name, perturbation, args, golden=golden, augmentation=augmentation, scenario_args=run or {})
        for golden, run in (raw.get("perturbation_goldens") or {}).items()
        for perturbation, args, augmentation in augmentations
    )
    counterpart = None
    if "counterpart" in raw:
        c = raw["counterpart"]
        counterpart = HelmCounterpart(c["class"], c.get("args", {}), c.get("defaults_dropped", {}))
    keeps = raw.get("keeps_unchanged_variants", False)
    if isinstance(keeps, Mapping):
        keeps = {arg: tuple(values) for arg, values in keeps.items()}
    return ScenarioRecord(proof, perturbations, counterpart, keeps)


def scenario_proof(scenario: str) -> ScenarioProof | None:
    """The golden proving ``scenario`` under ``protocol: helm`` (``None``: HELM never compared it)."""
    record = records().get(scenario)
    return None if record is None else record.proof


def scenario_proofs() -> dict[str, ScenarioProof]:
    """Every scenario's proof (scenarios absent: HELM never compared)."""
    return {name: r.proof for name, r in records().items() if r.proof is not None}


def perturbation_proofs() -> tuple[PerturbationProof, ...]:
    """Every perturbation proof, scenario by scenario."""
    return tuple(p for r in records().values() for p in r.perturbations)


_DECLARED: dict[str, HelmCounterpart] = {}
"""Counterparts plugin scenarios declared (:func:`declare_counterpart`)."""


def declare_counterpart(scenario: str, counterpart: HelmCounterpart) -> None:
    """Declare that the (plugin) scenario ``scenario`` reproduces HELM's ``counterpart``: call it
    where the scenario's module is imported, so ``helm-import`` files HELM's runs under its name."""
    _DECLARED[scenario] = counterpart


def counterparts() -> dict[str, HelmCounterpart]:
    """Scenario name -> the HELM scenario it reproduces (``proofs.yaml``, then plugins' declarations)."""
    found = {name: r.counterpart for name, r in records().items() if r.counterpart is not None}
    return {**found, **_DECLARED}


def keeps_unchanged_variants(scenario: str, args: Mapping[str, Any]) -> bool:
    """Whether HELM keeps the perturbed variants of ``scenario`` (with ``args``) that did not
    change: where HELM 0.5.16's loader gives the instances a ``PassageQuestionInput``, HELM's
    ``DataAugmenter`` compares a variant's ``Input`` with the original's, a perturbation returns
    a plain ``Input``, the two never compare equal, and HELM keeps every variant (BoolQ,
    NarrativeQA, NaturalQuestions with a passage, CivilComments)."""
    record = records().get(scenario)
    if record is None:
        return False
    keeps = record.keeps_unchanged_variants
    if isinstance(keeps, bool):
        return keeps
    return all(args.get(arg) in values for arg, values in keeps.items())
