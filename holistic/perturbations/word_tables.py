"""Word -> alternatives tables shipped with the package, for word-for-word substitutions.

Each table is a two-column list in ``holistic/perturbations/data`` (see
:func:`holistic.perturbations.wordlists.read_mapping`), read once per process.
"""

from __future__ import annotations

from functools import cache

from holistic.perturbations.base import PerturbRandom, match_case
from holistic.perturbations.wordlists import read_mapping

DATA = "holistic.perturbations.data"


@cache
def word_table(filename: str) -> dict[str, tuple[str, ...]]:
    """Word (lower case) -> its listed alternatives, from ``data/<filename>``."""
    return read_mapping(DATA, filename)


def pick_alternative(word: str, options: tuple[str, ...], rng: PerturbRandom, suffix: str = "") -> str:
    """One of ``options`` (drawn from ``rng.seq``) plus ``suffix``, in the capitalisation of ``word``."""
    return match_case(word, rng.seq.choice(options) + suffix)
