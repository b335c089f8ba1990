"""Gender: pronouns or gendered terms swapped from one binary gender to the other.

Tables: ``data/gender_pronouns.tsv`` and ``data/gender_terms.tsv`` (male and
female columns). References are rewritten too, because the answer must follow
the input ("Who lost her keys?" -> "the mother"). Where one form has two
readings (female ``her`` is both ``him`` and ``his``), the first row listed
wins, except that female ``her`` followed by a word that can start a noun
phrase becomes ``his`` ("her sister" -> "his sister") and ``him`` otherwise
("call her." -> "call him.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from holistic.perturbations.base import Counterfactual, PerturbRandom, check_probability, match_case
from holistic.perturbations.mapping import PhraseMapper
from holistic.perturbations.wordlists import read_rows

DATA = "holistic.perturbations.data"
GENDERS = ("male", "female")
MODES = {"pronouns": "gender_pronouns.tsv", "terms": "gender_terms.tsv"}


@cache
def gender_table(mode: str, source: str, target: str) -> dict[str, tuple[str, ...]]:
    """Source-gender word -> target-gender word, for ``pronouns`` or ``terms``."""
    rows = read_rows(DATA, MODES[mode], 2)
    src, tgt = GENDERS.index(source), GENDERS.index(target)
    out: dict[str, tuple[str, ...]] = {}
    for row in rows:
        out.setdefault(row[src].lower(), (row[tgt].lower(),))
    return out


@cache
def _mapper(mode: str, source: str, target: str) -> PhraseMapper:
    return PhraseMapper(gender_table(mode, source, target))


@dataclass(frozen=True)
class Gender(Counterfactual):
    """``source``-gender pronouns (``mode="pronouns"``) or terms (``"terms"``) become ``target``-gender ones."""

    name = "gender"

    mode: str = "pronouns"
    prob: float = 1.0
    source: str = "male"
    target: str = "female"

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {sorted(MODES)}, got {self.mode!r}")
        for label, value in (("source", self.source), ("target", self.target)):
            if value not in GENDERS:
                raise ValueError(f"{label} must be one of {list(GENDERS)}, got {value!r}")
        if self.source == self.target:
            raise ValueError(f"source and target are both {self.source!r}")

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        if self.mode == "pronouns" and self.source == "female":
            text = _HER.sub(lambda m: self._her(m, rng), text)
        return _mapper(self.mode, self.source, self.target).apply(text, rng, self.prob)

    def _her(self, match: re.Match[str], rng: PerturbRandom) -> str:
        if rng.for_key("her").random() >= self.prob:
            return match.group(0)
        following = (match.group(1) or "").lower()
        possessive = bool(following) and following not in _NOT_NOUN_PHRASE
        return match_case(match.group(0), "his" if possessive else "him")


_HER = re.compile(r"(?<![A-Za-z'’])her(?![A-Za-z'’])(?=\s+([A-Za-z]+))?", re.IGNORECASE)
# Words after which "her" is an object pronoun ("gave her a book" is misread as
# possessive; the object reading is the safer default before these).
_NOT_NOUN_PHRASE = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "and",
        "or",
        "but",
        "so",
        "if",
        "as",
        "at",
        "by",
        "for",
        "from",
        "in",
        "into",
        "of",
        "off",
        "on",
        "onto",
        "out",
        "over",
        "up",
        "with",
        "about",
        "again",
        "back",
        "because",
        "before",
        "after",
        "then",
        "when",
        "while",
        "that",
        "this",
        "these",
        "those",
        "here",
        "there",
        "now",
        "too",
        "very",
        "well",
        "yet",
        "than",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "how",
        "why",
        "where",
    ]
)
