"""Apply perturbations to evaluation instances: originals first, then tagged variants."""

from __future__ import annotations

from collections.abc import Sequence

from holistic.core.interfaces import Perturbation
from holistic.core.types import TRAIN_SPLIT, Instance, PerturbationSpec
from holistic.perturbations.registry import create_perturbation


def variants_of(perturbation: Perturbation, instance: Instance, seed: int) -> list[Instance]:
    """The variants one perturbation makes of one instance.

    Built-ins may make zero (a contrast set the instance lacks) or several;
    third-party perturbations implementing only ``apply`` make exactly one.
    """
    many = getattr(perturbation, "variants", None)
    if callable(many):
        return list(many(instance, seed))
    return [perturbation.apply(instance, seed)]


def apply_perturbations(instances: Sequence[Instance], specs: Sequence[PerturbationSpec], seed: int) -> list[Instance]:
    """The originals (unchanged, ``perturbation=None``) followed by their variants.

    Variants come instance by instance, in the order of ``specs``; each keeps its
    original's ``id`` and carries ``perturbation`` (name, robustness/fairness flags,
    args). Training instances (in-context example candidates) are never perturbed.
    Deterministic: the same instances, specs and seed give the same variants in any
    process.
    """
    perturbations = [create_perturbation(spec) for spec in specs]
    originals = list(instances)
    for inst in originals:
        if inst.perturbation is not None:
            raise ValueError(f"instance {inst.id!r} is already a perturbed variant ({inst.perturbation.name})")
    out = list(originals)
    for inst in originals:
        if inst.split == TRAIN_SPLIT:
            continue
        for perturbation in perturbations:
            out.extend(variants_of(perturbation, inst, seed))
    return out
