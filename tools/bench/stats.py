"""Measure holistic.metrics.stats: bootstrap CIs for a large run.

Usage: python -m tools.bench.stats [--instances 10000] [--resamples 1000] [--metrics 1] [--repeat 5]

Prints the best wall time of ``aggregate`` over the repeats for ``--metrics`` value
names sharing ``--instances`` instances (one trial), each with a 95% bootstrap CI of
``--resamples`` resamples.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from holistic.core.interfaces import MetricInfo
from holistic.core.types import MetricName, PerInstanceStat
from holistic.metrics.stats import aggregate


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.stats", description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--metrics", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    names = [f"metric_{k}" for k in range(args.metrics)]
    infos = {n: MetricInfo(n, "accuracy") for n in names}
    rows = [
        PerInstanceStat(instance_id=f"id{i:06d}", trial=0, name=MetricName(n), value=float(v))
        for n in names
        for i, v in enumerate(rng.uniform(size=args.instances))
    ]
    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        stats = aggregate(rows, seed=0, infos=infos, num_resamples=args.resamples)
        best = min(best, time.perf_counter() - start)
    stat = stats[0]
    print(
        f"aggregate: {args.metrics} metric(s) x {args.instances} instances x {args.resamples} resamples: "
        f"best of {args.repeat} = {best:.3f} s  (mean {stat.mean:.4f}, CI [{stat.ci_low:.4f}, {stat.ci_high:.4f}])"
    )


if __name__ == "__main__":
    main()
