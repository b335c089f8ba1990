"""The suite's ``stats.parquet`` rows the summary reads, kept from one summarize to the next.

At 5,000 runs the summary opens 5,000 small Parquet files before anything else, about a
millisecond each. Only the columns the summary uses (:data:`STATS_COLUMNS`) are read, and the
rows read are kept in the suite's output cache (:mod:`holistic.results.output_cache`: one entry,
signed with the user's secret) with each run's ``stats.parquet`` sha256 from its verified
manifest. The next summarize takes a run's rows from there while that sha256 is unchanged, and
reads only the runs whose stats changed (or that are new). The table is the one reading every
file would give, row for row, in the same order.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from holistic.core.errors import StoreError
from holistic.results import RunReader, SuiteReader
from holistic.results.fs import read_parquet
from holistic.results.layout import table_file
from holistic.results.output_cache import OutputCache, key_of, run_file_sha256
from holistic.results.schemas import STATS_TABLE

STATS_COLUMNS = (
    "run_id",
    "metric",
    "split",
    "sub_split",
    "perturbation",
    "mean",
    "ci_low",
    "ci_high",
    "count",
    "higher_is_better",
    "category",
)
"""The columns of ``stats.parquet`` the summary reads (the leaderboards' and the targeted tables')."""

STATS_CACHE = "stats_rows"
"""The output cache's kind of the suite's stats rows (one entry, rewritten when a run's stats changed)."""
_ROWS, _INDEX = "rows.arrow", "index.json"
_Index = dict[str, list[object]]
"""Run id -> [its stats.parquet sha256, its first row, its number of rows] in the kept table."""


def stats_table(reader: SuiteReader, cache: OutputCache | None = None) -> pa.Table:
    """Every run's ``stats.parquet`` (:data:`STATS_COLUMNS` only), one run after the other in the
    suite's order; with ``cache``, the rows of runs whose stats are unchanged taken from it."""
    runs = [r for r in reader.runs if r.has_table(STATS_TABLE)]
    if not runs:
        return pa.table({})
    if any(not isinstance(r.folder, Path) for r in runs):  # an object store: one dataset read, in parallel
        return reader.dataset_table(STATS_TABLE, columns=STATS_COLUMNS)
    entry = key_of("stats rows", 1, STATS_COLUMNS)
    kept, index = _kept(cache, entry) if cache is not None else (None, {})
    parts: list[pa.Table] = []
    new_index: _Index = {}
    span: list[int] | None = None  # consecutive kept rows, taken as one slice
    rows = 0
    read = 0
    for run in runs:
        sha = run_file_sha256(run.manifest.files, table_file(STATS_TABLE))
        kept_span = _kept_span(index.get(run.run_id), sha, kept.num_rows) if kept is not None else None
        if kept_span is not None:
            start, count = kept_span
            if span is not None and span[0] + span[1] == start:
                span[1] += count
            else:
                _close(parts, kept, span)
                span = [start, count]
        else:
            _close(parts, kept, span)
            span = None
            parts.append(_read(run))
            count = parts[-1].num_rows
            read += 1
        new_index[run.run_id] = [sha, rows, count]
        rows += count
    _close(parts, kept, span)
    table = _concat(reader, parts)
    if cache is not None and (read or new_index != index):
        _keep(cache, entry, table, new_index)
    return table


def _kept_span(was: object, sha: str | None, kept_rows: int) -> tuple[int, int] | None:
    """The first row and the number of rows in the kept table of a run whose stats' sha256 is ``sha``,
    when the kept index entry ``was`` is of that very file (else ``None``)."""
    if sha is None or not (isinstance(was, list) and len(was) == 3 and was[0] == sha):
        return None
    start, count = was[1], was[2]
    if isinstance(start, int) and isinstance(count, int) and start >= 0 and count >= 0 and start + count <= kept_rows:
        return start, count
    return None


def _close(parts: list[pa.Table], kept: pa.Table | None, span: list[int] | None) -> None:
    if span is not None and kept is not None:
        parts.append(kept.slice(span[0], span[1]))


def _read(run: RunReader) -> pa.Table:
    path = run.table_path(STATS_TABLE)
    try:
        return read_parquet(path, STATS_COLUMNS, present=True)
    except (OSError, pa.ArrowException) as exc:
        raise StoreError(f"run {run.run_id}: {path}: unreadable Parquet: {exc}") from None


def _concat(reader: SuiteReader, parts: Sequence[pa.Table]) -> pa.Table:
    """The runs' rows as one table (a column one run lacks is null in its rows)."""
    try:
        table = pa.concat_tables(parts, promote_options="permissive").combine_chunks()
    except (pa.ArrowException, ValueError) as exc:
        raise StoreError(f"{reader.suite_dir}: the runs' {table_file(STATS_TABLE)} do not agree: {exc}") from None
    return table.select([c for c in STATS_COLUMNS if c in table.column_names])


def _kept(cache: OutputCache, entry: str) -> tuple[pa.Table | None, _Index]:
    """The rows and index the last summarize kept (``None``, ``{}``: none, or not an authentic entry)."""
    found = cache.get(STATS_CACHE, entry)
    if found is None or _ROWS not in found or _INDEX not in found:
        return None, {}
    try:
        index = json.loads(found[_INDEX])
        with pa.ipc.open_stream(io.BytesIO(found[_ROWS])) as stream:
            table = stream.read_all()
    except (ValueError, RecursionError, pa.ArrowException):
        return None, {}
    if not isinstance(index, dict) or list(table.column_names) != [c for c in STATS_COLUMNS if c in table.column_names]:
        return None, {}
    return table, index


def _keep(cache: OutputCache, entry: str, table: pa.Table, index: _Index) -> None:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    cache.put(STATS_CACHE, entry, {_ROWS: sink.getvalue(), _INDEX: json.dumps(index).encode("utf-8")})
