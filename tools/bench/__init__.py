"""Benchmarks of holistic (and of its peers on the same work): ``python -m tools.bench.<name>``."""
