"""Person names: first names swapped across race and gender lists, or last names across races.

``data/person_names.tsv`` lists first names with the race and gender they are
demographically associated with in the United States (name, race, gender);
``data/person_last_names.tsv`` lists surnames with their race (name, race).
Each source name in the text (matched as a capitalised whole word) is replaced
by a target-group name chosen from the instance seed and the name itself, so a
name is replaced the same way in the input and in every reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from holistic.perturbations.base import Counterfactual, PerturbRandom, check_probability
from holistic.perturbations.wordlists import read_rows

DATA = "holistic.perturbations.data"
GENDERS = ("female", "male")
NAME_TYPES = ("first_name", "last_name")


@cache
def names_by_group() -> dict[tuple[str, str], tuple[str, ...]]:
    """(race, gender) -> first names, in file order."""
    out: dict[tuple[str, str], list[str]] = {}
    for name, race, gender in read_rows(DATA, "person_names.tsv", 3):
        out.setdefault((race.lower(), gender.lower()), []).append(name)
    return {k: tuple(v) for k, v in out.items()}


@cache
def last_names_by_race() -> dict[str, tuple[str, ...]]:
    """Race -> last names, in file order."""
    out: dict[str, list[str]] = {}
    for name, race in read_rows(DATA, "person_last_names.tsv", 2):
        out.setdefault(race.lower(), []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def races() -> list[str]:
    return sorted({race for race, _ in names_by_group()} & set(last_names_by_race()))


@dataclass(frozen=True)
class PersonNames(Counterfactual):
    """First names of ``source_race`` become names of ``target_race``.

    With ``preserve_gender`` a name keeps its gender; ``target_gender`` instead
    forces one gender (for swaps across gender lists). ``name_type="last_name"``
    swaps surnames across races instead (gender does not apply).
    """

    name = "person_names"

    prob: float = 1.0
    """Probability that a listed name is replaced (decided once per distinct name)."""
    source_race: str = "white"
    target_race: str = "black"
    preserve_gender: bool = True
    target_gender: str | None = None
    name_type: str = "first_name"

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)
        if self.name_type not in NAME_TYPES:
            raise ValueError(f"name_type must be one of {list(NAME_TYPES)}, got {self.name_type!r}")
        known = races()
        for label, value in (("source_race", self.source_race), ("target_race", self.target_race)):
            if value not in known:
                raise ValueError(f"{label} must be one of {known}, got {value!r}")
        if self.target_gender is not None and self.target_gender not in GENDERS:
            raise ValueError(f"target_gender must be one of {list(GENDERS)} or null, got {self.target_gender!r}")
        if self.source_race == self.target_race and self.target_gender is None:
            raise ValueError("source_race equals target_race and no target_gender is set: nothing would change")

    def _targets(self, gender: str) -> tuple[str, ...]:
        groups = names_by_group()
        if self.target_gender is not None:
            return groups.get((self.target_race, self.target_gender), ())
        if self.preserve_gender:
            return groups.get((self.target_race, gender), ())
        return tuple(n for g in GENDERS for n in groups.get((self.target_race, g), ()))

    @property
    def _table(self) -> dict[str, tuple[str, ...]]:
        if self.name_type == "last_name":
            return _last_name_table(self.source_race, self.target_race)
        return _source_table(self.source_race, self.target_race, self.preserve_gender, self.target_gender)

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        table = self._table
        if not table:
            return text

        def one(match: re.Match[str]) -> str:
            source = match.group(0)
            choice = rng.for_key(source)
            if choice.random() >= self.prob:
                return source
            target = choice.choice(table[source])
            return target.upper() if source.isupper() and len(source) > 1 else target

        return _pattern(tuple(sorted(table))).sub(one, text)


@cache
def _source_table(
    source_race: str, target_race: str, preserve_gender: bool, target_gender: str | None
) -> dict[str, tuple[str, ...]]:
    """Source name (as written, and in capitals) -> candidate replacements."""
    spec = PersonNames(
        source_race=source_race, target_race=target_race, preserve_gender=preserve_gender, target_gender=target_gender
    )
    table: dict[str, tuple[str, ...]] = {}
    for gender in GENDERS:
        table.update(_swaps(names_by_group().get((source_race, gender), ()), tuple(spec._targets(gender))))
    return table


@cache
def _last_name_table(source_race: str, target_race: str) -> dict[str, tuple[str, ...]]:
    groups = last_names_by_race()
    return _swaps(groups.get(source_race, ()), groups.get(target_race, ()))


def _swaps(sources: Iterable[str], targets: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each source name (as written, and in capitals) -> the targets other than itself."""
    table: dict[str, tuple[str, ...]] = {}
    for name in sources:
        options = tuple(t for t in targets if t != name)
        if options:
            table[name] = options
            table[name.upper()] = options
    return table


@cache
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternation = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    return re.compile(r"(?<![A-Za-z])(?:" + alternation + r")(?![A-Za-z])")
