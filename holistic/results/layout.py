"""Where everything of a suite lives on disk; the only module that spells results file names.

::

    <output>/<suite>/suite.json
    <output>/<suite>/.lock                                  held by the helm-run writing the suite
    <output>/<suite>/runs/<run_id>/run_spec.json
    <output>/<suite>/runs/<run_id>/{instances,requests,per_instance_stats,stats}.parquet
    <output>/<suite>/runs/<run_id>/artifacts.json
    <output>/<suite>/runs/<run_id>/_COMPLETE                manifest, written last (every request succeeded)
    <output>/<suite>/runs/<run_id>/_PARTIAL                 the same manifest when some requests failed
    <output>/<suite>/runs/<run_id>/browser/                 the run's instance browser, built once (written after
                                                            the manifest, not listed in it: derived from its files)
    <output>/<suite>/summary/                               helm-summarize
    <output>/<suite>/ratings/{ratings,per_instance_ratings}.parquet   imported human ratings
    <output>/<suite>/site/                                  the static site
    <output>/cache/requests.sqlite                          the request cache (default place)
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from holistic.core.errors import StoreError

SUITE_FILE = "suite.json"
RUNS_DIR = "runs"
RUN_SPEC_FILE = "run_spec.json"
ARTIFACTS_FILE = "artifacts.json"
BROWSER_DIR = "browser"
"""A run's browser bundle (:mod:`holistic.site.bundle`): derived from the run's files, rebuilt when stale."""
COMPLETE_MARKER = "_COMPLETE"
"""The manifest of a run whose every request succeeded: the run is skipped on a rerun."""
PARTIAL_MARKER = "_PARTIAL"
"""The manifest of a run written with failed requests: readable, but redone on a rerun."""
LOCK_FILE = ".lock"
SUMMARY_DIR = "summary"
SUMMARY_FILE = "summary.json"
"""``helm-summarize``'s whole summary, under :data:`SUMMARY_DIR`."""
CELLS_FILE = "cells.parquet"
"""One row per (run, metric) cell of the summary tables, under :data:`SUMMARY_DIR`."""
WIN_RATES_FILE = "win_rates.parquet"
"""Win rates per leaderboard and model, under :data:`SUMMARY_DIR`."""
RATINGS_DIR = "ratings"
RATINGS_FILE = "ratings.parquet"
"""Every imported rating: one row per item, rater and question."""
PER_INSTANCE_RATINGS_FILE = "per_instance_ratings.parquet"
"""Imported ratings as per-instance values: the mean over raters and completions."""
SITE_DIR = "site"
CACHE_DIR = "cache"
CACHE_FILE = "requests.sqlite"

RESERVED_SUITE_NAMES = frozenset({CACHE_DIR})
"""Folder names under the output folder that are not suites."""

SUITE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*\Z"
"""What a suite name may be (also in ``schemas/runspec.schema.json``): a plain, visible folder name."""
SUITE_NAME_MAX = 128

_SUITE_RE = re.compile(SUITE_NAME_PATTERN)


def table_file(table: str) -> str:
    """``stats`` -> ``stats.parquet``."""
    return f"{table}.parquet"


def suite_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a suite name (``None`` when it can)."""
    if not isinstance(name, str) or not name:
        return "a suite name must be a non-empty string"
    if len(name.encode("utf-8")) > SUITE_NAME_MAX:
        return f"a suite name must be at most {SUITE_NAME_MAX} bytes (got {len(name.encode('utf-8'))})"
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        return "a suite name must not contain control or formatting characters (newlines, tabs, direction marks)"
    if not _SUITE_RE.match(name):
        return "a suite name is a plain folder name: letters, digits, '_', '-' and '.', starting with a letter or digit"
    if name in RESERVED_SUITE_NAMES:
        return f"{name!r} is reserved (the request cache lives in OUTPUT_DIR/{CACHE_DIR})"
    return None


def check_suite_name(name: object, *, where: str = "suite") -> str:
    """``name`` if it is a valid suite name, else :class:`StoreError` (exit 2) naming ``where``."""
    problem = suite_name_problem(name)
    if problem is not None:
        raise StoreError(f"{where}: invalid suite name {name!r}: {problem}")
    assert isinstance(name, str)
    return name


def suite_dir(output_dir: Path, suite: str) -> Path:
    """``<output>/<suite>`` for a validated suite name (never outside ``output_dir``)."""
    return Path(output_dir) / check_suite_name(suite)


def default_cache_path(output_dir: Path) -> Path:
    return Path(output_dir) / CACHE_DIR / CACHE_FILE
