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
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from holistic.core.hashing import stable_seed
from holistic.core.threads import thread_map
from holistic.results import SuiteReader
from holistic.results.layout import table_file
from holistic.results.output_cache import OutputCache, code_fingerprint, key_of, run_file_sha256
from holistic.results.schemas import PER_INSTANCE_STATS_TABLE

SubRunKey = tuple[str, str, str]
"""(run_id, metric, split)."""
PerRun = dict[SubRunKey, np.ndarray]
"""(run_id, metric, split) -> per-instance values averaged over trials."""
Replicates = dict[SubRunKey, tuple[bool, np.ndarray | None]]
"""(run_id, metric, split) -> whether the sub-run has per-instance values, and its replicates (``None``:
none drawn, without values or without replicates)."""

REPLICATES_CACHE = "subrun_replicates"
"""The output cache's kind of the runs' replicates in one metric group (one entry per group)."""


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
    per-instance values of the runs read (those the cache did not have, and every median metric's).

    The cache holds one entry per metric group, seed and number of replicates (a *pack*): every
    run's replicates, each under its ``per_instance_stats.parquet`` sha256 and the sub-runs asked
    for. A run is taken from it while both are unchanged; the pack is written again when a run
    was drawn (or left the suite)."""

    def __init__(
        self, cache: OutputCache | None, group: str, perturbation: str | None, seed: int, num_bootstrap: int
    ) -> None:
        self.cache, self.group, self.perturbation = cache, group, perturbation
        self.seed, self.num_bootstrap = seed, num_bootstrap
        self.replicates: Replicates = {}
        self.entry = key_of("replicates", _code(), seed, group, perturbation, num_bootstrap)
        self.pack: dict[str, _Packed] = {}
        """Run id -> what the pack holds of it, read from the cache and then updated."""
        self.found: dict[str, _Packed] = {}
        """The pack as the cache had it."""
        self.changed = False

    def known(self, reader: SuiteReader, items: Iterable[tuple[str, str, str]], always_read: set[str]) -> set[str]:
        """Take the cached replicates of the sub-runs ``items`` (run id, metric, split) of runs not in
        ``always_read``; returns the runs still to read."""
        by_run: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for run_id, metric, split in items:
            by_run[run_id].append((metric, split))
        found = _read_pack(self.cache, self.entry, self.num_bootstrap) if self.cache is not None else {}
        self.found = found
        todo = set()
        for run_id, wanted in by_run.items():
            wanted = sorted(set(wanted))
            packed = found.get(run_id) if run_id not in always_read else None
            if packed is None or packed.sha != _sha(reader, run_id) or packed.wanted != wanted:
                todo.add(run_id)
                continue
            self.pack[run_id] = packed
            for (metric, split), (present, reps) in zip(packed.wanted, packed.values, strict=True):
                self.replicates[(run_id, metric, split)] = (present, reps)
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
        if self.cache is None:  # nothing kept: the reader is not read
            return
        for run_id, wanted in by_run.items():
            sha = _sha(reader, run_id)
            if sha is None:
                continue
            wanted = sorted(set(wanted))
            self.pack[run_id] = _Packed(sha, wanted, [self.replicates[(run_id, m, s)] for m, s in wanted])
            was = self.found.get(run_id)  # a median metric's run, read again: the same replicates
            self.changed = self.changed or was is None or (was.sha, was.wanted) != (sha, wanted)
        if self.changed or set(self.pack) != set(self.found):  # a run drawn anew, or one gone
            _write_pack(self.cache, self.entry, self.pack)


@dataclass(frozen=True)
class _Packed:
    """One run in a pack: the sha256 of its per-instance values, its sub-runs (metric, split) and their replicates."""

    sha: str
    wanted: list[tuple[str, str]]
    values: list[tuple[bool, np.ndarray | None]]


_INDEX, _DATA = "index.json", "replicates.f8"


def _sha(reader: SuiteReader, run_id: str) -> str | None:
    return run_file_sha256(reader.run(run_id).manifest.files, table_file(PER_INSTANCE_STATS_TABLE))


def _read_pack(cache: OutputCache, entry: str, n: int) -> dict[str, _Packed]:
    """The pack's runs (``{}``: none, not authentic, or not the shape this code writes)."""
    found = cache.get(REPLICATES_CACHE, entry)
    if found is None or _INDEX not in found or _DATA not in found:
        return {}
    data = np.frombuffer(found[_DATA], dtype="<f8")
    out: dict[str, _Packed] = {}
    try:
        index = json.loads(found[_INDEX])
        for run_id, sha, subs in index:
            wanted: list[tuple[str, str]] = []
            values: list[tuple[bool, np.ndarray | None]] = []
            for metric, split, present, at in subs:
                wanted.append((str(metric), str(split)))
                if not present:
                    values.append((False, None))
                elif at < 0 or n <= 0:
                    values.append((True, None))
                elif at + n <= len(data):
                    values.append((True, data[at : at + n]))
                else:
                    return {}
            out[str(run_id)] = _Packed(str(sha), wanted, values)
    except (ValueError, TypeError, RecursionError):
        return {}
    return out


def _write_pack(cache: OutputCache, entry: str, pack: dict[str, _Packed]) -> None:
    index: list[Any] = []
    blobs: list[bytes] = []
    at = 0
    for run_id, packed in pack.items():
        subs = []
        for (metric, split), (present, reps) in zip(packed.wanted, packed.values, strict=True):
            if reps is None:
                subs.append([metric, split, present, -1])
                continue
            blobs.append(reps.astype("<f8").tobytes())
            subs.append([metric, split, present, at])
            at += len(reps)
        index.append([run_id, packed.sha, subs])
    cache.put(REPLICATES_CACHE, entry, {_INDEX: json.dumps(index).encode("utf-8"), _DATA: b"".join(blobs)})


@functools.cache
def _code() -> str:
    # the values: read by the summary's loader, averaged over trials (per_instance)
    return code_fingerprint(
        sub_run_replicates, stable_seed, "holistic.summarize.load", "holistic.summarize.per_instance"
    )
