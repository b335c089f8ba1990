"""The Parquet results store: one folder per suite, one folder per run.

Layout: :mod:`holistic.results.layout`; columns: :mod:`holistic.results.schemas`
(documented in ``schemas/results.schema.json``).

Every file is written atomically (:mod:`holistic.results.atomic`); the run's manifest
(:mod:`holistic.results.manifest`) is written last. A run whose manifest is missing,
partial (failed requests) or does not verify is redone from scratch (its successful
requests come back from the cache); a verified complete run is skipped.

The output folder is a path or a URI (:mod:`holistic.results.fs`); on an object store
the same order holds (a run's files first, its manifest last), so a run written there is
visible only once complete.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import importlib.metadata
import json
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from holistic.core.errors import StoreError
from holistic.results import atomic, manifest
from holistic.results.fs import Location, UriPath, location, read_json_object
from holistic.results.layout import (
    ARTIFACTS_FILE,
    BROWSER_DIR,
    COMPLETE_MARKER,
    PARTIAL_MARKER,
    RUNS_DIR,
    SUITE_FILE,
    check_suite_name,
    table_file,
)
from holistic.results.schemas import SCHEMA_VERSION, TABLES, arrow_schema, check_schema_version


def package_version() -> str:
    """The installed holistic version (or the source tree's, when run from a checkout)."""
    try:
        return importlib.metadata.version("holistic")
    except importlib.metadata.PackageNotFoundError:
        from holistic.core.version import __version__

        return __version__


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class SuiteStore:
    """Reads and writes one suite folder."""

    def __init__(self, output_dir: Location | str, suite: str) -> None:
        check_suite_name(suite)
        self.output_dir: Location = location(output_dir)
        self.suite = suite
        self.suite_dir = self.output_dir / suite
        self.runs_dir = self.suite_dir / RUNS_DIR
        self.suite_file = self.suite_dir / SUITE_FILE

    # -- suite.json ----------------------------------------------------------

    def read_suite_json(self) -> dict[str, Any] | None:
        """The existing ``suite.json`` (``None`` if the suite is new)."""
        try:
            if not self.suite_file.exists():
                return None
        except Exception as exc:  # a URI's filesystem may fail in its own ways (network, auth, missing bucket)
            shown = (
                self.suite_file.redact(f"{type(exc).__name__}: {exc}") if isinstance(self.suite_file, UriPath) else exc
            )
            raise StoreError(f"cannot reach {self.suite_file}: {shown}; check --output-dir") from None
        return read_json_object(self.suite_file, "a suite file")

    def check_compatible(self) -> dict[str, Any] | None:
        """Refuse an existing suite written with another store layout."""
        data = self.read_suite_json()
        if data is None:
            return None
        found = data.get("schema_version")
        check_schema_version(
            found,
            newer=f"{self.suite_file}: suite {self.suite!r} was written by a newer holistic (results "
            f"schema_version {found}; this one reads {SCHEMA_VERSION}); upgrade holistic",
            other=f"{self.suite_file}: suite {self.suite!r} was written with results schema_version {found!r}, "
            f"this holistic writes schema_version {SCHEMA_VERSION}; use another --output-dir or --suite, "
            f"or delete {self.suite_dir}",
        )
        return data

    def check_writable(self) -> None:
        """Create the suite folder and prove a file can be written there (before any model call)."""
        if isinstance(self.suite_dir, UriPath):
            self._check_writable_uri(self.suite_dir)
            return
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            probe = atomic.temporary_name(self.suite_dir / ".write-probe")
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise StoreError(
                f"cannot write results to {self.suite_dir}: {reason}; choose a writable --output-dir"
            ) from None

    def _check_writable_uri(self, suite_dir: UriPath) -> None:
        probe = suite_dir / f".write-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            probe.write_bytes(b"")
            probe.unlink(missing_ok=True)
        except Exception as exc:  # each fsspec backend fails in its own way (network, auth, missing bucket)
            reason = suite_dir.redact(f"{type(exc).__name__}: {exc}")
            raise StoreError(
                f"cannot write results to {suite_dir}: {reason}; check the URI, its credentials and the network, "
                f"or choose another --output-dir"
            ) from None

    def open(self, *, spec_path: str, spec_sha256: str, description: str = "") -> None:
        """Check the folder is writable and compatible, then write/refresh ``suite.json``, which
        records the spec the suite is run from: its path (an imported suite: ``helm-import
        <folder>``), the sha256 of its bytes (of the HELM run specs) and its description."""
        existing = self.check_compatible()
        self.check_writable()
        atomic.remove_stale_temporaries(self.suite_dir)
        data = dict(existing or {})
        now = utc_now()
        data.update(
            schema_version=SCHEMA_VERSION,
            package_version=package_version(),
            suite=self.suite,
            description=description,
            spec_path=spec_path,
            spec_sha256=spec_sha256,
            updated=now,
        )
        data.setdefault("created", now)
        data.setdefault("runs", [])
        self.write_suite_json(data)

    def record_runs(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Insert or update run entries (by ``run_id``) in ``suite.json``; order of first appearance kept."""
        data = self.read_suite_json() or {}
        runs: list[dict[str, Any]] = list(data.get("runs", []))
        index = {r.get("run_id"): i for i, r in enumerate(runs)}
        for entry in entries:
            if entry["run_id"] in index:
                runs[index[entry["run_id"]]] = dict(entry)
            else:
                index[entry["run_id"]] = len(runs)
                runs.append(dict(entry))
        data["runs"] = runs
        data["updated"] = utc_now()
        self.write_suite_json(data)

    def write_suite_json(self, data: Mapping[str, Any]) -> None:
        try:
            atomic.write_text(self.suite_file, dump_json(data))
        except OSError as exc:
            raise StoreError(f"cannot write {self.suite_file}: {exc.strerror or exc}") from None

    # -- runs ----------------------------------------------------------------

    def run_dir(self, run_id: str) -> Location:
        return self.runs_dir / run_id

    def is_complete(self, run_id: str) -> bool:
        """Whether the run has a verified manifest with every request successful."""
        return self.check_complete(run_id) is None

    def check_complete(self, run_id: str) -> str | None:
        """``None`` when the run is verified complete, else why it must be (re)done; a run of a newer
        ``schema_version`` raises :class:`~holistic.results.manifest.NewerRunError` (exit 2)."""
        folder = self.run_dir(run_id)
        if manifest.marker_of(folder) is None:
            return "not written yet"
        try:
            found = manifest.verify(folder)
        except manifest.NewerRunError:
            raise  # a newer holistic's run is refused, never redone over (readers refuse it too)
        except manifest.DamagedRunError as exc:
            return f"damaged ({exc.file}: {exc.problem})"
        if found.status != manifest.COMPLETE:
            return f"{found.failed_requests} of {found.requests} requests failed"
        return None

    def begin_run(self, run_id: str) -> RunWriter:
        """Start (or restart) writing a run: stale temporaries and shards of an earlier,
        unfinished attempt are removed so nothing old is mistaken for this run's output."""
        folder = self.run_dir(run_id)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            atomic.remove_stale_temporaries(folder)
            for name in (COMPLETE_MARKER, PARTIAL_MARKER, *(table_file(t) for t in TABLES), ARTIFACTS_FILE):
                with contextlib.suppress(FileNotFoundError):
                    (folder / name).unlink()
            _remove_bundle(folder)
        except OSError as exc:
            raise StoreError(f"cannot prepare run folder {folder}: {exc.strerror or exc}") from None
        return RunWriter(folder)


def _remove_bundle(folder: Location) -> None:
    """Remove the browser bundle of an earlier attempt (a symbolic link in its place is removed, not followed)."""
    if isinstance(folder, UriPath):
        return
    bundle = folder / BROWSER_DIR
    atomic.recover_folder(bundle)  # the half-built bundles of killed writers
    if bundle.is_symlink() or bundle.is_file():
        bundle.unlink()
    elif bundle.is_dir():
        shutil.rmtree(bundle)


class RunWriter:
    """Writes the files of one run; :meth:`complete` must be called last."""

    def __init__(self, folder: Location) -> None:
        self.folder = folder
        self.written: list[Location] = []

    def write_json(self, name: str, data: Any) -> Location:
        path = self.folder / name
        atomic.write_text(path, dump_json(data))
        self.written.append(path)
        return path

    def write_table(self, name: str, table: pa.Table) -> Location:
        if name not in TABLES:
            raise ValueError(f"unknown results table {name!r}")
        path = self.folder / table_file(name)
        atomic.write_parquet(path, table)
        self.written.append(path)
        return path

    def table_batches(self, name: str) -> atomic.ParquetBatches:
        """A table written in batches (bounded memory; a local run folder only): ``write`` each
        batch, then ``close`` to rename it into place (it then counts as written), or ``abort``."""
        if name not in TABLES:
            raise ValueError(f"unknown results table {name!r}")
        if isinstance(self.folder, UriPath):
            raise StoreError(f"{self.folder}: tables are written in batches only to a local folder")
        path = self.folder / table_file(name)
        self.written.append(path)
        return atomic.ParquetBatches(path, arrow_schema(name))

    def complete(self, *, requests: int = 0, failed_requests: int = 0, unparseable: int = 0) -> manifest.Manifest:
        """Write the manifest of every file written: ``_COMPLETE``, or ``_PARTIAL`` when requests failed
        (``unparseable`` judges' verdicts count in the error rate but do not make the run partial)."""
        found = manifest.build_manifest(
            self.folder,
            (p.name for p in self.written),
            written=utc_now(),
            requests=requests,
            failed_requests=failed_requests,
            unparseable=unparseable,
        )
        path = self.folder / manifest.MARKERS[found.status]
        atomic.write_text(path, dump_json(found.to_json()))
        if isinstance(self.folder, UriPath):
            return found  # an object store's write is durable once it returns
        # make the rename durable before the run is reported done
        with contextlib.suppress(OSError):
            fd = os.open(self.folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return found
