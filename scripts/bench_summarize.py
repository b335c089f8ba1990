"""Benchmark: helm-summarize on a generated suite of 500 runs x 1,000 instances.

Target (issue 8): under a minute and 2 GB of memory. Prints the generation time,
the summarize time (median of --repeat runs, each in a fresh process so peak RSS
is the summarize step's own) and the peak resident memory.

    python scripts/bench_summarize.py [--runs 500] [--instances 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from holistic.summarize import summarize_suite, write_summary
start = time.perf_counter()
s = summarize_suite(Path(sys.argv[1]))
write_summary(s, Path(sys.argv[1]) / "summary")
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--instances", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from holistic.testing.fake_suite import FakeRun, write_fake_suite

    models = [f"model/{i:02d}" for i in range(10)]
    scenarios = [f"scenario_{j:02d}" for j in range(args.runs // len(models))]
    runs = [
        FakeRun(sc, m, skill=0.3 + 0.05 * i, num_instances=args.instances, perturbations=("typos",))
        for i, m in enumerate(models)
        for sc in scenarios
    ]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        suite_dir = write_fake_suite(Path(tmp), "bench", runs)
        gen = time.perf_counter() - t0
        results = []
        for _ in range(args.repeat):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(suite_dir)], capture_output=True, text=True, check=True
            )
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    secs = [r["seconds"] for r in results]
    rss = [r["peak_rss_mb"] for r in results]
    print(
        json.dumps(
            {
                "runs": len(runs),
                "instances_per_run": args.instances,
                "generate_seconds": round(gen, 1),
                "summarize_seconds_median": round(statistics.median(secs), 2),
                "summarize_seconds_all": [round(s, 2) for s in secs],
                "peak_rss_mb_max": round(max(rss)),
                "targets": {"seconds": 60, "peak_rss_mb": 2048},
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
