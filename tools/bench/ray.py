"""Benchmark: the local executor against ``--executor ray`` (a local cluster of N workers).

Two workloads, each run under both executors alternately (``--pairs`` times), every run
with an empty request cache, so both compute everything:

- ``embedded``: the quickstart suite on the embedded model (CPU-bound: Ray's gain is
  bounded by the cores, and each worker loads its own copy of the model);
- ``api-like``: the same runs on the ``simple`` model with a fixed delay per request
  (waiting-bound, like an API: runs overlap across workers).

Prints one JSON line per measurement and a summary with medians and the local/ray
ratio of wall times. Needs the ``ray`` extra.

    python -m tools.bench.ray [--workers 2] [--pairs 3] [--max-eval-instances 10]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from tools.bench.docs import add_docs_option, figures, write_results
from tools.common import REPO

SLOW_MODEL = """\
models:
  - name: simple/api-like
    provider: simple
    model_id: echo
    description: simple/echo with a fixed delay per request, standing in for a remote API.
    context_window: 4096
    args: {delay_s: 0.05}
    capabilities: {logprobs: true, prompt_logprobs: true, chat: true, completions: true}
"""


def _spec(folder: Path, model: str) -> Path:
    text = (REPO / "runspecs" / "quickstart.yaml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^models:.*$", f"models: [{model}]", text)
    text = text.replace("path: data/", f"path: {REPO / 'runspecs' / 'data'}/")
    path = folder / f"{model.replace('/', '_')}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _run(spec: Path, out: Path, executor: str, extra: list[str]) -> dict[str, float]:
    cmd = [
        sys.executable,
        "-m",
        "holistic.cli.run",
        str(spec),
        "--output-dir",
        str(out),
        "--quiet",
        "--executor",
        executor,
        *extra,
    ]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=os.environ.copy())
    wall = time.perf_counter() - start
    requests = 0
    for suite in out.iterdir():
        summary = suite / "suite.json"
        if summary.exists():
            requests += sum(r.get("requests", 0) for r in json.loads(summary.read_text())["runs"])
    return {"wall_s": wall, "requests": requests, "requests_per_s": requests / wall}


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m tools.bench.ray", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--workers", type=int, default=2, help="CPUs of the local Ray cluster")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--max-eval-instances", type=int, default=10)
    ap.add_argument("--workloads", default="embedded,api-like")
    add_docs_option(ap)
    args = ap.parse_args()

    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ctx = ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    address = cast(Any, ctx).address_info["address"]  # a RayContext (ray.init is typed as giving its base)
    os.environ["RAY_ADDRESS"] = address  # the children join this cluster (started once)
    summary: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "models.yaml").write_text(SLOW_MODEL, encoding="utf-8")
            models = {"embedded": "embedded/smollm2-135m-instruct", "api-like": "simple/api-like"}
            for workload in args.workloads.split(","):
                spec = _spec(folder, models[workload])
                extra = [
                    "--max-eval-instances",
                    str(args.max_eval_instances),
                    "--models-file",
                    str(folder / "models.yaml"),
                ]
                walls: dict[str, list[float]] = {"local": [], "ray": []}
                for pair in range(args.pairs):
                    order = ("local", "ray") if pair % 2 == 0 else ("ray", "local")
                    for executor in order:
                        out = folder / f"{workload}-{executor}-{pair}"
                        result = _run(spec, out, executor, extra)
                        walls[executor].append(result["wall_s"])
                        print(
                            json.dumps(
                                {
                                    "workload": workload,
                                    "executor": executor,
                                    "pair": pair,
                                    **{k: round(v, 2) for k, v in result.items()},
                                }
                            ),
                            flush=True,
                        )
                local, remote = statistics.median(walls["local"]), statistics.median(walls["ray"])
                summary[workload] = {
                    "local_median_s": round(local, 1),
                    "ray_median_s": round(remote, 1),
                    "local_over_ray": round(local / remote, 2),
                }
    finally:
        ray.shutdown()
    print(json.dumps({"workers": args.workers, "pairs": args.pairs, "summary": summary}, indent=2))
    if args.write_docs:
        print(
            f"wrote {write_results('ray', figures({'workers': args.workers, 'pairs': args.pairs, 'summary': summary}))}"
        )


if __name__ == "__main__":
    main()
