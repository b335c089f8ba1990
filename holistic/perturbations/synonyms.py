"""Synonym substitution from a word list shipped in the package (no WordNet download).

``data/synonyms.tsv`` maps a common word to near-synonyms that fit in most of
its contexts (the word's most frequent sense).
"""

from __future__ import annotations

from dataclasses import dataclass

from holistic.perturbations.base import ROBUSTNESS, PerturbRandom, TextPerturbation, check_probability, sub_words
from holistic.perturbations.word_tables import pick_alternative, word_table


def synonym_table() -> dict[str, tuple[str, ...]]:
    """Word (lower case) -> its listed synonyms."""
    return word_table("synonyms.tsv")


@dataclass(frozen=True)
class Synonyms(TextPerturbation):
    """Each word with listed synonyms is, with probability ``prob``, replaced by one of them."""

    name = "synonyms"
    category = ROBUSTNESS

    prob: float = 0.5
    """Per-word probability of substituting a word that has synonyms."""

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        table = synonym_table()

        def one(word: str) -> str:
            options = table.get(word.lower())
            if not options or rng.seq.random() >= self.prob:
                return word
            return pick_alternative(word, options, rng)

        return sub_words(text, one)
