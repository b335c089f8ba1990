"""Typed reading of a suite: :class:`SuiteReader` and :class:`RunReader`.

``helm-summarize``, the site, ``helm-diff`` and the test fixtures read results only
through here. Opening a suite checks its ``schema_version`` (a newer one is a clear
error, exit 2); listing its runs verifies each run's manifest, so a deleted, truncated
or edited file stops the reader with an error naming the run and the file instead of
silently changing the numbers. Unreadable files (corrupt Parquet or JSON) are reported
the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

import holistic.results.manifest as manifest
from holistic.core.errors import StoreError
from holistic.results.fs import (
    Location,
    UriPath,
    location,
    parquet_dataset,
    read_json_object,
    read_parquet,
    read_parquet_schema,
)
from holistic.results.layout import (
    ARTIFACTS_FILE,
    PER_INSTANCE_RATINGS_FILE,
    RATINGS_DIR,
    RATINGS_FILE,
    RUN_SPEC_FILE,
    RUNS_DIR,
    SITE_DIR,
    SUITE_FILE,
    SUMMARY_DIR,
    check_suite_name,
    table_file,
)
from holistic.results.schemas import SCHEMA_VERSION, TABLES, check_schema_version

if TYPE_CHECKING:
    from holistic.results.digests import KnownDigests


@dataclass(frozen=True)
class RunReader:
    """One verified run of a suite."""

    run_id: str
    folder: Location
    manifest: manifest.Manifest

    @classmethod
    def at(cls, folder: Location | RunReader) -> RunReader:
        """A reader of a run folder given directly, read as it is (not verified: for tools that hold a
        folder rather than a suite). :class:`SuiteReader` is the usual, verified way in."""
        if isinstance(folder, RunReader):
            return folder
        folder = folder if isinstance(folder, UriPath) else Path(folder)
        return cls(
            run_id=folder.name,
            folder=folder,
            manifest=manifest.Manifest(status="unverified", schema_version=SCHEMA_VERSION, files=(), written=""),
        )

    @property
    def status(self) -> str:
        """``complete`` or ``partial`` (written with failed requests)."""
        return self.manifest.status

    @property
    def error_rate(self) -> float:
        return self.manifest.error_rate

    @cached_property
    def spec(self) -> dict[str, Any]:
        """``run_spec.json``: the canonical run spec plus facts about the run."""
        return read_json_object(self.folder / RUN_SPEC_FILE, "a run spec")

    @cached_property
    def artifacts(self) -> dict[str, Any]:
        """``artifacts.json`` (``{}`` when the run wrote none)."""
        path = self.folder / ARTIFACTS_FILE
        return read_json_object(path, "run artifacts") if path.exists() else {}

    def table_path(self, table: str) -> Location:
        if table not in TABLES:
            raise ValueError(f"unknown results table {table!r}")
        return self.folder / table_file(table)

    def has_table(self, table: str) -> bool:
        return self.table_path(table).is_file()

    def table_columns(self, table: str) -> list[str]:
        path = self.table_path(table)
        try:
            return list(read_parquet_schema(path).names)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"run {self.run_id}: {path}: unreadable Parquet: {exc}") from None

    def table(self, table: str, columns: Sequence[str] | None = None, *, missing_ok: bool = True) -> pa.Table:
        """The run's ``table`` (only ``columns`` present in the file, when given)."""
        path = self.table_path(table)
        if not path.is_file():
            if missing_ok:
                return pa.table({})
            raise StoreError(f"run {self.run_id}: {path}: missing")
        try:
            return read_parquet(path, columns=columns, present=True)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"run {self.run_id}: {path}: unreadable Parquet: {exc}") from None


