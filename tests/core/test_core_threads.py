"""Per-item work spread over threads: the results of a plain loop, in its order, its errors raised."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from holistic.core import threads
from holistic.core.threads import thread_map
from holistic.summarize.replicates import GroupReplicates


def test_results_come_back_in_the_items_order_from_several_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "cpus", lambda: 2)
    seen: set[int] = set()

    def slow_first(k: int) -> int:
        seen.add(threading.get_ident())
        time.sleep(0.002 if k % 7 == 0 else 0)  # early items finish last
        return k * k

    items = list(range(200))
    assert thread_map(slow_first, items) == [k * k for k in items]
    assert len(seen) == 2


def test_a_few_items_or_one_cpu_stay_in_this_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    here = threading.get_ident()
    assert thread_map(lambda k: threading.get_ident(), list(range(10))) == [here] * 10
    monkeypatch.setattr(threads, "cpus", lambda: 1)
    assert set(thread_map(lambda k: threading.get_ident(), list(range(500)))) == {here}


def test_an_error_of_one_item_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "cpus", lambda: 2)

    def fails_at_100(k: int) -> int:
        if k == 100:
            raise ValueError("item 100")
        return k

    with pytest.raises(ValueError, match="item 100"):
        thread_map(fails_at_100, list(range(300)))


def test_replicates_drawn_in_threads_are_those_drawn_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    per_run = {(f"run{k}", "exact_match", "test"): rng.random(50) for k in range(300)}
    items = [*per_run, ("no_values", "exact_match", "test")]

    def drawn(cpu_count: int) -> dict[tuple[str, str, str], tuple[bool, np.ndarray | None]]:
        monkeypatch.setattr(threads, "cpus", lambda: cpu_count)
        group = GroupReplicates(None, "accuracy", None, seed=3, num_bootstrap=40)
        group.draw(None, items, per_run)  # type: ignore[arg-type]  # no cache: the reader is never read
        return group.replicates

    one, two = drawn(1), drawn(2)
    assert list(one) == list(two) == items
    for key in items:
        assert one[key][0] == two[key][0] == (key in per_run)
        a, b = one[key][1], two[key][1]
        assert (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
