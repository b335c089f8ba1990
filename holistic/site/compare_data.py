"""The compare-systems views' data in the site: from the output cache, else made from the runs'
predictions (:func:`holistic.site.compare.comparison_files`), in this process or a worker.

A comparison's data is a job of its own (:class:`CompareJob`, picklable). In a worker process it
reads its runs' predictions from their browser bundles (each file checked against its bundle's
manifest, :func:`holistic.site.bundle.compared_predictions`), so they never travel between
processes. A comparison with a run whose browser did not come from a bundle (a run folder that
cannot be written) is done in the summarizing process, from the predictions it holds for such
runs (the others' read from their bundles); without workers, from the predictions it holds for
every run. Either way the files are the same.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holistic.results import RunReader, SuiteReader
from holistic.results.output_cache import OutputCache, code_fingerprint, key_of
from holistic.site.browser import js_json
from holistic.site.bundle import compared_predictions, fingerprint
from holistic.site.compare import Comparison, comparison_files
from holistic.summarize.load import main_metric_of

COMPARE_CACHE = "compare_data"
"""The output cache's kind of the compare-systems views' data (their script files and count)."""
_COUNT = "count"


@dataclass(frozen=True)
class Stored:
    """How a comparison's data is had without its runs' predictions."""

    key: str | None
    """Its key in the output cache (``None``: not cacheable)."""
    found: dict[str, bytes] | None = None
    """Its files and count as the output cache holds them (read only when not ``taken``)."""
    taken: int | None = None
    """Its instance count, when its files were taken from the old site (already in the new one)."""

    @property
    def ready(self) -> bool:
        """Whether the data is had without the runs' predictions."""
        return self.found is not None or self.taken is not None


def stored_comparisons(
    suite: SuiteReader,
    compared: list[Comparison],
    max_field_chars: int,
    cache: OutputCache | None,
    take: Callable[[Comparison, str], int | None] | None = None,
) -> dict[str, Stored]:
    """Comparison id -> its key and its data as an earlier summarize wrote it: the data is made from
    the comparison and its runs' predictions alone, which their bundles' fingerprints decide.
    ``take(comparison, key)``, when given, puts the old site's data of the comparison, made from
    ``key``, into the new site and returns its count (``None``: not taken); the cache is then not read."""
    out: dict[str, Stored] = {}
    for c in compared:
        readers = [suite.run(r) for r in c.run_ids]
        prints = [fingerprint(r, main_metric_of(r.spec), max_field_chars) for r in readers]
        if cache is None or any(p is None for p in prints):
            out[c.id] = Stored(None)
            continue
        key = key_of("compare", _compare_code(), c.id, c.systems, c.run_ids, c.main_metric, prints)
        taken = take(c, key) if take is not None else None
        if taken is not None:
            cache.keep(COMPARE_CACHE, key)  # kept for a summarize that cannot take the old site's files
            out[c.id] = Stored(key, taken=taken)
            continue
        found = cache.get(COMPARE_CACHE, key)
        sound = found is not None and _COUNT in found and found[_COUNT].isdigit()
        out[c.id] = Stored(key, found if sound else None)
    return out


@functools.cache
def _compare_code() -> str:
    return code_fingerprint(comparison_files, js_json, fingerprint)


def compare_data(
    out_dir: Path,
    c: Comparison,
    predictions: Mapping[str, Mapping[str, dict[str, Any]]],
    stored: Stored,
    cache: OutputCache | None,
) -> int:
    """Write the comparison's data under ``out_dir`` (from the cache when it is there); its instance count."""
    key, found = stored.key, stored.found
    if found is not None:
        count, files = int(found[_COUNT]), {Path(n).name: data for n, data in found.items() if n != _COUNT}
    else:
        count, files = comparison_files(c, predictions)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (out_dir / name).write_bytes(data)
    if found is None and cache is not None and key is not None:
        cache.put(COMPARE_CACHE, key, {**files, _COUNT: str(count).encode("ascii")})
    return count


@dataclass(frozen=True)
class CompareJob:
    """One comparison's data to write (not found in the cache; picklable: it goes to worker processes)."""

    out_dir: Path
    """The site's ``data/compare/<id>`` folder."""
    comparison: Comparison
    runs: tuple[tuple[RunReader, str | None], ...]
    """The comparison's runs (each one's reader and main metric), in the order of its ``run_ids``."""
    max_field_chars: int
    key: str | None
    """Its key in the output cache (``None``: not cacheable)."""
    cache: OutputCache | None
    given: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """Run id -> its predictions, for the runs whose bundle is not to be read (the others' are)."""


def compare_into(job: CompareJob) -> int:
    """Write the job's comparison (and put it into the cache); its instance count. The runs' predictions
    are read one run after the other, and only this comparison's runs are held at once."""
    predictions = {
        run_id: job.given[run_id] if run_id in job.given else compared_predictions(reader, metric, job.max_field_chars)
        for run_id, (reader, metric) in zip(job.comparison.run_ids, job.runs, strict=True)
    }
    return compare_data(job.out_dir, job.comparison, predictions, Stored(job.key), job.cache)
