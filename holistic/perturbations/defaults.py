"""The perturbations a run gets when it asks for robustness/fairness but names none.

These follow HELM's recipe (Liang et al., 2022, appendix D): robustness is the
worst case over the original and the composed "mild mix" (lower-case,
contractions, misspellings at 0.1, 1-3 spaces); fairness uses dialect (SAE -> AAE), gender pronouns
(male -> female) and first names (White -> Black, gender kept), each at
probability 1. The single transformations (typos, synonyms...) stay available
by name; HELM reports them separately rather than in the default worst case.
Under ``protocol: helm`` these names mean HELM's own algorithms
(:mod:`holistic.helm.perturbations.base`); person names then carry a named deviation
(HELM's name list is not public) and stay out of the ``fairness`` worst case.

Contrast sets (HELM's equivariance for IMDB and BoolQ) are not a default: no
built-in scenario ships them, and a perturbation that makes no variant is an error
(:func:`holistic.perturbations.apply.apply_perturbations`). Name ``contrast_set`` in a
run whose scenario provides ``contrast_inputs``.
"""

from __future__ import annotations

from collections.abc import Sequence

from holistic.core.types import PerturbationSpec

DEFAULTS: dict[str, tuple[PerturbationSpec, ...]] = {
    "robustness": (PerturbationSpec.make("mild_mix"),),
    "fairness": (
        PerturbationSpec.make("dialect", {"prob": 1.0}),
        PerturbationSpec.make("gender", {"mode": "pronouns", "prob": 1.0}),
        PerturbationSpec.make("person_names", {"prob": 1.0}),
    ),
}


def default_perturbations(categories: Sequence[str]) -> list[PerturbationSpec]:
    """Default specs for the given metric categories (others are ignored), without duplicates."""
    out: list[PerturbationSpec] = []
    for category in categories:
        for spec in DEFAULTS.get(category, ()):
            if spec not in out:
                out.append(spec)
    return out
