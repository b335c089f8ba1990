"""The markers that name a test's needs, and the data mirror: what tests/conftest.py promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.data import REPO, find_data_root

SAMPLE = """
import pytest

from tests.support.data import skip_without_data


@pytest.mark.needs_data
def test_missing_file():
    skip_without_data("nothing/here.csv")


def test_reads_the_mirror(data_root):
    assert data_root.is_dir()


@pytest.mark.needs_data
@pytest.mark.browser
def test_needs_a_browser_too():
    pytest.skip("no Chromium on this machine")


def test_skips_for_its_own_reason():
    pytest.skip("not on this platform")


@pytest.mark.real_model
def test_heavy():
    pass
"""


def _run(folder: Path, data_root: Path, *args: str) -> str:
    (folder / "conftest.py").write_text("from tests.conftest import *  # noqa: F403\n", encoding="utf-8")
    (folder / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    env = {**os.environ, "HOLISTIC_DATA_ROOT": str(data_root), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", "-W", "ignore", *args]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    return done.stdout


def test_a_needs_data_test_that_skips_fails_while_the_mirror_is_present(tmp_path: Path) -> None:
    (tmp_path / "mirror").mkdir()
    out = _run(tmp_path, tmp_path / "mirror")
    assert "1 failed, 2 passed, 2 skipped" in out, out
    assert "FAILED test_sample.py::test_missing_file" in out and "data mirror is present" in out, out


def test_without_the_mirror_the_tests_that_need_it_skip(tmp_path: Path) -> None:
    out = _run(tmp_path, tmp_path / "no-mirror")
    assert "1 passed, 4 skipped" in out, out


def test_not_slow_leaves_out_the_heavy_needs(tmp_path: Path) -> None:
    (tmp_path / "mirror").mkdir()
    out = _run(tmp_path, tmp_path / "mirror", "-m", "not slow", "-k", "heavy or reads")
    assert "1 passed, 4 deselected" in out, out


def test_the_mirror_is_found_beside_a_clone_at_any_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    clone = tmp_path / "somewhere" / "holistic"
    clone.mkdir(parents=True)
    assert find_data_root(clone) is None
    (tmp_path / "somewhere" / "shared" / "data").mkdir(parents=True)
    assert find_data_root(clone) == tmp_path / "somewhere" / "shared" / "data"
