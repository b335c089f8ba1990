"""A re-summarize takes each compare-systems view's data from the old site, by hard link, when made from
the same runs' bundles and its files are still the ones written (its cache entry then not read); a
file edited since, or a comparison whose run changed, is written again, as a fresh summarize writes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holistic.results import SuiteReader
from holistic.results.output_cache import OutputCache
from holistic.site.bundle import write_bundle
from holistic.site.compare_data import COMPARE_CACHE
from tests.site.test_site_bundle import _fresh_site, _summarize, _tree, suite_with_bundles
from tests.support.calls import record_calls
from tests.support.fake_suite import FakeRun, rewrite_run

RUNS = [FakeRun(sc, f"model/{i}", skill=0.3 + 0.2 * i, num_instances=30) for sc in ("alpha", "beta") for i in range(2)]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return suite_with_bundles(tmp_path, RUNS)


def _data(site: Path) -> dict[str, int]:
    """Each compare-systems data file's inode, by its path in the site."""
    folder = site / "data" / "compare"
    return {str(p.relative_to(folder)): p.stat().st_ino for p in sorted(folder.rglob("*")) if p.is_file()}


def test_unchanged_comparisons_are_taken_from_the_old_site(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _summarize(suite)
    before = _data(site)
    assert len({name.split("/")[0] for name in before}) == 2  # one comparison per scenario
    rewrite_run(tmp_path / "out", "s", RUNS[0], seed=9)  # alpha's comparison changes, beta's does not
    write_bundle(SuiteReader(suite).run(RUNS[0].run_id))
    read = record_calls(monkeypatch, OutputCache, "get", lambda cache, kind, *_: kind)
    site = _summarize(suite)
    assert read.count(COMPARE_CACHE) == 1  # alpha's new key looked up; beta's taken, its entry not read
    now = _data(site)
    kept = {n.split("/")[0]: now[n] == before.get(n) for n in now}  # per comparison: its files' inodes kept?
    same = {n.split("/")[0] for n in now if now[n] == before.get(n)}
    assert sorted(kept.values()) == [False, True] and len(same) == 1  # beta's taken whole, alpha's written
    monkeypatch.undo()
    assert _tree(site) == _fresh_site(suite, tmp_path)


def test_a_compare_file_edited_in_the_old_site_is_written_again(suite: Path, tmp_path: Path) -> None:
    site = _summarize(suite)
    data = next(p for p in sorted((site / "data" / "compare").rglob("*.js")))
    before = data.stat()
    text = data.read_bytes()
    at = text.index(b'"', 20)
    with data.open("r+b") as fh:  # same size, same inode, modification time set back
        fh.seek(at + 1)
        fh.write(b"X" if text[at + 1 : at + 2] != b"X" else b"Y")
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    site = _summarize(suite)
    assert data.read_bytes() == text
    assert _tree(site) == _fresh_site(suite, tmp_path)
