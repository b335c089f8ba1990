"""Contractions (``do not`` -> ``don't``) and expansions (``don't`` -> ``do not``).

Both use one table (``data/contractions.tsv``: expanded form, contraction) of
unambiguous English contractions: ``it's`` (it is / it has) keeps its most
common reading, and forms like ``he'd`` with two common readings are left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from holistic.perturbations.base import (
    ROBUSTNESS,
    PerturbRandom,
    TextPerturbation,
    match_case,
    normalize_key,
    phrase_pattern,
)
from holistic.perturbations.wordlists import read_rows

DATA = "holistic.perturbations.data"


@cache
def _tables() -> tuple[dict[str, str], dict[str, str]]:
    contract: dict[str, str] = {}
    expand: dict[str, str] = {}
    for expanded, contracted in read_rows(DATA, "contractions.tsv", 2):
        contract.setdefault(expanded.lower(), contracted.lower())
        expand.setdefault(contracted.lower(), expanded.lower())
    return contract, expand


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    contract, expand = _tables()
    return phrase_pattern(list(contract)), phrase_pattern(list(expand))


def contract_text(text: str) -> str:
    """Every listed expanded form contracted (``I am`` -> ``I'm``).

    Auxiliaries are not contracted before the end of a clause ("I know what it
    is." stays), as English does not allow it; negations always are.
    """
    table = _tables()[0]

    def one(match: re.Match[str]) -> str:
        source = match.group(0)
        target = table[normalize_key(source)]
        if not target.endswith("n't") and not _WORD_FOLLOWS.match(text, match.end()):
            return source
        return match_case(source, target)

    return _patterns()[0].sub(one, text)


_WORD_FOLLOWS = re.compile(r"\s+[A-Za-z0-9]")


def expand_text(text: str) -> str:
    """Every listed contraction expanded (``can't`` -> ``cannot``).

    A negation followed by its subject (a question or tag: "isn't it?", "Don't
    you know?") stays contracted, since "is not it" is not English.
    """
    table = _tables()[1]

    def one(match: re.Match[str]) -> str:
        source = match.group(0)
        target = table[normalize_key(source)]
        if source.lower().endswith(("n't", "n’t")) and _SUBJECT_FOLLOWS.match(text, match.end()):
            return source
        return _expand_case(source, target)

    return _patterns()[1].sub(one, text)


_SUBJECT_FOLLOWS = re.compile(r"\s+(?:I|you|he|she|it|we|they|there|that|this)\b", re.IGNORECASE)


def _expand_case(source: str, target: str) -> str:
    # "I'm" -> "I am": only the first letter's case carries over, "DON'T" -> "DO NOT".
    if len(source) > 1 and source.replace("'", "").replace("’", "").isupper() and source[:2] != "I'":
        return target.upper()
    return match_case(source[:1], target)


@dataclass(frozen=True)
class _TableRewrite(TextPerturbation):
    """Every form the table lists rewritten, without randomness."""

    category = ROBUSTNESS

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        return _REWRITES[self.name](text)


@dataclass(frozen=True)
class Contractions(_TableRewrite):
    """Contract every expanded form the table lists (``I am`` -> ``I'm``)."""

    name = "contractions"


@dataclass(frozen=True)
class Expansions(_TableRewrite):
    """Expand every contraction the table lists (``don't`` -> ``do not``)."""

    name = "expansions"


_REWRITES: dict[str, Callable[[str], str]] = {"contractions": contract_text, "expansions": expand_text}
