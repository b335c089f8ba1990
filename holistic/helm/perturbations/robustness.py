"""HELM 0.5.16's robustness perturbations, reproduced draw for draw (used under ``protocol: helm``).

Each class follows the HELM class it names (``helm_class``): the same regular
expressions, the same calls on the one generator HELM seeds per instance (see
:mod:`holistic.helm.perturbations.base`), in the same order. ``mild_mix`` composes
lower-casing, contractions, misspellings (0.1) and 1-3 spaces on that single
generator, so the spaces are drawn after the misspellings' draws, as in HELM.

Synonyms are the exception: HELM's ``SynonymPerturbation`` tags words with spaCy's
``en_core_web_sm`` and looks them up in a WordNet export (``wordnet_synonyms.json``)
that HELM downloads from its own bucket; neither can be had here, so ``synonyms``
under ``protocol: helm`` is holistic's word list drawn with HELM's seeding, and carries
a named deviation.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from holistic.helm.perturbations.base import Deviation, HelmPerturbation, HelmProbPerturbation
from holistic.perturbations.base import ROBUSTNESS
from holistic.perturbations.misspellings import match_case, misspelling_pattern, misspelling_table
from holistic.perturbations.synonyms import synonym_table
from holistic.perturbations.wordlists import read_rows

DATA = "holistic.perturbations.data"


@cache
def helm_contraction_map() -> dict[str, str]:
    """HELM's ``CONTRACTION_MAP`` (contraction -> expansion), in its order (``data/helm_contractions.tsv``)."""
    return dict(read_rows(DATA, "helm_contractions.tsv", 2))  # type: ignore[arg-type]


@cache
def _contraction_patterns() -> tuple[dict[str, str], re.Pattern[str], re.Pattern[str]]:
    table = helm_contraction_map()
    reverse = {expanded: contracted for contracted, expanded in table.items()}
    # HELM contracts only what a space follows ("to avoid contract end of sentence").
    contract = re.compile(r"\b({})\b ".format("|".join(reverse)), flags=re.IGNORECASE | re.DOTALL)
    expand = re.compile(r"\b({})\b".format("|".join(table)), flags=re.IGNORECASE | re.DOTALL)
    return reverse, contract, expand


def helm_lower(text: str) -> str:
    return text.lower()


def helm_contract(text: str) -> str:
    """HELM's ``ContractionPerturbation.perturb``."""
    reverse, pattern, _ = _contraction_patterns()

    def one(match: re.Match[str]) -> str:
        found = match.group(1)
        target = reverse.get(found, reverse.get(found.lower()))
        return match_case(found, str(target)) + " "

    return pattern.sub(one, text)


def helm_expand(text: str) -> str:
    """HELM's ``ExpansionPerturbation.perturb``."""
    table = helm_contraction_map()
    _, _, pattern = _contraction_patterns()

    def one(match: re.Match[str]) -> str:
        found = match.group(0)
        return match_case(found, str(table.get(found, table.get(found.lower()))))

    return pattern.sub(one, text)


def helm_misspell(text: str, prob: float, rng: random.Random) -> str:
    """HELM's ``MisspellingPerturbation.perturb`` (the table holistic ships is HELM's file)."""
    table = misspelling_table()

    def one(match: re.Match[str]) -> str:
        word = match.group(1)
        if rng.random() < prob:
            return match_case(word, str(rng.choice(table[word])))
        return word

    return misspelling_pattern().sub(one, text)


_SPACES = re.compile(r" +")


def helm_space(text: str, max_spaces: int, rng: random.Random) -> str:
    """HELM's ``SpacePerturbation.perturb``: every run of spaces becomes 1..max_spaces spaces."""
    return _SPACES.sub(lambda _m: " " * rng.randint(1, max_spaces), text)


# HELM's keyboard neighbours for typos (TyposPerturbation.perturb, crfm-helm 0.5.16): distance-1
# keys of a QWERTY keyboard, in HELM's order (the order decides rng.choice).
HELM_KEY_APPROX: dict[str, str] = {
    "q": "was",
    "w": "qesad",
    "e": "wsdfr",
    "r": "edfgt",
    "t": "rfghy",
    "y": "tghju",
    "u": "yhjki",
    "i": "ujklo",
    "o": "iklp",
    "p": "ol",
    "a": "qwsz",
    "s": "weadzx",
    "d": "erfcxs",
    "f": "rtgvcd",
    "g": "tyhbvf",
    "h": "yujnbg",
    "j": "uikmnh",
    "k": "iolmj",
    "l": "opk",
    "z": "asx",
    "x": "sdcz",
    "c": "dfvx",
    "v": "fgbc",
    "b": "ghnv",
    "n": "hjmb",
    "m": "jkn",
}


