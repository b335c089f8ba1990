"""The perturbation registry: names -> perturbation classes (built-ins plus entry points).

A registered class is constructed with the spec's ``args`` as keyword arguments
and implements :class:`holistic.core.interfaces.Perturbation`. Third-party
packages register theirs under the entry-point group ``holistic.perturbations``.
"""

from __future__ import annotations

import dataclasses

from holistic.core.errors import SpecError, did_you_mean
from holistic.core.registry import Registry
from holistic.core.types import PerturbationSpec
from holistic.perturbations.base import BasePerturbation

BUILTIN_PERTURBATIONS: dict[str, str] = {
    "contractions": "holistic.perturbations.contractions:Contractions",
    "contrast_set": "holistic.perturbations.contrast:ContrastSet",
    "dialect": "holistic.perturbations.dialect:Dialect",
    "expansions": "holistic.perturbations.contractions:Expansions",
    "gender": "holistic.perturbations.gender:Gender",
    "lowercase": "holistic.perturbations.lowercase:Lowercase",
    "mild_mix": "holistic.perturbations.mild_mix:MildMix",
    "misspellings": "holistic.perturbations.misspellings:Misspellings",
    "person_names": "holistic.perturbations.person_names:PersonNames",
    "synonyms": "holistic.perturbations.synonyms:Synonyms",
    "typos": "holistic.perturbations.typos:Typos",
    "whitespace": "holistic.perturbations.whitespace:ExtraWhitespace",
}
"""The built-in perturbations, declared like plugins' entry points: name -> ``"module:Class"``
(imported on first lookup of the name)."""

PERTURBATIONS: Registry[type[BasePerturbation]] = Registry(
    "perturbation", group="holistic.perturbations", builtins=BUILTIN_PERTURBATIONS, base=BasePerturbation
)


def create_perturbation(spec: PerturbationSpec) -> BasePerturbation:
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
        perturbation = cls(**args)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"perturbation {spec.name!r}: {exc}", path=f"perturbations.{spec.name}.args") from None
    return perturbation
