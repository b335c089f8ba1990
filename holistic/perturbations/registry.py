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


def perturbation_class(name: str, *, helm: bool = False) -> type[BasePerturbation]:
    """The class a perturbation name means: with ``helm``
    (:attr:`~holistic.core.specs.ProtocolBehaviour.helm_perturbations`) HELM's algorithm for a
    built-in (:data:`HELM_PERTURBATIONS`), else the registered class."""
    cls = PERTURBATIONS.get(name)
    builtin = BUILTIN_PERTURBATIONS.get(name)
    if helm and name in HELM_PERTURBATIONS and f"{cls.__module__}:{cls.__qualname__}" == builtin:
        helm_cls: type[BasePerturbation] = load_object(HELM_PERTURBATIONS[name])
        return helm_cls
    return cls


def create_perturbation(spec: PerturbationSpec, *, helm: bool = False) -> BasePerturbation:
    """Build the perturbation a spec names (HELM's algorithm with ``helm``); bad argument names or
    values raise :class:`SpecError`.

    HELM's algorithm takes only the arguments HELM's class has: any other is an error naming it
    (HELM has no such option).
    """
    cls = perturbation_class(spec.name, helm=helm)
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
    "contractions": "holistic.helm.perturbations.robustness:HelmContractions",
    "dialect": "holistic.helm.perturbations.fairness:HelmDialect",
    "expansions": "holistic.helm.perturbations.robustness:HelmExpansions",
    "gender": "holistic.helm.perturbations.fairness:HelmGender",
    "lowercase": "holistic.helm.perturbations.robustness:HelmLowercase",
    "mild_mix": "holistic.helm.perturbations.robustness:HelmMildMix",
    "misspellings": "holistic.helm.perturbations.robustness:HelmMisspellings",
    "person_names": "holistic.helm.perturbations.fairness:HelmPersonNames",
    "synonyms": "holistic.helm.perturbations.robustness:HelmSynonyms",
    "typos": "holistic.helm.perturbations.robustness:HelmTypos",
    "whitespace": "holistic.helm.perturbations.robustness:HelmSpaces",
}
"""With HELM's perturbations (``protocol: helm``): the built-in names -> HELM 0.5.16's algorithm for
them, in the HELM layer (:mod:`holistic.helm.perturbations`), named by ``"module:Class"`` so that
nothing imports it until a run asks. A built-in not listed (``contrast_set``) and plugins keep
their own class under both protocols."""
