"""Each sub-run's bootstrap replicates of a metric group, computed once per run's results.

A cell's interval resamples each of its sub-runs' per-instance values with a generator seeded by
the seed, the group, the run and the metric (:func:`sub_run_replicates`), so a sub-run's replicates
depend on that run's ``per_instance_stats.parquet`` alone. They are kept in the suite's output cache
(:mod:`holistic.results.output_cache`), keyed by that file's sha256 (from the run's verified
manifest), the group, the seed, the number of replicates and this code: a re-summarize reads and
resamples only the runs whose results changed. Runs of a median metric (whose cells pool the
per-instance values themselves) are always read.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from holistic.core.hashing import stable_seed
from holistic.core.threads import thread_map
from holistic.results import SuiteReader
from holistic.results.layout import table_file
from holistic.results.output_cache import OutputCache, code_fingerprint, key_of
from holistic.results.schemas import PER_INSTANCE_STATS_TABLE

SubRunKey = tuple[str, str, str]
"""(run_id, metric, split)."""
PerRun = dict[SubRunKey, np.ndarray]
"""(run_id, metric, split) -> per-instance values averaged over trials."""
Replicates = dict[SubRunKey, tuple[bool, np.ndarray | None]]
"""(run_id, metric, split) -> whether the sub-run has per-instance values, and its replicates (``None``:
none drawn, without values or without replicates)."""

REPLICATES_CACHE = "subrun_replicates"
"""The output cache's kind of a run's replicates in one metric group."""


def sub_run_replicates(
    values: np.ndarray | None, seed: int, group: str, run_id: str, metric: str, n: int
) -> np.ndarray | None:
    """``n`` bootstrap means of ``values`` (``None`` without values or without replicates)."""
    if values is None or len(values) == 0 or n <= 0:
        return None
    rng = np.random.default_rng(stable_seed(seed, group, run_id, metric))
    idx = rng.integers(0, len(values), size=(n, len(values)))
    return np.asarray(values[idx].mean(axis=1))


class GroupReplicates:
    """The sub-runs of one metric group: their replicates, from the cache or drawn now, and the
    per-instance values of the runs read (those the cache did not have, and every median metric's)."""

    def __init__(
        self, cache: OutputCache | None, group: str, perturbation: str | None, seed: int, num_bootstrap: int
    ) -> None:
        self.cache, self.group, self.perturbation = cache, group, perturbation
        self.seed, self.num_bootstrap = seed, num_bootstrap
        self.replicates: Replicates = {}

    def _key(self, reader: SuiteReader, run_id: str, wanted: list[tuple[str, str]]) -> str | None:
        sha = next(
            (f.sha256 for f in reader.run(run_id).manifest.files if f.name == table_file(PER_INSTANCE_STATS_TABLE)),
            None,
        )
        if sha is None:
            return None
        return key_of(
            "replicates", _code(), self.seed, self.group, self.perturbation, self.num_bootstrap, run_id, sha, wanted
        )

    def known(self, reader: SuiteReader, items: Iterable[tuple[str, str, str]], always_read: set[str]) -> set[str]:
        """Take the cached replicates of the sub-runs ``items`` (run id, metric, split) of runs not in
        ``always_read``; returns the runs still to read."""
        by_run: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for run_id, metric, split in items:
            by_run[run_id].append((metric, split))
        todo = set()
        for run_id, wanted in by_run.items():
            wanted = sorted(set(wanted))
            key = None if self.cache is None or run_id in always_read else self._key(reader, run_id, wanted)
            found = self.cache.get(REPLICATES_CACHE, key) if self.cache is not None and key is not None else None
            taken = _decode(found, run_id, wanted, self.num_bootstrap) if found is not None else None
            if taken is None:
                todo.add(run_id)
            else:
                self.replicates.update(taken)
        return todo

    def draw(self, reader: SuiteReader, items: Iterable[tuple[str, str, str]], per_run: PerRun) -> None:
        """Draw the replicates of the sub-runs ``items`` from the values read, and keep them in the cache."""
        by_run: dict[str, list[tuple[str, str]]] = defaultdict(list)
        todo = list(dict.fromkeys(item for item in items if item not in self.replicates))

        def draw_one(item: SubRunKey) -> np.ndarray | None:
            values = per_run.get(item)
            return sub_run_replicates(values, self.seed, self.group, item[0], item[1], self.num_bootstrap)

        # NumPy's generator and reductions let go of the GIL: the draws use every core (each sub-run
        # has its own seeded generator, so the replicates are the same whichever thread draws them)
        for item, reps in zip(todo, thread_map(draw_one, todo), strict=True):
            self.replicates[item] = (item in per_run, reps)
            by_run[item[0]].append((item[1], item[2]))
        for run_id, wanted in by_run.items():
            wanted = sorted(set(wanted))
            key = self._key(reader, run_id, wanted) if self.cache is not None else None
            if self.cache is not None and key is not None:
                files = {}
                for metric, split in wanted:
                    present, reps = self.replicates[(run_id, metric, split)]
                    if present:
                        files[f"{metric}\0{split}"] = b"" if reps is None else reps.astype("<f8").tobytes()
                self.cache.put(REPLICATES_CACHE, key, files)


def _decode(files: dict[str, bytes], run_id: str, wanted: list[tuple[str, str]], n: int) -> Replicates | None:
    """A cache entry's replicates (``None``: not the shape this code writes, so drawn again)."""
    out: Replicates = {}
    for metric, split in wanted:
        blob = files.get(f"{metric}\0{split}")
        if blob is None:
            out[(run_id, metric, split)] = (False, None)
        elif blob == b"" and n <= 0:
            out[(run_id, metric, split)] = (True, None)
        elif len(blob) == 8 * n and n > 0:
            out[(run_id, metric, split)] = (True, np.frombuffer(blob, dtype="<f8").astype(np.float64))
        else:
            return None
    return out if len(files) <= len(wanted) else None


@functools.cache
def _code() -> str:
    # the values: read by the summary's loader, averaged over trials by the leaderboard's code
    return code_fingerprint(
        sub_run_replicates, stable_seed, "holistic.summarize.load", "holistic.summarize.leaderboard"
    )
