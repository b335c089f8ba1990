"""Common misspellings: words replaced by a misspelling people actually make.

The table is HELM's, shipped unchanged as ``data/correct_to_misspelling.json``
(6,523 correct words or phrases, 9,053 misspellings; provenance in
``data/README.md``): Wikipedia's "Lists of common misspellings/For machines",
inverted. Matching is HELM's (``MisspellingPerturbation`` in crfm-helm 0.5.16): the
table's keys, case-sensitively (the table lists ``abandoned`` and ``Abandoned``
separately), as whole words (``\\b``), tried in the table's order; each match is
replaced, with probability ``prob``, by one of its misspellings in the
capitalisation of the matched text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from holistic.perturbations.base import ROBUSTNESS, PerturbRandom, TextPerturbation, check_probability

DATA = "holistic.perturbations.data"
TABLE_FILE = "correct_to_misspelling.json"


@cache
def misspelling_table() -> dict[str, tuple[str, ...]]:
    """Correct word or phrase (case as listed) -> its common misspellings, in HELM's order."""
    raw = json.loads(resources.files(DATA).joinpath(TABLE_FILE).read_text(encoding="utf-8"))
    return {word: tuple(options) for word, options in raw.items()}


@cache
def misspelling_pattern() -> re.Pattern[str]:
    return re.compile(r"\b({})\b".format("|".join(misspelling_table())))


def match_case(source: str, target: str) -> str:
    """HELM's ``match_case``: all lower -> lower, all upper -> upper, capitalised -> capitalised."""
    if all(c.islower() for c in source):
        return target.lower()
    if all(c.isupper() for c in source):
        return target.upper()
    if source and source[0].isupper():
        return target.capitalize()
    return target


def misspellable_words(text: str) -> list[str]:
    """The words and phrases of ``text`` the table has a misspelling for (in order)."""
    return [m.group(1) for m in misspelling_pattern().finditer(text)]


@dataclass(frozen=True)
class Misspellings(TextPerturbation):
    """Each listed word, with probability ``prob``, is replaced by a common misspelling of it.

    Words without a listed misspelling stay as they are, so fewer than ``prob`` of
    the words change (as in HELM).
    """

    name = "misspellings"
    category = ROBUSTNESS

    prob: float = 0.1
    """Per-word probability of misspelling a word the table lists."""

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        table = misspelling_table()

        def one(match: re.Match[str]) -> str:
            word = match.group(1)
            if rng.seq.random() >= self.prob:
                return word
            return match_case(word, str(rng.seq.choice(table[word])))

        return misspelling_pattern().sub(one, text)
