"""Helpers for tests and benchmarks (fake suites in the real store format)."""
