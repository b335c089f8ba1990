"""Benchmark: helm-summarize (summary and site) at HELM's scale, and the instance browser.

A synthetic suite in the real results format (``tests.support.fake_suite``) of
``--runs`` runs × ``--instances`` instances (default 5,000 × 1,000, about what HELM
Classic had: 500 scenarios × 10 models, each instance also in one perturbed variant)
is written once; then ``helm-summarize`` builds the summary and the site, ``--repeat``
times, each in a fresh process, so its wall time and peak resident memory are its own.
The suite is what ``helm-run`` leaves: each run's browser bundle is written (untimed) by
the same call ``helm-run`` makes when a run completes, so ``helm-summarize`` links them
(``--cold`` removes them before each summarize instead: every bundle is then built, the
path of a suite written before bundles existed). Each of these summaries starts without
``helm-summarize``'s output cache (``SUITE/.summarize-cache``, removed first): it is a suite's
first summary. Then one run is written again, as a rerun leaves it, and ``helm-summarize``
timed once more, ``--repeat`` times (a different run each time), with the cache the
summaries before it left. Last, headless Chromium (through Playwright, ``--chromium``) opens the instance
browser of ``--browse`` runs spread over the suite (the first, the last and ones in
between) from ``file://``, and the time until the first page of instances is on screen
is taken for each: the target is for *any* run, so the slowest one is reported.

Targets: summary and site ≤ 90 s and ≤ 3 GB peak; re-summarize after one run changed
≤ 10 s; the instance browser's first page ≤ 1 s for any run.

    python -m tools.bench.summarize                           # 5,000 x 1,000
    python -m tools.bench.summarize --runs 40 --instances 50  # a quick check
    python -m tools.bench.summarize --cold                    # every bundle built by helm-summarize
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.bench.docs import add_docs_option, figures, write_results
from tools.common import REPO

if TYPE_CHECKING:
    from tests.support.fake_suite import FakeRun

TARGET_SECONDS = 90.0
TARGET_RESUMMARIZE_SECONDS = 10.0
TARGET_PEAK_MB = 3 * 1024
TARGET_BROWSER_SECONDS = 1.0
MODELS = 10


def fake_runs(runs: int, instances: int) -> list[FakeRun]:
    """The suite's runs: ``runs // 10`` scenarios x 10 models."""
    from tests.support.fake_suite import FakeRun

    models = [f"model/{i:02d}" for i in range(min(MODELS, runs))]
    scenarios = [f"scenario_{j:04d}" for j in range(max(1, runs // len(models)))]
    return [
        FakeRun(sc, m, skill=0.3 + 0.05 * i, num_instances=instances, perturbations=("typos",), with_requests=True)
        for i, m in enumerate(models)
        for sc in scenarios
    ]


def write_suite(out: Path, runs: int, instances: int) -> Path:
    from tests.support.fake_suite import write_fake_suite

    return write_fake_suite(out, "bench", fake_runs(runs, instances))


def write_bundles(suite: Path) -> int:
    """Each run's browser bundle, as ``helm-run`` writes it when the run completes (the same call);
    runs whose bundle is current are left alone. Returns how many were written."""
    from holistic.results import SuiteReader
    from holistic.site.bundle import bundle_is_current, write_bundle

    written = 0
    for reader in SuiteReader(suite).runs:
        if not bundle_is_current(reader):
            write_bundle(reader)
            written += 1
    return written


def remove_bundles(suite: Path) -> None:
    """Every run's bundle removed: ``helm-summarize`` then builds them all (the path without bundles)."""
    from holistic.results.layout import BROWSER_DIR, RUNS_DIR

    for run in (suite / RUNS_DIR).iterdir():
        shutil.rmtree(run / BROWSER_DIR, ignore_errors=True)


def remove_cache(suite: Path) -> None:
    """``helm-summarize``'s output cache removed: the next summary is the suite's first."""
    from holistic.results.output_cache import CACHE_FOLDER

    shutil.rmtree(suite / CACHE_FOLDER, ignore_errors=True)


def first_summary(suite: Path, cold: bool) -> Callable[[int], None]:
    """What is undone before each timed first summary: the output cache, and with ``cold`` the bundles."""

    def before(_: int) -> None:
        remove_cache(suite)
        if cold:
            remove_bundles(suite)

    return before


def rerun_one(out: Path, runs: int, instances: int, k: int) -> None:
    """Run ``k`` of the suite written again with new results, as a rerun by ``helm-run`` leaves it
    (its bundle included, untimed)."""
    from holistic.results import SuiteReader
    from holistic.site.bundle import write_bundle
    from tests.support.fake_suite import rewrite_run

    every = fake_runs(runs, instances)
    run = every[k % len(every)]
    rewrite_run(out, "bench", run, seed=1000 + k)
    write_bundle(SuiteReader(out / "bench").run(run.run_id))


SIZE_FILE = "bench_size.json"
"""Written last into a generated suite: its ``[runs, instances]``, so a complete one can be re-used."""


def existing_suite(out: Path, runs: int, instances: int) -> Path | None:
    """The suite a previous ``--work`` run left complete in ``out`` at this size, else None."""
    size = out / "bench" / SIZE_FILE
    try:
        same = json.loads(size.read_text(encoding="utf-8")) == [runs, instances]
    except (OSError, ValueError):
        return None
    return out / "bench" if same else None


def ready_suite(out: Path, runs: int, instances: int, *, bundles: bool = True) -> tuple[Path, int]:
    """The synthetic suite in ``out``, re-used when complete at this size, else written; with
    ``bundles``, each run's browser bundle as ``helm-run`` leaves it. Returns the suite and how
    many bundles were written."""
    suite = existing_suite(out, runs, instances)
    if suite is None:
        suite = write_suite(out, runs, instances)
        (suite / SIZE_FILE).write_text(json.dumps([runs, instances]), encoding="utf-8")
    return suite, write_bundles(suite) if bundles else 0


def summarize(out: Path, repeat: int, before: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """``helm-summarize`` ``repeat`` times, each in a fresh process; ``before(i)`` runs untimed first."""
    results = []
    for i in range(repeat):
        if before is not None:
            before(i)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tools.bench.timed_cli", "summarize", "--suite", "bench", "--output-dir", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        tree_peak = [0]
        watcher = threading.Thread(target=_watch_tree, args=(proc, tree_peak), daemon=True)
        watcher.start()
        stdout, stderr = proc.communicate()
        watcher.join()
        lines = stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise SystemExit(f"bench_summarize: helm-summarize failed (exit {proc.returncode}):\n{stderr[-3000:]}")
        results.append({**json.loads(lines[-1]), "tree_peak_rss_mb": tree_peak[0] / 1024})
    return results


def _watch_tree(proc: subprocess.Popen[str], peak: list[int]) -> None:
    """The largest sum of resident memory (KiB) of ``proc`` and its descendants (the workers that
    build the instance browsers), sampled every 0.2 s from ``/proc`` until it ends."""
    while proc.poll() is None:
        peak[0] = max(peak[0], sum(_rss_kib(pid) for pid in _tree(proc.pid)))
        time.sleep(0.2)


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in task.read_text().split()]
    return out


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def browse_pages(site: Path, count: int) -> list[Path]:
    """The instance-browser pages of ``count`` runs spread over the suite (first and last included)."""
    pages = sorted((site / "runs" / "browse").glob("*.html"))
    if not pages:
        raise SystemExit(f"bench_summarize: no instance-browser pages under {site / 'runs' / 'browse'}")
    if count >= len(pages):
        return pages
    step = (len(pages) - 1) / max(count - 1, 1)
    return [pages[round(k * step)] for k in range(count)]


def first_page_seconds(pages: list[Path], chromium: str) -> dict[str, float]:
    """Seconds until each page's first instance records are on screen, in a fresh browser tab."""
    from playwright.sync_api import sync_playwright

    out: dict[str, float] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            for page_file in pages:
                page = browser.new_page()
                start = time.perf_counter()
                page.goto(page_file.as_uri())
                page.wait_for_selector("article.record")
                out[page_file.stem] = time.perf_counter() - start
                page.close()
        finally:
            browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.bench.summarize",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--runs", type=int, default=5000, help="runs in the suite (default 5,000)")
    ap.add_argument("--instances", type=int, default=1000, help="instances per run (default 1,000)")
    ap.add_argument("--repeat", type=int, default=3, help="helm-summarize runs, each in a fresh process (3)")
    ap.add_argument("--browse", type=int, default=5, help="runs whose instance browser is opened (5)")
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="the Chromium binary Playwright drives")
    ap.add_argument(
        "--work",
        help="folder for the suite, kept afterwards; a complete suite of the same size already there is re-used "
        "(default: a temporary folder, removed afterwards)",
    )
    ap.add_argument("--generate-only", action="store_true", help="write the suite into --work and stop (no timing)")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="remove every run's browser bundle before each helm-summarize, so it builds them all "
        "(the path without bundles, for reference); no re-summarize after a rerun",
    )
    ap.add_argument("--out", help="write the results as JSON here")
    add_docs_option(ap)
    args = ap.parse_args(argv)
    if args.runs < 1 or args.instances < 1:
        ap.error("--runs and --instances must be at least 1")
    if args.generate_only and not args.work:
        ap.error("--generate-only needs --work, the folder to keep the suite in")

    with tempfile.TemporaryDirectory(prefix="bench_summarize-") as tmp:
        out = Path(args.work or tmp).resolve()
        t0 = time.perf_counter()
        suite, bundles = ready_suite(out, args.runs, args.instances, bundles=not args.cold)
        generate = time.perf_counter() - t0
        runs = sum(1 for _ in (suite / "runs").iterdir())
        print(
            f"bench_summarize: {runs} runs x {args.instances} instances ready in {generate:.1f} s "
            f"({bundles} browser bundles written as helm-run writes them)",
            flush=True,
        )
        if args.generate_only:
            return 0
        results = summarize(out, args.repeat, first_summary(suite, args.cold))
        again = [] if args.cold else summarize(out, args.repeat, lambda i: rerun_one(out, args.runs, args.instances, i))
        timings = first_page_seconds(browse_pages(suite / "site", args.browse), args.chromium)
    report = {
        "runs": runs,
        "instances_per_run": args.instances,
        "bundles": "removed before each summarize" if args.cold else "written by helm-run",
        "generate_seconds": round(generate, 1),
        "summary_and_site_seconds_median": round(statistics.median(r["seconds"] for r in results), 2),
        "summary_and_site_seconds_all": [round(r["seconds"], 2) for r in results],
        "peak_rss_mb_max": round(max(r["peak_rss_mb"] for r in results)),
        "tree_peak_rss_mb_max": round(max(r["tree_peak_rss_mb"] for r in results)),
        "browser_first_page_seconds_max": round(max(timings.values()), 3) if timings else None,
        "browser_first_page_seconds": {k: round(v, 3) for k, v in timings.items()},
        "targets": {
            "seconds": TARGET_SECONDS,
            "peak_rss_mb": TARGET_PEAK_MB,
            "browser_seconds": TARGET_BROWSER_SECONDS,
            "resummarize_seconds": TARGET_RESUMMARIZE_SECONDS,
        },
    }
    if again:
        report["resummarize_one_rerun_seconds_median"] = round(statistics.median(r["seconds"] for r in again), 2)
        report["resummarize_one_rerun_seconds_all"] = [round(r["seconds"], 2) for r in again]
    print_report(report)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    if args.write_docs:
        print(f"wrote {write_results('summarize', figures(report))}")
    return 0


