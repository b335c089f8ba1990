"""Common misspellings: words replaced by a misspelling people actually make.

The list (``data/misspellings.tsv``) maps a correct word to its common
misspellings; plural forms are covered by adding ``s`` to both sides.
"""

from __future__ import annotations

from dataclasses import dataclass

from holistic.perturbations.base import ROBUSTNESS, PerturbRandom, TextPerturbation, check_probability, sub_words
from holistic.perturbations.word_tables import pick_alternative, word_table


def misspelling_table() -> dict[str, tuple[str, ...]]:
    """Correct word (lower case) -> its common misspellings."""
    return word_table("misspellings.tsv")


def misspell(word: str, rng_choice: PerturbRandom) -> str | None:
    """A misspelling of ``word`` (case kept), or ``None`` when the list has none."""
    table = misspelling_table()
    key = word.lower()
    if key in table:
        return pick_alternative(word, table[key], rng_choice)
    if key.endswith("s") and key[:-1] in table:
        return pick_alternative(word, table[key[:-1]], rng_choice, suffix="s")
    return None


@dataclass(frozen=True)
class Misspellings(TextPerturbation):
    """Each word, with probability ``prob``, is replaced by a common misspelling of it.

    Words without a listed misspelling stay as they are, so fewer than ``prob`` of
    the words change (as in HELM's recipe).
    """

    name = "misspellings"
    category = ROBUSTNESS

    prob: float = 0.1
    """Per-word probability of attempting a misspelling."""

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        def one(word: str) -> str:
            if rng.seq.random() >= self.prob:
                return word
            return misspell(word, rng) or word

        return sub_words(text, one)
