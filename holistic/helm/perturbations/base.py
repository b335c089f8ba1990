"""HELM 0.5.16's perturbation machinery: its seeding, its order of rewriting, its choice of variants.

Under ``protocol: helm`` (:attr:`~holistic.core.specs.ProtocolBehaviour.helm_perturbations`)
a run's perturbations are HELM's own algorithms
(:mod:`holistic.helm.perturbations.robustness`, :mod:`holistic.helm.perturbations.fairness`),
applied as HELM's ``DataAugmenter`` applies them in a run it expands with
``data_augmentation=...``:

- **seeding**: one ``random.Random`` per (perturbation, instance), seeded with the
  instance's HELM id alone (HELM's ``seeds_per_instance=1`` passes ``seed=None``, so
  the run's seed plays no part). HELM's id is ``id<n>``, the instance's position in
  HELM's scenario (training instances included, in the loader's order); execution
  writes it into ``Instance.metadata[HELM_ID_KEY]`` (a scenario may set it itself
  where HELM's loader gives its own ids);
- **order**: when the references are rewritten too (dialect, gender, person names),
  every reference is rewritten before the input, all with that one generator;
- **variants**: a variant whose input did not change is dropped
  (``should_skip_unchanged_eval=True``), so an instance may have none.

A perturbation HELM has but holistic cannot reproduce (its data cannot be had here)
carries a named ``deviation``: its variants are tagged ``<name>~<tag>``, count toward
neither the robustness nor the fairness worst case (whose names are HELM's), and
``--plan`` warns about them.
"""

from __future__ import annotations

import random
from abc import abstractmethod
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar

from holistic.core.types import Instance, PerturbationDescription
from holistic.perturbations.base import FAIRNESS, HELM_ID_KEY, ROBUSTNESS, BasePerturbation, check_probability

DEVIATION_SEPARATOR = "~"


def helm_id(instance: Instance) -> str:
    """The id HELM seeds this instance's perturbations with (holistic's id when none was recorded)."""
    return str(instance.metadata.get(HELM_ID_KEY, instance.id))


@dataclass(frozen=True)
class Deviation:
    """Where a perturbation under ``protocol: helm`` cannot be HELM's, and why."""

    tag: str
    """Short tag appended to the variants' perturbation name (``person_names~<tag>``)."""
    reason: str
    """One sentence: what differs from HELM and why."""


def helm_rng(instance: Instance) -> random.Random:
    """HELM's ``Perturbation.get_rng(instance, seed=None)``: ``Random(<HELM id>)``."""
    return random.Random(helm_id(instance))


@dataclass(frozen=True)
class HelmPerturbation(BasePerturbation):
    """Base of HELM's perturbations (frozen dataclasses whose fields are HELM's arguments)."""

    name: ClassVar[str]
    category: ClassVar[str]
    helm_class: ClassVar[str]
    """HELM's class (``helm.benchmark.augmentations...``) this reproduces."""
    perturb_references: ClassVar[bool] = False
    deviation: ClassVar[Deviation | None] = None
    drops_unchanged: ClassVar[bool] = True

    @abstractmethod
    def perturb(self, text: str, rng: random.Random) -> str:
        """HELM's ``perturb(text, rng)``."""

    def args(self) -> tuple[tuple[str, Any], ...]:
        return tuple(sorted(asdict(self).items()))

    def variant_name(self) -> str:
        return self.name if self.deviation is None else f"{self.name}{DEVIATION_SEPARATOR}{self.deviation.tag}"

    def description(self) -> PerturbationDescription:
        counts = self.deviation is None
        return PerturbationDescription(
            name=self.variant_name(),
            robustness=counts and self.category == ROBUSTNESS,
            fairness=counts and self.category == FAIRNESS,
            args=self.args(),
        )

    def apply(self, instance: Instance, seed: int) -> Instance:
        """HELM's ``TextPerturbation.apply`` (``seed`` is not used: HELM passes none)."""
        rng = helm_rng(instance)
        references = instance.references
        if self.perturb_references:
            references = tuple(replace(ref, output=self.perturb(ref.output, rng)) for ref in references)
        text = self.perturb(instance.input, rng)
        return replace(instance, input=text, references=references, perturbation=self.description())

    def variants(self, instance: Instance, seed: int) -> list[Instance]:
        """The variant, unless its input is unchanged (HELM skips those)."""
        variant = self.apply(instance, seed)
        return [] if variant.input == instance.input else [variant]


@dataclass(frozen=True)
class HelmProbPerturbation(HelmPerturbation):
    """A HELM perturbation whose one free argument is the probability of each change."""

    prob: float = 1.0

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)
