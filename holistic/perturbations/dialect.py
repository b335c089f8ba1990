"""Dialect: Standard American English (SAE) -> African American English (AAE).

A lexical word/phrase mapping (``data/dialect_sae_aae.tsv``) in the manner of
the SAE->AAE lexical rules of Ziems et al. (2022), "VALUE: Understanding Dialect
Disparity in NLU", which HELM uses for its dialect perturbation. Like HELM's,
it is a deterministic counterfactual meant to expose disparities, not a faithful
simulation of the dialect (HELM, appendix D.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from holistic.perturbations.base import Counterfactual, PerturbRandom, check_probability
from holistic.perturbations.mapping import PhraseMapper
from holistic.perturbations.wordlists import read_mapping

DATA = "holistic.perturbations.data"
DIALECTS = ("SAE", "AAE")


@cache
def _mapper() -> PhraseMapper:
    return PhraseMapper(read_mapping(DATA, "dialect_sae_aae.tsv"))


@dataclass(frozen=True)
class Dialect(Counterfactual):
    """SAE words and phrases replaced by their AAE counterparts (input and references)."""

    name = "dialect"

    prob: float = 1.0
    """Probability that a listed word is replaced (decided once per distinct word)."""
    source: str = "SAE"
    target: str = "AAE"

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)
        if (self.source, self.target) != DIALECTS:
            raise ValueError(
                f"dialect supports only source='SAE', target='AAE', got source={self.source!r}, target={self.target!r}"
            )

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        return _mapper().apply(text, rng, self.prob)
