"""Shared machinery of the built-in text perturbations.

A built-in perturbation is a frozen dataclass whose fields are its arguments
(so a run spec's ``args`` map one-to-one onto them; :mod:`holistic.core.arguments`, shared
with scenarios, derives their JSON Schema) and which implements
:meth:`TextPerturbation.perturb` on one string. The base class turns that into
the contract every perturbation meets, :class:`BasePerturbation`: it seeds the
randomness from the run seed, the perturbation's name and arguments and the
instance id (never global state), tags the variant with a
:class:`~holistic.core.types.PerturbationDescription`, and, for perturbations
whose answer must follow the input (gender, names, dialect), rewrites the
references with the same word choices.
"""

from __future__ import annotations

import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from holistic.core.hashing import stable_seed
from holistic.core.types import Instance, PerturbationDescription

ROBUSTNESS = "robustness"
FAIRNESS = "fairness"

HELM_ID_KEY = "helm_instance_id"
"""Instance metadata key: the id HELM's runner gives the instance (``id<n>``, its position in the
scenario as loaded, training instances included), which seeds HELM's perturbations."""

WORD_RE = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
"""A word: letters, optionally joined by apostrophes (``don't``, ``O'Neil``)."""


class PerturbRandom:
    """Randomness for one (run seed, perturbation, instance) triple.

    ``seq`` is a sequential generator for position-by-position choices (typos,
    spacing). :meth:`for_key` gives a generator that depends only on a key
    (usually the lower-cased source word), so the same word gets the same
    replacement in the input and in every reference.
    """

    def __init__(self, *parts: Any, field: str = "input") -> None:
        self._parts = parts
        self.seq = random.Random(stable_seed(*parts, field))

    def for_key(self, key: str) -> random.Random:
        return random.Random(stable_seed(*self._parts, "key", key))

    def child(self, name: str, field: str = "input") -> PerturbRandom:
        """Independent randomness for one component of a composed perturbation."""
        return PerturbRandom(*self._parts, name, field=field)


def match_case(source: str, target: str) -> str:
    """Give ``target`` the capitalisation pattern of ``source``."""
    if len(source) > 1 and source.isupper():
        return target.upper()
    if source[:1].isupper():
        return target[:1].upper() + target[1:]
    return target


def phrase_pattern(phrases: Mapping[str, Any] | list[str]) -> re.Pattern[str]:
    """Case-insensitive whole-word pattern for phrases, longest first.

    Spaces inside a phrase match any run of spaces; an apostrophe matches both
    the straight and the typographic one.
    """
    keys = sorted(phrases, key=lambda k: (-len(k), k))
    parts = []
    for key in keys:
        escaped = re.escape(key).replace(r"\ ", r"\s+").replace("'", "['’]")
        parts.append(escaped)
    return re.compile(r"(?<![A-Za-z'’])(?:" + "|".join(parts) + r")(?![A-Za-z'’])", re.IGNORECASE)


def sub_words(text: str, replace_word: Callable[[str], str]) -> str:
    """Apply ``replace_word`` to every word of ``text``, keeping everything else."""
    return WORD_RE.sub(lambda m: replace_word(m.group(0)), text)


def normalize_key(text: str) -> str:
    """Lookup key of a matched phrase: lower case, straight apostrophes, single spaces."""
    return re.sub(r"\s+", " ", text.lower().replace("’", "'"))


class BasePerturbation(ABC):
    """The complete contract of a perturbation class (built-in or plugin).

    It sets ``name`` and ``category`` (``robustness`` or ``fairness``) and implements
    ``apply(instance, seed)``; :meth:`variants` may be overridden to make zero or several
    variants of one instance (default: the one ``apply`` makes). The spec's ``args`` are
    passed to the constructor as keyword arguments. Deterministic: derive randomness from
    ``seed`` and the instance (never global state).
    """

    name: ClassVar[str]
    category: ClassVar[str]
    drops_unchanged: ClassVar[bool] = False
    """:meth:`variants` drops a variant whose input did not change, so it may make none of any
    instance (no error then); a run that keeps unchanged variants takes :meth:`apply`'s instead."""

    @abstractmethod
    def apply(self, instance: Instance, seed: int) -> Instance:
        """One perturbed variant of ``instance`` (its ``perturbation`` field describes the change)."""

    def variants(self, instance: Instance, seed: int) -> list[Instance]:
        """Every variant of ``instance`` (default: the one :meth:`apply` makes)."""
        return [self.apply(instance, seed)]

    def load(self, data_root: Path | None, offline: bool) -> None:
        """Read the data files this perturbation needs before its first variant (default: none)."""
        return None


@dataclass(frozen=True)
class TextPerturbation(BasePerturbation):
    """Base of the built-in perturbations (subclasses are frozen dataclasses)."""

    name: ClassVar[str]
    category: ClassVar[str]
    perturb_references: ClassVar[bool] = False
    """Also rewrite the references (when the right answer must follow the input)."""

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        raise NotImplementedError

    def args(self) -> tuple[tuple[str, Any], ...]:
        return tuple(sorted(asdict(self).items()))

    def description(self) -> PerturbationDescription:
        return PerturbationDescription(
            name=self.name,
            robustness=self.category == ROBUSTNESS,
            fairness=self.category == FAIRNESS,
            args=self.args(),
        )

    def _random(self, instance: Instance, seed: int, field: str) -> PerturbRandom:
        return PerturbRandom(seed, self.name, [list(a) for a in self.args()], instance.id, field=field)

    def apply(self, instance: Instance, seed: int) -> Instance:
        text = self.perturb(instance.input, self._random(instance, seed, "input"))
        references = instance.references
        if self.perturb_references:
            references = tuple(
                replace(ref, output=self.perturb(ref.output, self._random(instance, seed, f"reference:{i}")))
                for i, ref in enumerate(references)
            )
        return replace(instance, input=text, references=references, perturbation=self.description())

    def variants(self, instance: Instance, seed: int) -> list[Instance]:
        """Every variant of ``instance`` (one for text perturbations)."""
        return [self.apply(instance, seed)]


@dataclass(frozen=True)
class Counterfactual(TextPerturbation):
    """Base of the built-in fairness rewrites (dialect, gender, person names): the references
    are rewritten with the input's word choices, so the right answer follows the input."""

    category = FAIRNESS
    perturb_references = True


def check_probability(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number between 0 and 1, got {value!r}")


def with_helm_ids(instances: Sequence[Instance]) -> list[Instance]:
    """The scenario's instances, each with the id HELM's runner gives it (``id<n>``, its position
    in the scenario, training instances included) in ``metadata[HELM_ID_KEY]``, unless set."""
    return [
        inst if HELM_ID_KEY in inst.metadata else replace(inst, metadata={**inst.metadata, HELM_ID_KEY: f"id{i}"})
        for i, inst in enumerate(instances)
    ]
