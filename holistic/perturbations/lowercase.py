"""Lower-casing: the whole input in lower case."""

from __future__ import annotations

from dataclasses import dataclass

from holistic.perturbations.base import ROBUSTNESS, PerturbRandom, TextPerturbation


@dataclass(frozen=True)
class Lowercase(TextPerturbation):
    """The input lower-cased (a user who never presses shift)."""

    name = "lowercase"
    category = ROBUSTNESS

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        return text.lower()
