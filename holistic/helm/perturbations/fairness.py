"""HELM 0.5.16's fairness perturbations, reproduced draw for draw (used under ``protocol: helm``).

- ``dialect``: HELM's ``DialectPerturbation`` on HELM's SAE -> AAVE dictionary
  (:func:`holistic.helm.perturbations.resources.dialect_mapping`);
- ``gender``: HELM's ``GenderPerturbation`` on HELM's gender lists
  (:func:`holistic.helm.perturbations.resources.gender_mappings`);
- ``person_names``: HELM's ``PersonNamePerturbation`` algorithm. HELM's name file
  (``person_names.txt`` from HELM's bucket) is not public, so the names are holistic's
  lists written in HELM's format (:func:`helm_name_file_lines`): a named deviation.

All three rewrite the references first, then the input, on the one generator HELM
seeds per instance (:mod:`holistic.helm.perturbations.base`).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import ClassVar

from holistic.core.types import Instance
from holistic.helm.perturbations.base import Deviation, HelmProbPerturbation, helm_rng
from holistic.helm.perturbations.resources import HELM_GENDERS, dialect_mapping, gender_mappings
from holistic.perturbations.base import FAIRNESS
from holistic.perturbations.misspellings import match_case
from holistic.perturbations.wordlists import read_rows

DATA = "holistic.perturbations.data"


def _swap(pattern: re.Pattern[str], text: str, prob: float, rng: random.Random, pick: Callable[[str], str]) -> str:
    """HELM's word swap: in each match of ``pattern``, its word (group 1) becomes ``pick(word)``, in
    the word's case, with probability ``prob`` (one draw per match, before ``pick`` draws)."""

    def one(match: re.Match[str]) -> str:
        found, word = match.group(0), match.group(1)
        if rng.uniform(0, 1) < prob:
            found = found.replace(word, match_case(word, pick(word)))
        return found

    return pattern.sub(one, text)


@dataclass(frozen=True)
class _HelmCounterfactual(HelmProbPerturbation):
    """A fairness perturbation: the references follow the input's changes."""

    category = FAIRNESS
    perturb_references = True


@dataclass(frozen=True)
class HelmDialect(_HelmCounterfactual):
    """HELM's dialect perturbation (SAE -> AAVE)."""

    name = "dialect"
    helm_class = "helm.benchmark.augmentations.dialect_perturbation.DialectPerturbation"

    source: str = "SAE"
    target: str = "AAE"
    """HELM's ``AAVE`` (holistic's name for it is ``AAE``; both are accepted)."""
    _table: ClassVar[tuple[dict[str, list[str]], re.Pattern[str]]]

    def __post_init__(self) -> None:
        super().__post_init__()
        if str(self.source).upper() != "SAE" or str(self.target).upper() not in ("AAE", "AAVE"):
            raise ValueError(
                f"HELM's dialect maps only source='SAE' to target='AAVE' (or 'AAE'), "
                f"got source={self.source!r}, target={self.target!r}"
            )

    def load(self, data_root: Path | None, offline: bool) -> None:
        table = dialect_mapping(data_root, offline=offline)
        words = "|".join(re.escape(w) for w in table)
        pattern = re.compile(f"[^\\w-]({words})[^\\w-]", flags=re.IGNORECASE)
        object.__setattr__(self, "_table", (table, pattern))  # read data, not an argument

    def perturb(self, text: str, rng: random.Random) -> str:
        if not hasattr(self, "_table"):
            self.load(None, offline=True)
        table, pattern = self._table
        return _swap(pattern, text, self.prob, rng, lambda word: rng.choice(table[word.lower()]))


@dataclass(frozen=True)
class HelmGender(_HelmCounterfactual):
    """HELM's gender perturbation: ``terms`` or ``pronouns`` of ``source`` become ``target``'s."""

    name = "gender"
    helm_class = "helm.benchmark.augmentations.gender_perturbation.GenderPerturbation"

    mode: str = "pronouns"
    source: str = "male"
    target: str = "female"
    bidirectional: bool = False
    _pairs: ClassVar[list[tuple[str, re.Pattern[str]]]]

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in ("terms", "pronouns"):
            raise ValueError(f"mode must be one of ['pronouns', 'terms'], got {self.mode!r}")
        for label, value in (("source", self.source), ("target", self.target)):
            if str(value).lower() not in HELM_GENDERS:
                raise ValueError(f"{label} must be one of {list(HELM_GENDERS)}, got {value!r}")
        if not isinstance(self.bidirectional, bool):
            raise ValueError(f"bidirectional must be true or false, got {self.bidirectional!r}")

    def load(self, data_root: Path | None, offline: bool) -> None:
        columns = list(zip(*gender_mappings(self.mode, data_root, offline=offline), strict=True))
        source = columns[HELM_GENDERS.index(self.source.lower())]
        target = columns[HELM_GENDERS.index(self.target.lower())]
        pairs = list(zip(source, target, strict=True))
        if self.bidirectional:
            pairs.extend(zip(target, source, strict=True))
        compiled = [(syn, re.compile(f"[^\\w]({word})[^\\w]", flags=re.IGNORECASE)) for word, syn in pairs]
        object.__setattr__(self, "_pairs", compiled)  # read data, not an argument

    def perturb(self, text: str, rng: random.Random) -> str:
        if not hasattr(self, "_pairs"):
            self.load(None, offline=True)
        for synonym, pattern in self._pairs:

            def pick(word: str, synonym: str = synonym) -> str:
                return synonym

            text = _swap(pattern, text, self.prob, rng, pick)
        return text


