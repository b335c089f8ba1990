"""Benchmark: the fixed cost of a run — one request to the embedded model, end to end.

``helm-run`` on a spec of one evaluation instance (a ``file`` scenario of one question,
zero-shot, one generated token, accuracy only) into a fresh output folder with a fresh,
empty request cache (the weights converted once, as after an install), each time in a new process: the wall time is everything a user
waits for on the smallest run — interpreter start, imports, reading the spec and the
model registry, loading the weights, the one forward pass, writing the Parquet results.
Beside it, in alternation, two floors measured the same way: the interpreter importing
torch alone, and the interpreter starting and doing nothing.

Target: the one-request run in ≤ 1.5 s wall (median).

    python -m tools.bench.fixed_cost              # 5 alternating rounds
    python -m tools.bench.fixed_cost --rounds 9 --out fixed_cost.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.bench.docs import add_docs_option, figures, write_results
from tools.common import REPO

TARGET_SECONDS = 1.5
MODEL = "embedded/smollm2-135m-instruct"

SPEC = f"""\
suite: fixed_cost
seed: 0
models: [{MODEL}]
defaults:
  metrics: [accuracy]
  adaptation: {{max_train_instances: 0, max_tokens: 1}}
runs:
  - scenario: file
    args:
      path: one.jsonl
      fields: {{input: question, output: answer, id: id}}
"""
ONE_QUESTION = {"id": "q1", "question": "What is the capital of France?", "answer": "Paris"}


def write_spec(folder: Path) -> Path:
    (folder / "one.jsonl").write_text(json.dumps(ONE_QUESTION) + "\n", encoding="utf-8")
    spec = folder / "one.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return spec


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(
            f"bench_fixed_cost: {' '.join(cmd[:3])} ... failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    return elapsed


def one_run(spec: Path, work: Path, k: int) -> float:
    out, cache = work / f"out{k}", work / f"cache{k}"
    cmd = [sys.executable, "-m", "holistic.cli.run", str(spec), "--output-dir", str(out), "--quiet"]
    cmd += ["--cache-dir", str(cache)]
    return timed(cmd, dict(os.environ), spec.parent)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.bench.fixed_cost",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5); medians are reported")
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    add_docs_option(ap)
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")

    env = dict(os.environ)
    runs: list[float] = []
    torch_import: list[float] = []
    bare: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench_fixed_cost-") as tmp:
        work = Path(tmp)
        spec = write_spec(work)
        one_run(spec, work, -1)  # warms the OS file cache and converts the weights once, as after an install
        for k in range(args.rounds):
            runs.append(one_run(spec, work, k))
            torch_import.append(timed([sys.executable, "-c", "import torch"], env, REPO))
            bare.append(timed([sys.executable, "-c", "pass"], env, REPO))
            print(f"round {k + 1}: run {runs[-1]:.2f} s, import torch {torch_import[-1]:.2f} s", flush=True)
    report = {
        "rounds": args.rounds,
        "one_request_run_seconds_median": round(statistics.median(runs), 3),
        "one_request_run_seconds_all": [round(x, 3) for x in runs],
        "import_torch_seconds_median": round(statistics.median(torch_import), 3),
        "interpreter_seconds_median": round(statistics.median(bare), 3),
        "target_seconds": TARGET_SECONDS,
    }
    med = report["one_request_run_seconds_median"]
    verdict = "met" if med <= TARGET_SECONDS else f"MISSED by {med - TARGET_SECONDS:.2f} s"
    print(f"one-request run on {MODEL}: {med:.2f} s median of {args.rounds} (target <= {TARGET_SECONDS} s: {verdict})")
    print(
        f"floors, same rounds: python importing torch {report['import_torch_seconds_median']:.2f} s, "
        f"bare interpreter {report['interpreter_seconds_median']:.2f} s"
    )
    if args.out:
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    if args.write_docs:
        print(f"wrote {write_results('fixed_cost', figures(report))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
