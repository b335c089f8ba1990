"""Benchmark: HELM 0.5.16's own ``helm-summarize`` on the synthetic suite of ``tools.bench.summarize``.

The same synthetic suite as ``python -m tools.bench.summarize`` (``--runs`` runs × ``--instances``
instances, default 5,000 × 1,000: 10 models × 500 scenarios, a request per instance, each
instance's worst case under one perturbation) is written in holistic's format, then converted into HELM run folders
(``benchmark_output/runs/bench/<run>/``: ``run_spec.json``, ``scenario.json``,
``scenario_state.json``, ``stats.json``, ``per_instance_stats.json``, as ``helm-run`` writes
them; ``tools.bench.helm_format``) with a schema naming a run group per scenario. HELM's
``helm-summarize --suite bench -o benchmark_output --schema-path schema_bench.yaml`` then runs in
its own interpreter (crfm-helm 0.5.16 in a venv of its own, never holistic's), ``--repeat``
times, each in a fresh process: its wall time and the peak resident memory of its process
tree, sampled from ``/proc`` as for holistic's.

HELM's default flow is measured: besides the leaderboards (``groups/``, ``runs.json``,
``schema.json`` ...) it writes every run's display JSON (``instances.json``,
``display_predictions.json``, ``display_requests.json``: what its instance browser reads) on
every call (``--skip-completed-run-display-json`` skips a run whose three files exist).
That is what holistic's summary and site with its instance browser do, so the default flow
is the comparable one.

holistic's time for the same suite is given (``--holistic-seconds``) or measured here
(``--holistic``: holistic's ``helm-summarize`` on the same suite, each time in a fresh
process, as ``tools.bench.summarize`` runs it, before HELM's folders are written); the ratio
holistic ÷ HELM is printed with its target (≤ 0.25). HELM's folders and display JSON take
several times the room of holistic's suite and site, so without ``--work`` (which keeps
everything, and re-uses what is complete) holistic's are removed before HELM runs;
``--compact`` writes HELM's JSON without whitespace (the same structure, about 30% less).

    python -m tools.bench.helm_summarize --holistic --compact                  # 5,000 x 1,000
    python -m tools.bench.helm_summarize --runs 50 --instances 100 --holistic  # a quick check
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tools.bench.docs import add_docs_option, figures, write_results
from tools.bench.helm_format import HELM_INPUTS, convert_suite, folder_bytes, write_schema
from tools.bench.summarize import _watch_tree, ready_suite
from tools.bench.summarize import summarize as holistic_summarize
from tools.peers import HELM, PEER, add_common_args, install_helm, peer_env

TARGET_RATIO = 0.25
"""holistic's summary and site in at most a quarter of HELM's ``helm-summarize`` time."""

SUITE = "bench"
PARENT_GROUP = "synthetic_suite"
TIMED = PEER / "helm_summarize_timed.py"
FORMAT_CHECK = PEER / "helm_format_check.py"
SCHEMA = "schema_bench.yaml"
DONE = "helm_size.json"
"""Written last into a converted HELM output: its ``[runs, instances]``, so a complete one can be re-used."""


def holistic_suite(out: Path, runs: int, instances: int) -> tuple[Path, float]:
    """holistic's synthetic suite in ``out`` (re-used when complete at this size), its runs' browser
    bundles written as helm-run leaves them (holistic's summarize assembles them); seconds taken."""
    t0 = time.perf_counter()
    suite, _ = ready_suite(out, runs, instances)
    return suite, time.perf_counter() - t0


def _size(args: argparse.Namespace) -> list[int | bool]:
    return [args.runs, args.instances, args.compact]


def helm_output_ready(output: Path, args: argparse.Namespace) -> bool:
    """Whether ``output`` holds HELM's folders and schema, complete, for a suite of this size and format."""
    try:
        return bool(json.loads((output / DONE).read_text(encoding="utf-8")) == _size(args))
    except (OSError, ValueError):
        return False


def prepare(args: argparse.Namespace, out: Path) -> tuple[Path, dict[str, float], tuple[float | None, list[float]]]:
    """HELM's folders and schema under ``out/benchmark_output``, re-used when complete, and
    holistic's time (given, or measured on its suite first); the seconds taken to write
    holistic's suite and to convert it. Without ``--work``, holistic's suite (its summary and
    site included) is removed before HELM runs, to leave room for HELM's display JSON."""
    output = out / "benchmark_output"
    ready = helm_output_ready(output, args)
    timed = args.holistic and not args.generate_only
    took = {"generate": 0.0, "convert": 0.0}
    suite = None
    if timed or not ready:
        suite, took["generate"] = holistic_suite(out, args.runs, args.instances)
        print(f"bench_helm_summarize: holistic's suite ready in {took['generate']:.1f} s", flush=True)
    ours = holistic_seconds(args, out) if timed or args.holistic_seconds is not None else (None, [])
    if suite is not None and not ready:
        t0 = time.perf_counter()
        shutil.rmtree(output, ignore_errors=True)
        converted = convert_suite(suite, output, SUITE, args.jobs, None if args.compact else 2)
        write_schema(output / SCHEMA, converted, PARENT_GROUP)
        (output / DONE).write_text(json.dumps(_size(args)), encoding="utf-8")
        took["convert"] = time.perf_counter() - t0
    if suite is not None and not args.work:
        shutil.rmtree(suite)
    return output, took, ours


def helm_command(python: Path, output: Path, schema: Path, threads: int | None) -> list[str]:
    """HELM's ``helm-summarize`` in its default flow (display JSON included), through the timing program."""
    cmd = [str(python), str(TIMED), "--suite", SUITE, "-o", str(output), "--schema-path", str(schema)]
    return cmd + (["--num-threads", str(threads)] if threads else [])


def check_format(python: Path, release: Path) -> int:
    """HELM's own classes read the first and the last run folder back unchanged (``FORMAT_CHECK``);
    returns how many folders were checked, or fails with the differences."""
    folders = sorted(d for d in release.iterdir() if (d / "run_spec.json").is_file())
    picked = list(dict.fromkeys([folders[0], folders[-1]]))
    proc = subprocess.run(
        [str(python), str(FORMAT_CHECK), *map(str, picked)], env=peer_env(), capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"bench_helm_summarize: not in HELM's format:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return len(picked)


def run_helm(cmd: list[str], cwd: Path, log: Path) -> dict[str, Any]:
    """One ``helm-summarize`` in a fresh process: its own timing line, wall time, peak of its tree."""
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=peer_env(), stdout=out, stderr=subprocess.STDOUT, text=True)
        tree_peak = [0]
        watcher = threading.Thread(target=_watch_tree, args=(proc, tree_peak), daemon=True)
        watcher.start()
        proc.wait()
        watcher.join()
    wall = time.perf_counter() - start
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    if proc.returncode != 0 or not lines or not lines[-1].startswith("{"):
        tail = "\n".join(lines[-30:])
        raise SystemExit(f"bench_helm_summarize: HELM's helm-summarize failed (exit {proc.returncode}):\n{tail}")
    return {**json.loads(lines[-1]), "wall_seconds": wall, "tree_peak_rss_mb": tree_peak[0] / 1024}


def check_helm_output(output: Path, runs: int) -> dict[str, int]:
    """What HELM wrote: its leaderboard tables and the runs that got display JSON; fails if missing."""
    release = output / "runs" / SUITE
    tables = sorted((release / "groups" / "json").glob("*.json"))
    if not (release / "groups" / f"{PARENT_GROUP}.json").is_file() or not tables:
        raise SystemExit(f"bench_helm_summarize: HELM wrote no leaderboard under {release / 'groups'}")
    displayed = sum(1 for d in release.iterdir() if (d / "display_predictions.json").is_file())
    if displayed != runs:
        raise SystemExit(f"bench_helm_summarize: display JSON for {displayed} of {runs} runs")
    return {"leaderboard_tables": len(tables), "runs_with_display_json": displayed}


def holistic_seconds(args: argparse.Namespace, out: Path) -> tuple[float | None, list[float]]:
    """holistic's summary-and-site seconds: given, measured here (median), or None."""
    if args.holistic_seconds is not None:
        return args.holistic_seconds, [args.holistic_seconds]
    if not args.holistic:
        return None, []
    results = holistic_summarize(out, args.repeat)
    secs = [r["seconds"] for r in results]
    return statistics.median(secs), secs


def measure(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    output, took, (ours, ours_all) = prepare(args, out)
    release = output / "runs" / SUITE
    runs = sum(1 for d in release.iterdir() if (d / "run_spec.json").is_file())
    input_bytes = folder_bytes(release, HELM_INPUTS)
    how = f"written in {took['convert']:.1f} s" if took["convert"] else "re-used"
    print(f"bench_helm_summarize: HELM's run folders {how} ({input_bytes / 1e6:.0f} MB)", flush=True)
    report: dict[str, Any] = {
        "runs": runs,
        "instances_per_run": args.instances,
        "helm": HELM,
        "compact_json": args.compact,
        "holistic_suite_seconds": round(took["generate"], 1),
        "helm_folders_seconds": round(took["convert"], 1),
        "helm_folders_mb": round(input_bytes / 1e6),
    }
    if args.generate_only:
        return report
    python = Path(args.helm_python) if args.helm_python else install_helm(Path(args.cache) / "peers" / "bench")
    report["format_checked_runs"] = check_format(python, release)
    cmd = helm_command(python, output, output / SCHEMA, args.threads)
    results = [run_helm(cmd, out, out / f"helm-summarize-{k}.log") for k in range(args.repeat)]
    report.update(check_helm_output(output, runs))
    report["helm_output_mb"] = round((folder_bytes(release) - input_bytes) / 1e6)
    helm = statistics.median(r["seconds"] for r in results)
    report.update(
        {
            "helm_seconds_median": round(helm, 2),
            "helm_seconds_all": [round(r["seconds"], 2) for r in results],
            "helm_wall_seconds_all": [round(r["wall_seconds"], 2) for r in results],
            "helm_peak_rss_mb_max": round(max(r["peak_rss_mb"] for r in results)),
            "helm_tree_peak_rss_mb_max": round(max(r["tree_peak_rss_mb"] for r in results)),
        }
    )
    if ours is not None:
        ratio = ours / helm
        report.update(
            {
                "holistic_seconds": round(ours, 2),
                "holistic_seconds_all": [round(s, 2) for s in ours_all],
                "holistic_given": args.holistic_seconds is not None,
                "ratio_holistic_to_helm": round(ratio, 3),
                "target_ratio": TARGET_RATIO,
                "met": ratio <= TARGET_RATIO,
            }
        )
    return report


def print_report(r: dict[str, Any]) -> None:
    print(
        f"{r['runs']} runs x {r['instances_per_run']} instances; HELM's folders {r['helm_folders_mb']} MB "
        f"(written in {r['helm_folders_seconds']} s, 0 when re-used)"
    )
    if "helm_seconds_median" not in r:
        return
    print(
        f"HELM helm-summarize (default flow, display JSON included): {r['helm_seconds_median']:.1f} s median of "
        f"{r['helm_seconds_all']}; peak {r['helm_tree_peak_rss_mb_max']} MB; "
        f"{r['leaderboard_tables']} leaderboard tables, display JSON for {r['runs_with_display_json']} runs "
        f"({r['helm_output_mb']} MB)"
    )
    if "ratio_holistic_to_helm" in r:
        verdict = "met" if r["met"] else "MISSED"
        given = " (given)" if r["holistic_given"] else ""
        print(
            f"holistic summary and site: {r['holistic_seconds']:.1f} s{given}; holistic / HELM = "
            f"{r['ratio_holistic_to_helm']:.3f} (target <= {TARGET_RATIO}: {verdict})"
        )


def main(argv: list[str] | None = None) -> int:
    raw = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(prog="python -m tools.bench.helm_summarize", description=__doc__, formatter_class=raw)
    ap.add_argument("--runs", type=int, default=5000, help="runs in the suite (default 5,000)")
    ap.add_argument("--instances", type=int, default=1000, help="instances per run (default 1,000)")
    ap.add_argument(
        "--repeat", type=int, default=1, help="helm-summarize runs (each tool), each in a fresh process (1)"
    )
    ap.add_argument("--helm-python", help="HELM's interpreter (default: installed once under <cache>/peers/bench/helm)")
    ap.add_argument("--threads", type=int, help="helm-summarize --num-threads (default: HELM's own, 8)")
    ap.add_argument("--jobs", type=int, help="processes converting runs into HELM's folders (default: one per core)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--holistic", action="store_true", help="also time holistic's helm-summarize on the suite")
    group.add_argument("--holistic-seconds", type=float, help="holistic's time for this suite, measured elsewhere")
    ap.add_argument(
        "--compact",
        action="store_true",
        help="write HELM's input JSON without whitespace (same structure; helm-run indents it by 2): less disk",
    )
    ap.add_argument("--generate-only", action="store_true", help="write both suites into --work and stop (no timing)")
    add_common_args(ap)
    add_docs_option(ap)
    args = ap.parse_args(argv)
    if args.runs < 1 or args.instances < 1 or args.repeat < 1:
        ap.error("--runs, --instances and --repeat must be at least 1")
    if args.holistic_seconds is not None and args.holistic_seconds <= 0:
        ap.error("--holistic-seconds must be positive")
    if args.generate_only and not args.work:
        ap.error("--generate-only needs --work, the folder to keep the suites in")
    with tempfile.TemporaryDirectory(prefix="bench_helm_summarize-") as tmp:
        report = measure(args, Path(args.work or tmp).resolve())
    print_report(report)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    if args.write_docs and "helm_seconds_median" in report:
        print(f"wrote {write_results('helm_summarize', figures(report), page='summarize')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
