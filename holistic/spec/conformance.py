"""What is proven about a run's HELM conformance, from what each scenario declares.

A run under ``protocol: helm`` claims HELM 0.5.16's protocol. The claim is **proven**
only where a golden file made by HELM itself, and a test checking holistic against it in
CI, cover both the run's scenario and every one of its perturbations (with these
arguments); otherwise the run's conformance is only **claimed**, and :func:`conformance`
says what was never compared or what differs. The proofs are records of the HELM layer
(:mod:`holistic.helm.proofs`, one data file keyed by scenario name), kept in sync with the
golden files of the conformance suite by its tests.

``--plan``, every run's ``run_spec.json`` (``helm_conformance``) and the site's run page
show the verdict; a perturbation with a named deviation (HELM's data cannot be had
here: :class:`holistic.helm.perturbations.base.Deviation`) gets a warning in ``--plan``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from holistic.core.types import PerturbationSpec, RunSpec
from holistic.helm.proofs import perturbation_proofs, scenario_proof
from holistic.spec.protocol import HELM

PROVEN = "proven"
CLAIMED = "claimed"
NOT_CLAIMED = "not claimed"


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

    deviation = getattr(perturbation_class(spec.name, helm=True), "deviation", None)
    return None if deviation is None else f"perturbation {spec.name!r} deviates from HELM: {deviation.reason}"


def conformance(run: RunSpec) -> Conformance:
    """The verdict for ``run`` (see the module docstring)."""
    if run.adapter.protocol != HELM:
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
        if proof.method is not None and run.adapter.method != proof.method:
            reasons.append(
                f"scenario {scenario!r} with method {run.adapter.method!r}: "
                f"HELM's run was compared with method {proof.method!r} only"
            )
    proofs = perturbation_proofs() if run.perturbations else ()
    for spec in run.perturbations:
        deviation = perturbation_deviation(spec)
        if deviation is not None:
            deviations.append(deviation)
            reasons.append(deviation)
            continue
        matching = [p for p in proofs if p.matches(scenario, spec)]
        found = next((p for p in matching if p.fits(run.scenario.args_dict)), next(iter(matching), None))
        if found is not None:
            evidence.append(f"{found.golden} ({found.augmentation})")
            continue
        elsewhere = [p for p in proofs if p.name == spec.name]
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
