"""Robustness and fairness perturbations of evaluation inputs.

Public API:

- :func:`apply_perturbations` — originals then tagged variants, deterministic per seed and id.
- :func:`default_perturbations` — HELM's default specs for the robustness/fairness categories.
- :data:`holistic.perturbations.registry.PERTURBATIONS` — names -> classes (entry-point group
  ``holistic.perturbations``); :func:`create_perturbation` builds one from a spec.

Word lists live in ``holistic/perturbations/data`` (see its README for sources).
"""

from holistic.perturbations.apply import apply_perturbations
from holistic.perturbations.defaults import default_perturbations
from holistic.perturbations.registry import PERTURBATIONS, create_perturbation

__all__ = ["PERTURBATIONS", "apply_perturbations", "create_perturbation", "default_perturbations"]
