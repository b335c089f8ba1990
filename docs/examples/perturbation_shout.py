"""Example plugin: a robustness perturbation that writes the input in capitals.

Load it with ``helm-run SPEC --plugins docs/examples/perturbation_shout.py``; a run then
lists it under ``perturbations:`` and the robustness metric compares each answer with
the answer to the shouted input.
"""

from __future__ import annotations

from dataclasses import dataclass

from holistic.plugin import ROBUSTNESS, PerturbRandom, TextPerturbation, check_probability, register_perturbation


@register_perturbation
@dataclass(frozen=True)
class Shout(TextPerturbation):
    """Upper-case the input; with ``prob`` < 1, each word only with that probability."""

    name = "shout"
    category = ROBUSTNESS
    prob: float = 1.0
    """Chance that a word is upper-cased (the spec's ``args: {prob: 0.5}``)."""

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        # rng is seeded from the run seed, the perturbation and the instance: deterministic.
        return " ".join(w.upper() if rng.seq.random() < self.prob else w for w in text.split(" "))
