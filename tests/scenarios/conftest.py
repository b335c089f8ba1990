"""Shared helpers for the scenario tests: the real-data mirror and a context factory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holistic.core.interfaces import ScenarioContext

REPO_ROOT = Path(__file__).resolve().parents[2]


def shared_data_root() -> Path | None:
    env = os.environ.get("HOLISTIC_DATA_ROOT")
    for candidate in ([Path(env)] if env else []) + [REPO_ROOT.parent / "shared" / "data"]:
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture
def real_root() -> Path:
    root = shared_data_root()
    if root is None:
        pytest.skip("real benchmark files not available (set HOLISTIC_DATA_ROOT or place them at ../shared/data)")
    return root


@pytest.fixture
def offline_ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioContext:
    """An offline context over an empty mirror in tmp_path (tests write files into it)."""
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    (tmp_path / "mirror").mkdir()
    return ScenarioContext(data_root=tmp_path / "mirror", cache_dir=tmp_path / "cache", offline=True)
