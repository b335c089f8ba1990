"""Benchmark: ``runspecs/longcontext.yaml`` end to end on the embedded model, timed.

Runs ``helm-run runspecs/longcontext.yaml`` into a fresh output folder with a fresh, empty
request cache (the weights converted once, as after an install), then ``helm-summarize``
on the suite, each in its own process, and reports their wall times, the peak resident
memory of each (the child's own, from ``getrusage``) and what the run sent through the
model (from the run's summary line).

Target: the run in ≤ 15 minutes on this machine.

    python -m tools.bench.longcontext
    python -m tools.bench.longcontext --spec runspecs/longcontext.yaml --out longcontext.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.bench.docs import add_docs_option, figures, write_results
from tools.common import REPO

TARGET_SECONDS = 15 * 60.0


def child(kind: str, args: list[str]) -> dict[str, Any]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "tools.bench.timed_cli", kind, *args], capture_output=True, text=True, cwd=REPO
    )
    wall = time.perf_counter() - start
    lines = proc.stdout.strip().splitlines()
    if proc.returncode not in (0, 3) or not lines:
        raise SystemExit(f"bench_longcontext: {kind} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    result["wall_s"] = wall
    result["summary_line"] = next((ln for ln in lines if ln.startswith("suite ")), "")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.bench.longcontext",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--spec", type=Path, default=REPO / "runspecs" / "longcontext.yaml", help="the run spec")
    ap.add_argument("--work", type=Path, help="output folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    add_docs_option(ap)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_longcontext-") as tmp:
        work = (args.work or Path(tmp)).resolve()
        out, cache = work / "output", work / "cache"
        run = child("run", [str(args.spec), "--output-dir", str(out), "--cache-dir", str(cache), "--quiet"])
        names = [p.name for p in out.iterdir() if p.is_dir()]
        summ = child("summarize", ["--suite", names[0], "--output-dir", str(out)]) if len(names) == 1 else None
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "spec": str(args.spec),
        "run_seconds": round(run["wall_s"], 1),
        "run_peak_rss_mb": round(run["peak_rss_mb"]),
        "run_summary": run["summary_line"],
        "summarize_seconds": round(summ["wall_s"], 1) if summ else None,
        "summarize_peak_rss_mb": round(summ["peak_rss_mb"]) if summ else None,
        "target_seconds": TARGET_SECONDS,
    }
    verdict = "met" if run["wall_s"] <= TARGET_SECONDS else f"MISSED by {run['wall_s'] - TARGET_SECONDS:.0f} s"
    print(run["summary_line"])
    print(
        f"helm-run {args.spec.name}: {run['wall_s']:.1f} s wall, peak {run['peak_rss_mb']:.0f} MB "
        f"(target <= {TARGET_SECONDS / 60:.0f} min: {verdict})"
    )
    if summ:
        print(f"helm-summarize: {summ['wall_s']:.1f} s wall, peak {summ['peak_rss_mb']:.0f} MB")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    if args.write_docs:
        print(f"wrote {write_results('longcontext', figures(report))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
