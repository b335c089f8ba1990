"""The project's own tooling (not shipped in the wheel): benchmarks (:mod:`tools.bench`), conformance
harnesses against the peer tools (:mod:`tools.conformance`) and the structure check
(:mod:`tools.structure`). Run them from a clone as modules, e.g. ``python -m tools.bench.models``."""
