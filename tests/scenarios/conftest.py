"""Shared helpers for the scenario tests: a context factory (the data mirror is ``data_root``,
in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.core.interfaces import ScenarioContext


@pytest.fixture
def offline_ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioContext:
    """An offline context over an empty mirror in tmp_path (tests write files into it)."""
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    (tmp_path / "mirror").mkdir()
    return ScenarioContext(data_root=tmp_path / "mirror", cache_dir=tmp_path / "cache", offline=True)
