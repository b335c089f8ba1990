"""The HELM conformance harness: HELM itself (crfm-helm 0.5.16, in a virtual environment of its own)
and holistic on the same scenarios, instances and model, compared (``python -m tools.conformance.helm``).

The programs under ``peer/`` run in HELM's interpreter: they import HELM, never holistic."""
