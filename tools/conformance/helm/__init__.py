"""The HELM conformance harness: HELM itself (crfm-helm 0.5.16, in a virtual environment of its own)
and holistic on the same scenarios, instances and model, compared (``python -m tools.conformance.helm``).

One module per job:

- :mod:`~tools.conformance.helm.keys`: the keys it runs (scenario, HELM run entry, perturbed and
  greedy variants) and HELM's names; :mod:`~tools.conformance.helm.deviations`: what HELM cannot be
  given as its downloads would, and what no run here compares;
- :mod:`~tools.conformance.helm.environment`: HELM's virtual environment and configuration;
- :mod:`~tools.conformance.helm.staging` (with :mod:`~tools.conformance.helm.authored_qa` and
  :mod:`~tools.conformance.helm.authored_news`, the files written in the authors' formats): the same
  bytes for both tools;
- :mod:`~tools.conformance.helm.running`: running both;
- :mod:`~tools.conformance.helm.compare` and :mod:`~tools.conformance.helm.stats`: the comparison,
  its targets and named exclusions;
- :mod:`~tools.conformance.helm.golden`: the golden files the tests check holistic against;
- ``__main__``: the command line and its report.

:mod:`~tools.conformance.helm.perturbations` compares HELM's perturbations without a model;
``capabilities``, ``safety`` and ``import_fixtures`` make the other golden files and fixtures.
The programs under ``peer/`` run in HELM's interpreter: they import HELM, never holistic.
"""
