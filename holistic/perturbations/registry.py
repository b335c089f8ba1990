"""The perturbation registry: names -> perturbation classes (built-ins plus entry points).

A registered class subclasses :class:`~holistic.perturbations.base.BasePerturbation` (the
registry checks it) and is constructed with the spec's ``args`` as keyword arguments.
Third-party packages register theirs under the entry-point group ``holistic.perturbations``.
"""

from __future__ import annotations

import dataclasses

from holistic.core.arguments import argument_fields
from holistic.core.errors import SpecError, did_you_mean
from holistic.core.registry import Registry, load_object
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

PERTURBATIONS: Registry[type[BasePerturbation]] = Registry.of_extensions(
    "perturbation", BasePerturbation, BUILTIN_PERTURBATIONS, name_of=lambda cls: getattr(cls, "name", None)
)


def perturbation_class(name: str, protocol: str = "holistic") -> type[BasePerturbation]:
    """The class a perturbation name means under ``protocol``: HELM's algorithm for a built-in
    under ``helm`` (:data:`HELM_PERTURBATIONS`), else the registered class."""
    cls = PERTURBATIONS.get(name)
    builtin = BUILTIN_PERTURBATIONS.get(name)
    if protocol == "helm" and name in HELM_PERTURBATIONS and f"{cls.__module__}:{cls.__qualname__}" == builtin:
        helm_cls: type[BasePerturbation] = load_object(HELM_PERTURBATIONS[name])
        return helm_cls
    return cls


def create_perturbation(spec: PerturbationSpec, protocol: str = "holistic") -> BasePerturbation:
    """Build the perturbation a spec names under ``protocol``; bad argument names or values raise :class:`SpecError`.

    Under ``helm`` a built-in takes only the arguments HELM's class has: any other is an
    error naming it (HELM has no such option).
    """
    cls = perturbation_class(spec.name, protocol)
    args = spec.args_dict
    if dataclasses.is_dataclass(cls):
        known = [f.name for f in argument_fields(cls)]
        helm_class = getattr(cls, "helm_class", None)
        for key in args:
            if key not in known:
                hint = did_you_mean(key, known)
                suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
                valid = ", ".join(known) if known else "none"
                where = (
                    f" under protocol 'helm' (HELM's {helm_class.rsplit('.', 1)[-1]} has no such option)"
                    if helm_class
                    else ""
                )
                raise SpecError(
                    f"perturbation {spec.name!r} has no argument {key!r}{where}{suggestion} (valid: {valid})",
                    path=f"perturbations.{spec.name}.args.{key}",
                )
    try:
        perturbation = cls(**args)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"perturbation {spec.name!r}: {exc}", path=f"perturbations.{spec.name}.args") from None
    return perturbation


HELM_PERTURBATIONS: dict[str, str] = {
    "contractions": "holistic.perturbations.helm_robustness:HelmContractions",
    "dialect": "holistic.perturbations.helm_fairness:HelmDialect",
    "expansions": "holistic.perturbations.helm_robustness:HelmExpansions",
    "gender": "holistic.perturbations.helm_fairness:HelmGender",
    "lowercase": "holistic.perturbations.helm_robustness:HelmLowercase",
    "mild_mix": "holistic.perturbations.helm_robustness:HelmMildMix",
    "misspellings": "holistic.perturbations.helm_robustness:HelmMisspellings",
    "person_names": "holistic.perturbations.helm_fairness:HelmPersonNames",
    "synonyms": "holistic.perturbations.helm_robustness:HelmSynonyms",
    "typos": "holistic.perturbations.helm_robustness:HelmTypos",
    "whitespace": "holistic.perturbations.helm_robustness:HelmSpaces",
}
"""Under ``protocol: helm``: the built-in names -> HELM 0.5.16's algorithm for them
(:mod:`holistic.perturbations.helm_base`). A built-in not listed (``contrast_set``) and
plugins keep their own class under both protocols."""
