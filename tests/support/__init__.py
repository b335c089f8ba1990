"""What the tests (and the benchmarks under ``tools/``) share: a fake suite in the real results
format, an OpenAI-compatible server that rate-limits, and IFEval responses."""