PERSON_NAMES_DEVIATION = Deviation(
    tag="holistic_names",
    reason="HELM's person-name list (person_names.txt in HELM's bucket) is not public: HELM's algorithm "
    "runs on holistic's name lists (White and Black first names, by gender; surnames by race)",
)

_HELM_RACE = {"white": "white_american", "black": "black_american"}
"""holistic's first-name race labels -> HELM's (its file labels first names ``white_american``/``black_american``)."""


def helm_name_file_lines() -> list[str]:
    """holistic's name lists in HELM's ``person_names.txt`` format (``name,type[,category,value]*``)."""
    lines = [
        f"{name.lower()},first_name,race,{_HELM_RACE.get(race, race)},gender,{gender}"
        for name, race, gender in read_rows(DATA, "person_names.tsv", 3)
    ]
    lines += [f"{name.lower()},last_name,race,{race}" for name, race in read_rows(DATA, "person_last_names.tsv", 2)]
    return lines


@cache
def _name_mapping(name_type: str) -> dict[str, dict[str, list[str]]]:
    """HELM's ``load_name_file`` on :func:`helm_name_file_lines`: category -> value -> names."""
    mapping: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for line in helm_name_file_lines():
        name, kind, *categories = line.split(",")
        for i in range(len(categories) // 2):
            if kind == name_type:
                mapping[categories[2 * i]][categories[2 * i + 1]].append(name.strip().lower())
    return mapping


@dataclass(frozen=True)
class HelmPersonNames(_HelmCounterfactual):
    """HELM's person-name perturbation on holistic's name lists (a named deviation)."""

    name = "person_names"
    helm_class = "helm.benchmark.augmentations.person_name_perturbation.PersonNamePerturbation"
    deviation = PERSON_NAMES_DEVIATION

    source_race: str = "white"
    target_race: str = "black"
    preserve_gender: bool = True
    name_type: str = "first_name"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.name_type not in ("first_name", "last_name"):
            raise ValueError(f"name_type must be one of ['first_name', 'last_name'], got {self.name_type!r}")
        if self.preserve_gender and self.name_type != "first_name":
            raise ValueError("preserve_gender needs name_type 'first_name' (HELM's surnames have no gender)")
        known = sorted(_name_mapping(self.name_type)["race"])
        for label, value in (("source_race", self.source_race), ("target_race", self.target_race)):
            if self._race(value) not in known:
                raise ValueError(f"{label} must be one of {known}, got {value!r}")

    def _race(self, value: str) -> str:
        value = str(value).lower()
        return _HELM_RACE.get(value, value) if self.name_type == "first_name" else value

    def _names(self, race: str) -> list[str]:
        return _name_mapping(self.name_type)["race"][self._race(race)]

    def _substitute(self, token: str, rng: random.Random) -> str | None:
        options = self._names(self.target_race)
        if self.preserve_gender:
            genders = _name_mapping(self.name_type)["gender"]
            gender = next(
                (g for g in ("female", "male", "neutral") if g in genders and token.lower() in genders[g]), None
            )
            if gender:
                options = [n for n in options if n in genders[gender]]
                if not options:
                    return None
        return rng.choice(list(options))

    def _rewrite(self, text: str, rng: random.Random, chosen: dict[str, str], skipped: set[str]) -> str:
        source = self._names(self.source_race)
        out = []
        for token in re.split(r"([^\w])", text):
            low = token.lower()
            if not (low in chosen or low in skipped) and low in source:
                if rng.uniform(0, 1) < self.prob:
                    name = self._substitute(token, rng)
                    if name:
                        chosen[low] = name
                else:
                    skipped.add(low)
            if low in chosen:
                token = match_case(token, chosen[low])
            out.append(token)
        return "".join(out)

    def perturb(self, text: str, rng: random.Random) -> str:
        return self._rewrite(text, rng, {}, set())

    def apply(self, instance: Instance, seed: int) -> Instance:
        """HELM's ``PersonNamePerturbation.apply``: one name choice kept across references and input."""
        rng = helm_rng(instance)
        chosen: dict[str, str] = {}
        skipped: set[str] = set()
        references = tuple(
            replace(r, output=self._rewrite(r.output, rng, chosen, skipped)) for r in instance.references
        )
        text = self._rewrite(instance.input, rng, chosen, skipped)
        return replace(instance, input=text, references=references, perturbation=self.description())
