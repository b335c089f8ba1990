"""Summarizing a suite and exchanging human ratings: :func:`summarize` (``helm-summarize``),
:func:`export_ratings` and :func:`import_ratings` (``helm-ratings``)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from holistic.core.yaml_limits import MAX_FILE_BYTES

if TYPE_CHECKING:
    from holistic.results.fs import Location
    from holistic.results.reader import SuiteReader
    from holistic.summarize.build import Summary
    from holistic.summarize.schema import SummarySchema


DEFAULT_MAX_FIELD_CHARS = 100_000
R = TypeVar("R")


@dataclass(frozen=True)
class SummarizeOptions:
    """How to summarize (``helm-summarize``'s options beyond the suite and where it is)."""

    schema: Path | None = None
    """Summary schema YAML (metric groups and run groups) replacing the built-in one (``--schema``)."""
    max_schema_bytes: int = MAX_FILE_BYTES
    """Largest schema file read (``--max-schema-bytes``)."""
    num_bootstrap: int = 200
    """Bootstrap replicates over instances for intervals and rank ranges (``--num-bootstrap``)."""
    seed: int = 0
    """Seed of the bootstrap (``--seed``)."""
    judge_threshold: float | None = None
    """Flag every judge whose agreement (Krippendorff's alpha) is below this (``--judge-threshold``)."""
    max_field_chars: int = DEFAULT_MAX_FIELD_CHARS
    """Characters of one text field shown in the site's instance browser (``--max-field-chars``)."""
    jobs: int = 0
    """Processes that build the runs' instance browsers and the compare-systems data (``--jobs``; 0: one per CPU, at most one per 8 runs).
    Other than 1, on Linux with a second CPU, a copy of this process (:mod:`holistic.core.beside`) writes the summary's files while
    this one renders the site."""
    cache: bool = True
    """Keep what this summarize computes per run, plot and comparison in the suite's output cache, and take
    from it what an earlier summarize computed from the same inputs (``--no-cache``: neither)."""


@dataclass(frozen=True)
class SummarizeResult:
    """What :func:`summarize` returns."""

    summary: Summary
    """The summary as data: runs, systems, columns, leaderboards and tables."""
    summary_dir: Path
    """The folder the summary tables were written to."""
    files: tuple[Path, ...]
    """Every file of the summary (Parquet, JSON, CSV, Markdown, LaTeX)."""
    site_index: Path | None
    """The site's ``index.html`` (``None`` with ``site=False``)."""
    seconds: float
    """Time the summary (not the site) took."""

    @property
    def unfinished(self) -> tuple[dict[str, Any], ...]:
        """The suite's runs that are not complete (pending, partial or failed), as ``suite.json`` lists them."""
        return tuple(self.summary.unfinished)

    @property
    def complete(self) -> bool:
        """Every run of the suite is complete (otherwise every page of the site says so)."""
        return not self.summary.unfinished


def open_suite(
    suite: str | os.PathLike[str] | Location, output_dir: str | os.PathLike[str] | None, local_dir: Path | None = None
) -> SuiteReader:
    """The suite ``suite``: a suite folder (path or URI), or with ``output_dir`` a suite name under it.

    A suite read from a URI has its summary and site written under ``local_dir`` (default ``./output``)."""
    from holistic.results.fs import UriPath, location
    from holistic.results.reader import SuiteReader

    if output_dir is not None:
        where = location(os.fspath(output_dir), where="--output-dir")
        if local_dir is None and isinstance(where, UriPath):
            local_dir = Path("output")
        return SuiteReader.open(where, str(suite), local_dir=local_dir)
    found = suite if isinstance(suite, UriPath) else location(os.fspath(suite))
    if local_dir is None and isinstance(found, UriPath):
        local_dir = Path("output")
    return SuiteReader(found, local_dir=local_dir)


def summarize(
    suite: str | os.PathLike[str] | Location,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    local_dir: str | os.PathLike[str] | None = None,
    site: bool = True,
    previous: str | os.PathLike[str] | None = None,
    options: SummarizeOptions | None = None,
) -> SummarizeResult:
    """Aggregate a suite's completed runs into tables and render its static site (``helm-summarize``).

    Every run's manifest is verified first. The summary and the site are each built in a temporary
    folder and replace the old ones only when complete.

    Args:
        suite: The suite's folder (a path, a URI, or :attr:`RunResult.suite_dir <holistic.api.RunResult.suite_dir>`);
            with ``output_dir``, the suite's name under it.
        output_dir: The folder (or URI) the suite named ``suite`` is in.
        local_dir: Write the summary and the site to ``<local_dir>/<suite>/`` (default: inside the suite
            folder; for a suite read from a URI, ``./output/<suite>``).
        site: Render the static site too.
        previous: A previous release's suite folder: the site links a comparison with it.
        options: Bootstrap, schema, judges' threshold and site options.

    Returns:
        The summary as data, the paths of its files and of the site's ``index.html``.

    Raises:
        holistic.core.errors.HolisticError: Not a suite, a damaged run (named), a bad schema, or an unwritable
            folder.
    """
    from holistic.core.beside import Beside
    from holistic.results.atomic import recover_folder
    from holistic.results.digests import DIGESTS_CACHE, KnownDigests
    from holistic.results.output_cache import OutputCache
    from holistic.summarize import summarize_suite, write_summary
    from holistic.summarize.replicates import REPLICATES_CACHE
    from holistic.summarize.stats_rows import STATS_CACHE

    options = options or SummarizeOptions()
    reader = open_suite(suite, output_dir, None if local_dir is None else Path(local_dir))
    recover_folder(reader.site_dir)  # a summarize killed mid-render or mid-swap (the summary's: when it is written)
    previous_dir = None if previous is None else Path(previous)
    if previous_dir is not None and site:
        from holistic.diff.align import resolve_suite_dir

        resolve_suite_dir(previous_dir, None)  # a typo fails now, before anything is written
    start = time.perf_counter()
    schema = _schema(options)
    cache = OutputCache.beside(reader.derived_dir) if options.cache else None
    known = None if cache is None else KnownDigests(cache)
    reader.known_digests = known  # before the runs are first read (and verified)
    summary = summarize_suite(
        reader, schema=schema, num_bootstrap=options.num_bootstrap, seed=options.seed,
        judge_threshold=options.judge_threshold, cache=cache,
    )  # fmt: skip
    summarized = time.perf_counter()
    index = None
    # The summary's files are written by a copy of this process while this one renders the site
    # (both are made from ``summary`` alone), unless one process was asked for or the site is not made.
    with Beside(_timed(write_summary, summary, reader.summary_dir), "summary", fork=site and _two(options)) as files:
        if site:
            from holistic.site import render_site
            from holistic.site.render import CACHE_KINDS

            index = render_site(
                reader,
                summary,
                previous=previous_dir,
                max_field_chars=options.max_field_chars,
                jobs=options.jobs,
                cache=cache,
            )
            if cache is not None:
                cache.prune(CACHE_KINDS)
        written, writing = files.result()
    seconds = summarized - start + writing
    if cache is not None and known is not None:
        known.save()
        cache.prune([REPLICATES_CACHE, DIGESTS_CACHE, STATS_CACHE])
    return SummarizeResult(
        summary=summary, summary_dir=reader.summary_dir, files=tuple(written), site_index=index, seconds=seconds
    )


def export_ratings(
    suite: str | os.PathLike[str] | Location,
    path: str | os.PathLike[str],
    *,
    output_dir: str | os.PathLike[str] | None = None,
) -> int:
    """Write one row per generation to rate (the suite's disinformation and judged runs) to ``path``
    (``.csv`` or ``.jsonl``) for raters to fill in (``helm-ratings export``).

    Args:
        suite: The suite's folder; with ``output_dir``, its name under it.
        path: The file to write; its extension chooses the format.
        output_dir: The folder (or URI) the suite named ``suite`` is in.

    Returns:
        The number of generations written.
    """
    from holistic.ratings.exchange import export_items

    return export_items(open_suite(suite, output_dir), Path(path))


@dataclass(frozen=True)
class RatingsImport:
    """What :func:`import_ratings` returns."""

    ratings: int
    """Ratings stored (one per item, rater and question)."""
    instances: int
    """Distinct instances rated."""
    folder: Location
    """Where they were stored, inside the suite (the summary reads them from there)."""


def import_ratings(
    suite: str | os.PathLike[str] | Location,
    paths: Sequence[str | os.PathLike[str]],
    *,
    output_dir: str | os.PathLike[str] | None = None,
) -> RatingsImport:
    """Check filled-in ratings files (``.csv`` or ``.jsonl``) against the suite and store them in it,
    replacing an earlier import (``helm-ratings import``); summarize afterwards to see them.

    Args:
        suite: The suite's local folder; with ``output_dir``, its name under it.
        paths: The raters' files, all of them together.
        output_dir: The folder the suite named ``suite`` is in.

    Returns:
        How many ratings of how many instances were stored, and where.

    Raises:
        holistic.ratings.exchange.RatingsError: A row that does not fit (the message names file and line).
    """
    from holistic.core.errors import StoreError
    from holistic.ratings.exchange import import_ratings as store_ratings
    from holistic.results.fs import UriPath
    from holistic.results.layout import RATINGS_DIR

    reader = open_suite(suite, output_dir)
    if isinstance(reader.suite_dir, UriPath):
        raise StoreError(f"importing ratings writes into the suite folder: give its local path, not {reader.suite_dir}")
    ratings, instances = store_ratings(reader, [Path(p) for p in paths])
    return RatingsImport(ratings=ratings, instances=instances, folder=reader.suite_dir / RATINGS_DIR)


def _timed(fn: Callable[..., R], *args: Any) -> Callable[[], tuple[R, float]]:
    """``fn(*args)`` as a call without arguments, returning its value and the seconds it took."""

    def call() -> tuple[R, float]:
        start = time.perf_counter()
        return fn(*args), time.perf_counter() - start

    return call


def _two(options: SummarizeOptions) -> bool:
    """Whether this summarize may use a second process (``--jobs`` other than 1, and a second CPU)."""
    from holistic.core.threads import cpus

    return options.jobs > 1 or (options.jobs == 0 and cpus() > 1)


def _schema(options: SummarizeOptions) -> SummarySchema:
    """The ``--schema`` file (HELM's ``schema_*.yaml``: its run groups, translated by
    :mod:`holistic.helm.schema`), else the built-in schema."""
    import tempfile

    import yaml

    from holistic.core.located_yaml import load_source
    from holistic.helm.schema import is_helm_schema, translate
    from holistic.summarize import load_schema
    from holistic.summarize.schema import BUILTIN_SCHEMA

    if options.schema is None:
        return load_schema(None)
    data = load_source(options.schema, str(options.schema), limit=options.max_schema_bytes).data
    if not is_helm_schema(data):
        return load_schema(options.schema, max_bytes=options.max_schema_bytes)
    builtin = yaml.safe_load(BUILTIN_SCHEMA.read_text(encoding="utf-8")) or {}
    with tempfile.TemporaryDirectory(prefix="holistic-helm-schema-") as folder:
        path = Path(folder) / "schema.yaml"
        path.write_text(yaml.safe_dump(translate(data, builtin), sort_keys=False), encoding="utf-8")
        return load_schema(path, max_bytes=max(options.max_schema_bytes, path.stat().st_size))
