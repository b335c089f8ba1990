"""A re-summarize links the bundle scripts the last one placed without reading them again, while
their files are the very ones recorded; a script changed since is read and checked (and its bundle
rebuilt); with nothing to build, no worker process is started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holistic.results import SuiteReader
from holistic.results.layout import BROWSER_DIR
from holistic.site import bundle, run_pages
from holistic.site.bundle import write_bundle
from tests.site.test_site_bundle import RUNS, _fresh_site, _summarize, _tree, suite_with_bundles
from tests.support.calls import record_calls
from tests.support.fake_suite import rewrite_run


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return suite_with_bundles(tmp_path, RUNS)


def test_a_resummarize_links_known_scripts_without_reading_them(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _summarize(suite)
    rewrite_run(tmp_path / "out", "s", RUNS[1], seed=3)
    write_bundle(SuiteReader(suite).run(RUNS[1].run_id))  # as helm-run does when the rerun completes
    checked = record_calls(monkeypatch, bundle, "_sound")
    site = _summarize(suite)
    assert sorted(checked) == ["chunk_0000.js", "chunk_0001.js", "index.js"]  # the rerun's scripts alone
    monkeypatch.undo()
    assert _tree(site) == _fresh_site(suite, tmp_path)
    for run in RUNS:
        linked = site / "data" / run.run_id / "index.js"
        assert linked.stat().st_ino == (suite / "runs" / run.run_id / BROWSER_DIR / "index.js").stat().st_ino


def test_a_script_changed_in_place_since_is_checked_not_trusted(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _summarize(suite)
    chunk = suite / "runs" / RUNS[0].run_id / BROWSER_DIR / "chunk_0000.js"
    before = chunk.stat()
    data = chunk.read_bytes()
    at = data.index(b'"', 40)
    with chunk.open("r+b") as fh:  # same size, same inode, modification time set back: only its change time tells
        fh.seek(at + 1)
        fh.write(b"X")
    os.utime(chunk, ns=(before.st_atime_ns, before.st_mtime_ns))
    checked = record_calls(monkeypatch, bundle, "_sound")
    site = _summarize(suite)
    assert "chunk_0000.js" in checked
    monkeypatch.undo()
    assert _tree(site) == _fresh_site(suite, tmp_path)
    assert chunk.read_bytes() == data  # the bundle was rebuilt


def test_no_worker_is_started_when_no_bundle_needs_building(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _summarize(suite)
    rewrite_run(tmp_path / "out", "s", RUNS[0], seed=5)
    write_bundle(SuiteReader(suite).run(RUNS[0].run_id))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(run_pages, "ProcessPoolExecutor", refuse)
    site = _summarize(suite, jobs=2)
    monkeypatch.undo()
    assert _tree(site) == _fresh_site(suite, tmp_path)
