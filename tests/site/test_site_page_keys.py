"""A page's key: the same for the same context, another for any change in what the page shows, and
none for a context holding anything but plain data and dataclasses (such a page is always rendered)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from holistic.results.output_cache import KEY_FILE_ENV, OutputCache
from holistic.site.page_reuse import PageReuse
from holistic.site.writer import templates_dir


@dataclass(frozen=True)
class _Run:
    run_id: str
    scores: tuple[float, ...]


@pytest.fixture
def reuse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PageReuse:
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "secret" / "key"))
    cache = OutputCache.beside(tmp_path)
    assert cache is not None
    return PageReuse(cache, tmp_path / "old", tmp_path / "new", templates_dir())


def _key(reuse: PageReuse, **context: object) -> str | None:
    return reuse.key("run.html", "runs/r.html", "Run: r", {"suite": "s"}, dict(context))


def test_the_same_context_gives_the_same_key_and_any_change_another(reuse: PageReuse) -> None:
    base = {"run": _Run("r", (0.5, 0.25)), "rows": [{"metric": "exact_match", "mean": 0.5}], "n": 3}
    first = _key(reuse, **base)
    assert first is not None and first == _key(reuse, **base)
    changed = [
        {**base, "run": _Run("r", (0.5, 0.26))},  # a field of a dataclass
        {**base, "rows": [{"metric": "exact_match", "mean": 0.5000001}]},  # a nested number
        {**base, "rows": [{"metric": "f1", "mean": 0.5}]},  # a nested string
        {**base, "n": 4},
        {**base, "extra": None},
    ]
    keys = {_key(reuse, **c) for c in changed}
    assert None not in keys and first not in keys and len(keys) == len(changed)
    assert reuse.key("run.html", "runs/q.html", "Run: r", {"suite": "s"}, base) != first  # another path
    assert reuse.key("browser.html", "runs/r.html", "Run: r", {"suite": "s"}, base) != first  # template


def test_a_numpy_number_is_keyed_by_its_value(reuse: PageReuse) -> None:
    key = _key(reuse, mean=np.float64(0.5))
    assert key is not None and key == _key(reuse, mean=np.float64(0.5)) != _key(reuse, mean=np.float64(0.25))


@pytest.mark.parametrize("value", [Path("x"), object(), np.bool_(True), lambda: 1, _Run])
def test_a_context_with_anything_else_has_no_key(reuse: PageReuse, value: object) -> None:
    assert _key(reuse, value=value) is None
    assert _key(reuse, nested=[{"deep": value}]) is None
