"""Typed reading of a suite: :class:`SuiteReader` and :class:`RunReader`.

``helm-summarize``, the site, ``helm-diff`` and the test fixtures read results only
through here. Opening a suite checks its ``schema_version`` (a newer one is a clear
error, exit 2); listing its runs verifies each run's manifest, so a deleted, truncated
or edited file stops the reader with an error naming the run and the file instead of
silently changing the numbers. Unreadable files (corrupt Parquet or JSON) are reported
the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from holistic.core.errors import StoreError
from holistic.results import manifest
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
from holistic.results.schemas import SCHEMA_VERSION, TABLES


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{path}: missing ({what})") from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: cannot read {what}: {type(exc).__name__}: {exc}") from None
    if not isinstance(data, dict):
        raise StoreError(f"{path}: not {what} (expected a JSON object)")
    return data


@dataclass(frozen=True)
class RunReader:
    """One verified run of a suite."""

    run_id: str
    folder: Path
    manifest: manifest.Manifest

    @classmethod
    def at(cls, folder: Path | RunReader) -> RunReader:
        """A reader of a run folder given directly, read as it is (not verified: for tools that hold a
        folder rather than a suite). :class:`SuiteReader` is the usual, verified way in."""
        if isinstance(folder, RunReader):
            return folder
        folder = Path(folder)
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
        return _read_json(self.folder / RUN_SPEC_FILE, "a run spec")

    @cached_property
    def artifacts(self) -> dict[str, Any]:
        """``artifacts.json`` (``{}`` when the run wrote none)."""
        path = self.folder / ARTIFACTS_FILE
        return _read_json(path, "run artifacts") if path.exists() else {}

    def table_path(self, table: str) -> Path:
        if table not in TABLES:
            raise ValueError(f"unknown results table {table!r}")
        return self.folder / table_file(table)

    def has_table(self, table: str) -> bool:
        return self.table_path(table).is_file()

    def table_columns(self, table: str) -> list[str]:
        path = self.table_path(table)
        try:
            return list(pq.read_schema(path).names)
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
            if columns is not None:
                names = set(pq.read_schema(path).names)
                return pq.read_table(path, columns=[c for c in columns if c in names])
            return pq.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"run {self.run_id}: {path}: unreadable Parquet: {exc}") from None


class SuiteReader:
    """A suite folder, opened for reading."""

    def __init__(self, suite_dir: Path) -> None:
        self.suite_dir = Path(suite_dir)
        path = self.suite_dir / SUITE_FILE
        if not path.is_file():
            raise StoreError(f"{self.suite_dir}: not a suite directory (no {SUITE_FILE}); run helm-run first")
        self.meta = _read_json(path, "a suite file")
        found = self.meta.get("schema_version")
        if found != SCHEMA_VERSION:
            if isinstance(found, int) and found > SCHEMA_VERSION:
                raise StoreError(
                    f"{path}: written with results schema_version {found}, newer than this holistic "
                    f"reads ({SCHEMA_VERSION}); upgrade holistic to read it"
                )
            raise StoreError(
                f"{path}: written with results schema_version {found!r}; this holistic reads "
                f"{SCHEMA_VERSION}; rerun helm-run into a new --output-dir to rewrite it"
            )

    @classmethod
    def open(cls, output_dir: Path, suite: str) -> SuiteReader:
        """The suite ``suite`` under ``output_dir`` (the name is validated: no path escapes)."""
        check_suite_name(suite, where="--suite")
        return cls(Path(output_dir) / suite)

    @property
    def suite(self) -> str:
        return str(self.meta.get("suite") or self.suite_dir.name)

    @property
    def summary_dir(self) -> Path:
        return self.suite_dir / SUMMARY_DIR

    @property
    def site_dir(self) -> Path:
        return self.suite_dir / SITE_DIR

    def ratings(self, per_instance: bool = False) -> pa.Table:
        """The imported human ratings (``helm-summarize --import-ratings``): one row per item, rater
        and question, or with ``per_instance`` their means per instance; empty when none were imported."""
        path = self.suite_dir / RATINGS_DIR / (PER_INSTANCE_RATINGS_FILE if per_instance else RATINGS_FILE)
        if not path.is_file():
            return pa.table({})
        try:
            return pq.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"{path}: unreadable Parquet: {exc}") from None

    def run_folders(self) -> list[Path]:
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
            found = manifest.verify(folder)
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
    ) -> pa.Table:
        """``table`` of the given runs (default: all) read as one table; ``metrics`` filters on ``metric``."""
        wanted = None if run_ids is None else set(run_ids)
        runs = [r for r in self.runs if (wanted is None or r.run_id in wanted) and r.has_table(table)]
        if not runs:
            return pa.table({})
        try:
            dataset = ds.dataset([str(r.table_path(table)) for r in runs], format="parquet")
            names = set(dataset.schema.names)
            cols = None if columns is None else [c for c in columns if c in names]
            flt = pc.field("metric").isin(list(metrics)) if metrics is not None and "metric" in names else None
            return dataset.to_table(columns=cols, filter=flt)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"{self.suite_dir}: cannot read the runs' {table_file(table)}: {exc}") from None
