"""The perturbation registry: names -> perturbation classes (built-ins plus entry points).

A registered class is constructed with the spec's ``args`` as keyword arguments
and implements :class:`holistic.core.interfaces.Perturbation`. Third-party
packages register theirs under the entry-point group ``holistic.perturbations``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from holistic.core.errors import SpecError, did_you_mean
from holistic.core.interfaces import Perturbation
from holistic.core.registry import Registry
from holistic.core.types import PerturbationSpec
from holistic.perturbations.contractions import Contractions, Expansions
from holistic.perturbations.contrast import ContrastSet
from holistic.perturbations.dialect import Dialect
from holistic.perturbations.gender import Gender
from holistic.perturbations.lowercase import Lowercase
from holistic.perturbations.mild_mix import MildMix
from holistic.perturbations.misspellings import Misspellings
from holistic.perturbations.person_names import PersonNames
from holistic.perturbations.synonyms import Synonyms
from holistic.perturbations.typos import Typos
from holistic.perturbations.whitespace import ExtraWhitespace

PERTURBATIONS: Registry[Any] = Registry("perturbation", group="holistic.perturbations")

for _cls in (
    Typos,
    Misspellings,
    Lowercase,
    Contractions,
    Expansions,
    ExtraWhitespace,
    Synonyms,
    MildMix,
    ContrastSet,
    Dialect,
    Gender,
    PersonNames,
):
    PERTURBATIONS.add(_cls.name, _cls)


def create_perturbation(spec: PerturbationSpec) -> Perturbation:
    """Build the perturbation a spec names; bad argument names or values raise :class:`SpecError`."""
    cls = PERTURBATIONS.get(spec.name)
    args = spec.args_dict
    if dataclasses.is_dataclass(cls):
        known = [f.name for f in dataclasses.fields(cls)]
        for key in args:
            if key not in known:
                hint = did_you_mean(key, known)
                suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
                valid = ", ".join(known) if known else "none"
                raise SpecError(
                    f"perturbation {spec.name!r} has no argument {key!r}{suggestion} (valid: {valid})",
                    path=f"perturbations.{spec.name}.args.{key}",
                )
    try:
        perturbation: Perturbation = cls(**args)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"perturbation {spec.name!r}: {exc}", path=f"perturbations.{spec.name}.args") from None
    return perturbation
