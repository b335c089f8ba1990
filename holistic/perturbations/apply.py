"""Apply perturbations to evaluation instances: originals first, then tagged variants."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from holistic.core.errors import HolisticError
from holistic.core.types import TRAIN_SPLIT, Instance, PerturbationSpec
from holistic.perturbations.base import BasePerturbation
from holistic.perturbations.helm_base import HelmPerturbation
from holistic.perturbations.registry import create_perturbation


class NoVariantsError(HolisticError):
    """A perturbation a run asked for made no variant of any evaluation instance."""


def variants_of(perturbation: BasePerturbation, instance: Instance, seed: int) -> list[Instance]:
    """The variants one perturbation makes of one instance.

    Built-ins may make zero (a contrast set the instance lacks) or several;
    perturbations implementing only ``apply`` make exactly one.
    """
    return list(perturbation.variants(instance, seed))


def apply_perturbations(
    instances: Sequence[Instance],
    specs: Sequence[PerturbationSpec],
    seed: int,
    *,
    protocol: str = "holistic",
    data_root: Path | None = None,
    offline: bool = False,
    keep_unchanged: bool = False,
) -> list[Instance]:
    """The originals (unchanged, ``perturbation=None``) followed by their variants.

    Variants come instance by instance, in the order of ``specs``; each keeps its
    original's ``id`` and carries ``perturbation`` (name, robustness/fairness flags,
    args). Training instances (in-context example candidates) are never perturbed.
    Deterministic: the same instances, specs and seed give the same variants in any
    process. A perturbation that makes no variant of any evaluation instance (a
    contrast set asked of a scenario without contrast sets) is an error rather than a
    silent no-op: its worst case would just repeat the original's scores.

    Under ``protocol="helm"`` the built-ins are HELM's algorithms
    (:mod:`holistic.perturbations.helm_base`): seeded by each instance's HELM id, not by
    ``seed``; a variant whose input is unchanged is dropped, as HELM drops it, so a
    perturbation may make none (with ``keep_unchanged``, where HELM keeps them: its
    ``PassageQuestionInput`` scenarios (recorded by the HELM layer),
    every instance gets its variant). Their data (HELM's dialect dictionary and gender lists) is
    read from ``data_root`` or the download cache, or downloaded unless ``offline``.
    """
    perturbations = [create_perturbation(spec, protocol) for spec in specs]
    for perturbation in perturbations:
        if isinstance(perturbation, HelmPerturbation):
            perturbation.load(data_root, offline)
    originals = list(instances)
    for inst in originals:
        if inst.perturbation is not None:
            raise ValueError(f"instance {inst.id!r} is already a perturbed variant ({inst.perturbation.name})")
    out = list(originals)
    made = [0] * len(perturbations)
    evaluated = [inst for inst in originals if inst.split != TRAIN_SPLIT]
    for inst in evaluated:
        for i, perturbation in enumerate(perturbations):
            if keep_unchanged and isinstance(perturbation, HelmPerturbation):
                found = [perturbation.apply(inst, seed)]
            else:
                found = variants_of(perturbation, inst, seed)
            made[i] += len(found)
            out.extend(found)
    for spec, perturbation, count in zip(specs, perturbations, made, strict=True):
        if evaluated and count == 0 and not isinstance(perturbation, HelmPerturbation):
            raise NoVariantsError(
                f"perturbation {spec.name!r} made no variant of the {len(evaluated)} evaluation instance(s)"
                + (
                    " (none has contrast sets: metadata 'contrast_inputs'); remove it from the run's perturbations"
                    if spec.name == "contrast_set"
                    else ""
                )
            )
    return out
