"""HELM's composed robustness perturbation ("mild mix").

HELM (Liang et al., 2022, appendix D.1.2) evaluates robustness with one
composition rather than each transformation alone: lower-casing, contractions,
misspellings attempted on each word with probability 0.1, and every space
turned into a run of 1 to 3 spaces, applied in that order.
"""

from __future__ import annotations

from dataclasses import dataclass

from holistic.perturbations.base import ROBUSTNESS, PerturbRandom, TextPerturbation, check_probability
from holistic.perturbations.contractions import contract_text
from holistic.perturbations.misspellings import Misspellings
from holistic.perturbations.whitespace import ExtraWhitespace


@dataclass(frozen=True)
class MildMix(TextPerturbation):
    """Lower-case, contract, misspell (``misspelling_prob`` per word), then widen spaces."""

    name = "mild_mix"
    category = ROBUSTNESS

    misspelling_prob: float = 0.1
    max_spaces: int = 3

    def __post_init__(self) -> None:
        check_probability("misspelling_prob", self.misspelling_prob)
        ExtraWhitespace(max_spaces=self.max_spaces)  # validates

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        text = contract_text(text.lower())
        text = Misspellings(prob=self.misspelling_prob).perturb(text, rng.child("misspellings"))
        return ExtraWhitespace(max_spaces=self.max_spaces).perturb(text, rng.child("whitespace"))
