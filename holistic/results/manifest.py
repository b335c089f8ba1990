"""The run manifest (``_COMPLETE`` / ``_PARTIAL``): every file of a run, its size and sha256.

Written last, after every other file of the run has been renamed into place. A run is
*verified* when its manifest parses, carries this holistic's ``schema_version`` and every
file it lists exists with the recorded size and hash. ``helm-run`` verifies before it
skips a run (a damaged run is redone from the request cache); ``helm-summarize`` and
``helm-diff`` verify before they read (a damaged run stops them with exit 2, naming the
run and the file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holistic.core.errors import StoreError
from holistic.core.hashing import stream_sha256
from holistic.results.fs import Location
from holistic.results.layout import COMPLETE_MARKER, PARTIAL_MARKER
from holistic.results.schemas import SCHEMA_VERSION

if TYPE_CHECKING:
    from holistic.results.digests import KnownDigests

COMPLETE = "complete"
PARTIAL = "partial"
MARKERS = {COMPLETE: COMPLETE_MARKER, PARTIAL: PARTIAL_MARKER}


class DamagedRunError(StoreError):
    """A run's manifest or one of the files it lists is missing or does not match."""

    def __init__(self, run_dir: Location, file: str, problem: str) -> None:
        self.run_dir = run_dir
        self.file = file
        self.problem = problem
        super().__init__(f"run {run_dir.name}: {run_dir / file}: {problem}")


class NewerRunError(DamagedRunError):
    """A run written by a newer holistic (a higher ``schema_version``): refused, never rewritten."""


def file_sha256(path: Location) -> str:
    with path.open("rb") as fh:
        return stream_sha256(fh)


@dataclass(frozen=True)
class FileEntry:
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    """What a run's marker file records."""

    status: str
    """``complete`` (every request succeeded) or ``partial`` (some failed; redone on a rerun)."""
    schema_version: int
    files: tuple[FileEntry, ...]
    written: str
    requests: int = 0
    failed_requests: int = 0
    unparseable: int = 0
    """Judges' verdicts that no attempt could read (recorded, not failed: they count in the error rate)."""

    @property
    def error_rate(self) -> float:
        return (self.failed_requests + self.unparseable) / self.requests if self.requests else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "schema_version": self.schema_version,
            "written": self.written,
            "requests": self.requests,
            "failed_requests": self.failed_requests,
            "unparseable": self.unparseable,
            "files": [{"name": f.name, "size": f.size, "sha256": f.sha256} for f in self.files],
        }


def build_manifest(
    folder: Location, names: Iterable[str], *, written: str, requests: int, failed_requests: int, unparseable: int = 0
) -> Manifest:
    files = tuple(
        FileEntry(name=n, size=(folder / n).stat().st_size, sha256=file_sha256(folder / n)) for n in sorted(set(names))
    )
    return Manifest(
        status=PARTIAL if failed_requests else COMPLETE,
        schema_version=SCHEMA_VERSION,
        files=files,
        written=written,
        requests=requests,
        failed_requests=failed_requests,
        unparseable=unparseable,
    )


def marker_of(run_dir: Location) -> Location | None:
    """The run's manifest file (``_COMPLETE`` before ``_PARTIAL``), ``None`` when it has none."""
    for name in (COMPLETE_MARKER, PARTIAL_MARKER):
        if (run_dir / name).is_file():
            return run_dir / name
    return None


def _parse(run_dir: Location, marker: Location) -> Manifest:
    name = marker.name
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DamagedRunError(run_dir, name, f"unreadable manifest ({type(exc).__name__})") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("files"), list):
        raise DamagedRunError(run_dir, name, "not a run manifest (written by an older holistic, or damaged)")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        newer = isinstance(version, int) and version > SCHEMA_VERSION
        raise (NewerRunError if newer else DamagedRunError)(
            run_dir,
            name,
            f"written with results schema_version {version!r}; this holistic reads {SCHEMA_VERSION}"
            + ("; upgrade holistic to read it" if newer else ""),
        )
    try:
        files = tuple(FileEntry(str(f["name"]), int(f["size"]), str(f["sha256"])) for f in data["files"])
        manifest = Manifest(
            status=str(data["status"]),
            schema_version=int(version),
            files=files,
            written=str(data.get("written", "")),
            requests=int(data.get("requests", 0)),
            failed_requests=int(data.get("failed_requests", 0)),
            unparseable=int(data.get("unparseable", 0)),
        )
    except (KeyError, TypeError, ValueError):
        raise DamagedRunError(run_dir, name, "malformed manifest") from None
    if MARKERS.get(manifest.status) != name:
        raise DamagedRunError(run_dir, name, f"manifest status {manifest.status!r} does not match its file name")
    for entry in manifest.files:
        if "/" in entry.name or "\\" in entry.name or entry.name.startswith("."):
            raise DamagedRunError(run_dir, name, f"manifest lists an invalid file name {entry.name!r}")
    return manifest


def verify(run_dir: Location, known: KnownDigests | None = None) -> Manifest:
    """The run's manifest, after checking every file it lists; :class:`DamagedRunError` otherwise
    (``known``: the sha256 of files unchanged since an earlier summarize hashed them)."""
    marker = marker_of(run_dir)
    if marker is None:
        raise DamagedRunError(run_dir, COMPLETE_MARKER, "missing (the run is not complete)")
    manifest = _parse(run_dir, marker)
    for entry in manifest.files:
        path = run_dir / entry.name
        try:
            info = path.stat()
            size = info.st_size
        except FileNotFoundError:
            raise DamagedRunError(run_dir, entry.name, "missing (listed in the run's manifest)") from None
        except OSError as exc:
            raise DamagedRunError(run_dir, entry.name, f"unreadable: {exc.strerror or exc}") from None
        if size != entry.size:
            raise DamagedRunError(run_dir, entry.name, f"size {size} bytes, the manifest says {entry.size}")
        try:
            if known is not None and isinstance(path, Path) and isinstance(info, os.stat_result):
                digest = known.sha256(path, info, file_sha256)
            else:
                digest = file_sha256(path)
        except OSError as exc:
            raise DamagedRunError(run_dir, entry.name, f"unreadable: {exc.strerror or exc}") from None
        if digest != entry.sha256:
            raise DamagedRunError(run_dir, entry.name, "content differs from the manifest (sha256 mismatch)")
    return manifest
