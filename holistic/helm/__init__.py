"""HELM compatibility, as one layer: what ``protocol: helm`` means and what proves it.

Everything holistic knows only because of HELM 0.5.16 lives here: what the protocol fixes and
the behaviours it means (:mod:`.protocol`), the proof records (which golden file made by HELM
proves which scenario and perturbation, where HELM keeps unchanged variants, which HELM scenario
each scenario reproduces: :mod:`.proofs`, data in ``proofs.yaml``), HELM's perturbation
algorithms (:mod:`.perturbations`) and ``helm-import`` (:mod:`.imports`).

The rest of the library does not import this package. The spec compiler does, directly: it
resolves ``protocol: helm`` into named :class:`~holistic.core.specs.ProtocolBehaviour` flags
(:mod:`holistic.spec.protocol`) and turns the proofs into a run's verdict
(:mod:`holistic.spec.conformance`, which ``--plan``, ``run_spec.json`` and the run page show);
the perturbation registry names HELM's algorithms by ``"module:Class"`` strings; the
``helm-import`` command and :func:`holistic.api.import_helm`, the call it maps onto, import
:mod:`.imports`. This module imports none of its submodules.
"""
