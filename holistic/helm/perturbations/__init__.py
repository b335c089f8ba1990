"""HELM 0.5.16's perturbations, reproduced draw for draw (the built-in names under ``protocol: helm``).

The perturbation registry names these classes by ``"module:Class"`` strings
(:data:`holistic.perturbations.registry.HELM_PERTURBATIONS`), so nothing imports this package
until a run asks for HELM's algorithms. This module imports none of its submodules.
"""
