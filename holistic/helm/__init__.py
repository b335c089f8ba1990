"""HELM compatibility, as one layer: what ``protocol: helm`` means and what proves it.

Everything holistic knows only because of HELM 0.5.16 lives here: the proof records (which
golden file made by HELM proves which scenario and perturbation, :mod:`.proofs`, data in
``proofs.yaml``), the verdict a run's conformance gets from them, and the HELM scenario each
scenario reproduces (for ``helm-import``). The rest of the library does not import this
package: the spec compiler (:mod:`holistic.spec`) resolves ``protocol: helm`` into named
:class:`~holistic.core.specs.AdapterSpec` behaviours and reads the proofs through it, and the
``helm-import`` command imports it. This module imports none of its submodules.
"""
