"""Benchmark: the static site for one run of 100,000 instances.

Reports the time to render the site (summary + pages + instance browser data),
the site's size per 10,000 instances, and the time until the instance browser's
first page is on screen in headless Chromium (opened from file://).

    python -m tools.bench.site [--instances 100000] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tools.bench.docs import add_docs_option, figures, write_results


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m tools.bench.site", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--instances", type=int, default=100_000)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    add_docs_option(ap)
    args = ap.parse_args()
    from holistic.site import render_site
    from holistic.summarize import summarize_suite, write_summary
    from tests.support.fake_suite import FakeRun, write_fake_suite

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        suite_dir = write_fake_suite(
            Path(tmp),
            "big",
            [FakeRun("big_scenario", "model/a", skill=0.6, num_instances=args.instances, with_requests=True)],
        )
        generate = time.perf_counter() - t0
        t0 = time.perf_counter()
        summary = summarize_suite(suite_dir)
        write_summary(summary, suite_dir / "summary")
        index = render_site(suite_dir, summary)
        render = time.perf_counter() - t0
        site_dir = index.parent
        data_dir = site_dir / "data"
        size = _size(site_dir)
        result = {
            "instances": args.instances,
            "generate_seconds": round(generate, 1),
            "render_seconds": round(render, 1),
            "site_mb": round(size / 1e6, 1),
            "site_mb_per_10k_instances": round(size / 1e6 / (args.instances / 10_000), 2),
            "instance_data_files": sum(1 for _ in data_dir.rglob("*.js")),
        }
        browse = next((site_dir / "runs" / "browse").glob("*.html"))
        try:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=args.chromium,
                    args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                page = browser.new_page()
                t0 = time.perf_counter()
                page.goto(browse.as_uri())
                page.wait_for_selector("article.record")
                result["browser_first_page_seconds"] = round(time.perf_counter() - t0, 2)
                t0 = time.perf_counter()
                page.select_option("#f-correct", "wrong")
                page.wait_for_function("document.getElementById('browser-status').textContent.includes('match')")
                result["filter_seconds"] = round(time.perf_counter() - t0, 2)
                browser.close()
        except Exception as exc:  # the browser is optional for the size/render numbers
            result["browser_error"] = str(exc)
    print(json.dumps(result, indent=1))
    if args.write_docs:
        print(f"wrote {write_results('site', figures(result))}")


if __name__ == "__main__":
    main()
