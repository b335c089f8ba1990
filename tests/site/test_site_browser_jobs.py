"""The instance browsers built in worker processes (``helm-summarize --jobs``) are the same files,
byte for byte, as built in one process; and the number of processes chosen by default."""

from __future__ import annotations

from pathlib import Path

from holistic.site import render_site
from holistic.site.run_pages import RUNS_PER_BROWSER_JOB, browser_jobs
from holistic.summarize import summarize_suite
from tests.support.fake_suite import FakeRun, write_fake_suite


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_worker_processes_write_the_same_site(tmp_path: Path) -> None:
    runs = [
        FakeRun(
            f"scenario_{j}",
            f"model/{i}",
            skill=0.3 + 0.1 * i,
            num_instances=30,
            perturbations=("typos",),
            with_requests=True,
        )
        for i in range(2)
        for j in range(5)
    ]
    sites = {}
    for jobs in (1, 3):
        suite_dir = write_fake_suite(tmp_path / f"jobs{jobs}", "s", runs)
        summary = summarize_suite(suite_dir, num_bootstrap=10)
        sites[jobs] = _files(render_site(suite_dir, summary, jobs=jobs).parent)
    data = [f for f in sites[1] if f.startswith("data/") and not f.startswith("data/compare/")]
    assert sum(f.endswith("/index.js") for f in data) == len(runs)
    assert sum(f.endswith("/chunk_0000.js") for f in data) == len(runs)
    assert sites[3] == sites[1]


def test_default_jobs_follow_the_cpus_and_the_run_count() -> None:
    assert browser_jobs(0, 1) == 1
    assert browser_jobs(0, RUNS_PER_BROWSER_JOB - 1) == 1
    assert browser_jobs(0, 10_000) >= 1
    assert browser_jobs(2, 1) == 2  # an explicit count is taken as given