def helm_typos(text: str, prob: float, rng: random.Random) -> str:
    """HELM's ``TyposPerturbation.perturb``."""
    out = []
    for letter in text:
        lower = letter.lower()
        new = lower
        if lower in HELM_KEY_APPROX and rng.random() < prob:
            new = rng.choice(list(HELM_KEY_APPROX[lower]))
        if lower != letter:
            new = new.upper()
        out.append(new)
    return "".join(out)


def _check_spaces(value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"max_spaces must be an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class HelmMildMix(HelmPerturbation):
    """HELM's canonical robustness perturbation (no arguments: HELM's has none)."""

    name = "mild_mix"
    category = ROBUSTNESS
    helm_class = "helm.benchmark.augmentations.mild_mix_perturbation.MildMixPerturbation"

    def perturb(self, text: str, rng: random.Random) -> str:
        text = helm_contract(helm_lower(text))
        text = helm_misspell(text, 0.1, rng)
        return helm_space(text, 3, rng)


@dataclass(frozen=True)
class _Noise(HelmProbPerturbation):
    """A HELM perturbation that changes each place with probability ``prob``."""

    category = ROBUSTNESS

    def perturb(self, text: str, rng: random.Random) -> str:
        return _NOISES[self.name](text, self.prob, rng)


@dataclass(frozen=True)
class HelmMisspellings(_Noise):
    name = "misspellings"
    helm_class = "helm.benchmark.augmentations.misspelling_perturbation.MisspellingPerturbation"
    prob: float = 0.1


@dataclass(frozen=True)
class HelmTypos(_Noise):
    name = "typos"
    helm_class = "helm.benchmark.augmentations.typos_perturbation.TyposPerturbation"
    prob: float = 0.05


_NOISES: dict[str, Callable[[str, float, random.Random], str]] = {"misspellings": helm_misspell, "typos": helm_typos}


@dataclass(frozen=True)
class _Rewrite(HelmPerturbation):
    """A HELM perturbation without arguments or randomness: one function of the text."""

    category = ROBUSTNESS

    def perturb(self, text: str, rng: random.Random) -> str:
        return _REWRITES[self.name](text)


_REWRITES: dict[str, Callable[[str], str]] = {
    "lowercase": helm_lower,
    "contractions": helm_contract,
    "expansions": helm_expand,
}


@dataclass(frozen=True)
class HelmLowercase(_Rewrite):
    name = "lowercase"
    helm_class = "helm.benchmark.augmentations.lowercase_perturbation.LowerCasePerturbation"


@dataclass(frozen=True)
class HelmContractions(_Rewrite):
    name = "contractions"
    helm_class = "helm.benchmark.augmentations.contraction_expansion_perturbation.ContractionPerturbation"


@dataclass(frozen=True)
class HelmExpansions(_Rewrite):
    name = "expansions"
    helm_class = "helm.benchmark.augmentations.contraction_expansion_perturbation.ExpansionPerturbation"


@dataclass(frozen=True)
class HelmSpaces(HelmPerturbation):
    """HELM's ``space`` perturbation (``data_augmentation=space``: ``max_spaces=3``)."""

    name = "whitespace"
    category = ROBUSTNESS
    helm_class = "helm.benchmark.augmentations.space_perturbation.SpacePerturbation"

    max_spaces: int = 3

    def __post_init__(self) -> None:
        _check_spaces(self.max_spaces)

    def perturb(self, text: str, rng: random.Random) -> str:
        return helm_space(text, self.max_spaces, rng)


SYNONYMS_DEVIATION = Deviation(
    tag="holistic_synonyms",
    reason="HELM's synonyms need spaCy's en_core_web_sm tagger and HELM's WordNet export "
    "(wordnet_synonyms.json from HELM's bucket), neither of which can be had here: holistic's own "
    "synonym list is used, drawn with HELM's seeding",
)


@dataclass(frozen=True)
class HelmSynonyms(HelmProbPerturbation):
    """Synonyms with HELM's seeding and HELM's draw (``uniform(0, 1) < prob``, then ``choice``), on
    holistic's word list: a named deviation (see :data:`SYNONYMS_DEVIATION`)."""

    name = "synonyms"
    category = ROBUSTNESS
    helm_class = "helm.benchmark.augmentations.synonym_perturbation.SynonymPerturbation"
    deviation = SYNONYMS_DEVIATION
    prob: float = 0.5

    def perturb(self, text: str, rng: random.Random) -> str:
        table = synonym_table()

        def one(match: re.Match[str]) -> str:
            word = match.group(0)
            options = [s for s in table.get(word.lower(), ()) if s != word.lower()]
            if options and rng.uniform(0, 1) < self.prob:
                return match_case(word, rng.choice(options))
            return word

        return re.sub(r"[A-Za-z]+", one, text)
