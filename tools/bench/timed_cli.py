"""One holistic command in a fresh interpreter, timed: what the benchmarks measure a CLI with.

    python -m tools.bench.timed_cli run|summarize [ARGS...]

runs ``helm-run`` (``run``) or ``helm-summarize`` (``summarize``) with ``ARGS`` in this process and
prints, on its last line, ``{"seconds", "exit", "peak_rss_mb"}`` as JSON.
"""

from __future__ import annotations

import json
import resource
import sys
import time


def main(argv: list[str]) -> int:
    start = time.perf_counter()
    kind, args = argv[0], argv[1:]
    if kind == "run":
        from holistic.cli.run import main as command
    elif kind == "summarize":
        from holistic.cli.summarize import main as command
    else:
        raise SystemExit(f"timed_cli: run or summarize, not {kind!r}")
    code = command(args)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": time.perf_counter() - start, "exit": code, "peak_rss_mb": peak_mb}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
