"""Per-item work of a suite's summary spread over threads, one per CPU this process may use.

For work that spends its time where Python lets go of the GIL (reading Parquet in Arrow, NumPy's
generators and reductions, hashing, file I/O): two cores then do it in about half the time.
Results come back in the order of the items, so whatever is added up from them is added in the
same order, to the same bits, as a plain loop would.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 64
"""Below this many items a plain loop: starting threads would cost more than they save."""
MAX_THREADS = 8


def cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def thread_map(fn: Callable[[T], R], items: Sequence[T], *, min_items: int = MIN_ITEMS) -> list[R]:
    """``[fn(item) for item in items]``, computed by a thread per CPU when there are enough items
    (an exception of ``fn`` is raised here, as the loop would raise it)."""
    workers = min(cpus(), MAX_THREADS)
    if len(items) < min_items or workers < 2:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items, chunksize=max(1, min(32, len(items) // (4 * workers)))))
