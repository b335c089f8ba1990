"""Conformance harnesses: holistic against HELM (:mod:`tools.conformance.helm`) and lm-evaluation-harness."""