def print_report(r: dict[str, Any]) -> None:
    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    secs, peak, browse = r["summary_and_site_seconds_median"], r["peak_rss_mb_max"], r["browser_first_page_seconds_max"]
    print(
        f"{r['runs']} runs x {r['instances_per_run']} instances, browser bundles {r['bundles']} "
        f"(suite ready in {r['generate_seconds']} s)"
    )
    print(
        f"summary and site: {secs:.1f} s median of {r['summary_and_site_seconds_all']} "
        f"(target <= {TARGET_SECONDS:.0f} s: {verdict(secs <= TARGET_SECONDS)})"
    )
    tree = r["tree_peak_rss_mb_max"]
    print(
        f"peak memory: {tree} MB, helm-summarize and its workers together (target <= {TARGET_PEAK_MB} MB: "
        f"{verdict(tree <= TARGET_PEAK_MB)}); the main process alone {peak} MB"
    )
    if "resummarize_one_rerun_seconds_median" in r:
        again = r["resummarize_one_rerun_seconds_median"]
        print(
            f"re-summarize after one run was rerun: {again:.1f} s median of {r['resummarize_one_rerun_seconds_all']} "
            f"(target <= {TARGET_RESUMMARIZE_SECONDS:.0f} s: {verdict(again <= TARGET_RESUMMARIZE_SECONDS)})"
        )
    if browse is None:
        print("instance browser: not opened (--browse 0)")
        return
    print(
        f"instance browser, first page: {browse:.2f} s at most over {len(r['browser_first_page_seconds'])} runs "
        f"(target <= {TARGET_BROWSER_SECONDS:.0f} s for any run: {verdict(browse <= TARGET_BROWSER_SECONDS)})"
    )


if __name__ == "__main__":
    sys.exit(main())