class SuiteReader:
    """A suite folder (a path or a URI), opened for reading."""

    def __init__(self, suite_dir: Location | str, *, local_dir: Path | None = None) -> None:
        self.suite_dir: Location = location(suite_dir)
        self.local_dir = local_dir
        self.known_digests: KnownDigests | None = None
        """The sha256 of run files unchanged since an earlier summarize hashed them (``helm-summarize``
        sets it, from its output cache, before the runs are first read)."""
        """Where the summary and the site go (``None``: inside the suite folder, which must then be local)."""
        path = self.suite_dir / SUITE_FILE
        try:
            found_file = path.is_file()
        except Exception as exc:  # a URI's filesystem may fail in its own ways (network, auth, missing bucket)
            shown = path.redact(f"{type(exc).__name__}: {exc}") if isinstance(path, UriPath) else exc
            raise StoreError(f"cannot reach {path}: {shown}; check --output-dir") from None
        if not found_file:
            raise StoreError(f"{self.suite_dir}: not a suite directory (no {SUITE_FILE}); run helm-run first")
        self.meta = read_json_object(path, "a suite file")
        found = self.meta.get("schema_version")
        check_schema_version(
            found,
            newer=f"{path}: written with results schema_version {found}, newer than this holistic "
            f"reads ({SCHEMA_VERSION}); upgrade holistic to read it",
            other=f"{path}: written with results schema_version {found!r}; this holistic reads "
            f"{SCHEMA_VERSION}; rerun helm-run into a new --output-dir to rewrite it",
        )

    @classmethod
    def open(cls, output_dir: Location | str, suite: str, *, local_dir: Path | None = None) -> SuiteReader:
        """The suite ``suite`` under ``output_dir`` (the name is validated: no path escapes); ``local_dir``
        is where its summary and site are written when not in the suite folder (see :attr:`derived_dir`)."""
        check_suite_name(suite, where="--suite")
        return cls(location(output_dir) / suite, local_dir=local_dir)

    @property
    def suite(self) -> str:
        return str(self.meta.get("suite") or self.suite_dir.name)

    @property
    def derived_dir(self) -> Path:
        """The local folder the summary and the site are written under: the suite folder itself, or
        ``<local_dir>/<suite>`` when one is given (always, for a suite read from a URI)."""
        if self.local_dir is not None:
            return Path(self.local_dir) / check_suite_name(self.suite_dir.name)
        if isinstance(self.suite_dir, UriPath):
            raise StoreError(f"{self.suite_dir}: a suite read from a URI needs a local folder for its summary")
        return self.suite_dir

    @property
    def summary_dir(self) -> Path:
        return self.derived_dir / SUMMARY_DIR

    @property
    def site_dir(self) -> Path:
        return self.derived_dir / SITE_DIR

    def ratings(self, per_instance: bool = False) -> pa.Table:
        """The imported human ratings (``helm-ratings import``): one row per item, rater
        and question, or with ``per_instance`` their means per instance; empty when none were imported."""
        path = self.suite_dir / RATINGS_DIR / (PER_INSTANCE_RATINGS_FILE if per_instance else RATINGS_FILE)
        if not path.is_file():
            return pa.table({})
        try:
            return read_parquet(path)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"{path}: unreadable Parquet: {exc}") from None

    def run_folders(self) -> list[Location]:
        runs_dir = self.suite_dir / RUNS_DIR
        if not runs_dir.is_dir():
            return []
        return sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith("."))

    @cached_property
    def runs(self) -> tuple[RunReader, ...]:
        """Every run with a manifest, verified (:class:`~holistic.results.manifest.DamagedRunError` if one
        is damaged); runs never finished (no manifest) are left out."""
        out = []
        for folder in self.run_folders():
            if manifest.marker_of(folder) is None:
                continue
            found = manifest.verify(folder, self.known_digests)
            out.append(RunReader(run_id=folder.name, folder=folder, manifest=found))
        return tuple(out)

    @cached_property
    def _by_id(self) -> dict[str, RunReader]:
        return {r.run_id: r for r in self.runs}

    def run(self, run_id: str) -> RunReader:
        try:
            return self._by_id[run_id]
        except KeyError:
            raise StoreError(f"{self.suite_dir}: no complete run {run_id!r}") from None

    def dataset_table(
        self,
        table: str,
        run_ids: Sequence[str] | None = None,
        *,
        columns: Sequence[str] | None = None,
        metrics: Sequence[str] | None = None,
        dictionary: Sequence[str] = (),
    ) -> pa.Table:
        """``table`` of the given runs (default: all) read as one table; ``metrics`` filters on ``metric``;
        the string columns named in ``dictionary`` are read as dictionaries (each file's own, as stored)."""
        wanted = None if run_ids is None else set(run_ids)
        runs = [r for r in self.runs if (wanted is None or r.run_id in wanted) and r.has_table(table)]
        if not runs:
            return pa.table({})
        import pyarrow.compute as pc  # a suite-wide read only: a run's start does without it

        try:
            dataset = parquet_dataset([r.table_path(table) for r in runs], dictionary)
            names = set(dataset.schema.names)
            cols = None if columns is None else [c for c in columns if c in names]
            flt = pc.field("metric").isin(list(metrics)) if metrics is not None and "metric" in names else None
            return dataset.to_table(columns=cols, filter=flt)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"{self.suite_dir}: cannot read the runs' {table_file(table)}: {exc}") from None
