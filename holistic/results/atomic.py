"""Atomic file writes: write to a hidden temporary name in the same folder, then rename.

``os.replace`` within one folder is atomic on POSIX and Windows, so a reader (or a
rerun after ``kill -9``) sees either the old file, the whole new file, or no file —
never a half-written one under the final name. On an object store (a
:class:`~holistic.results.fs.UriPath`) a file is one whole-object write instead, which
readers likewise see whole or not at all. Temporary names start with ``.`` and
end with ``.tmp`` so no ``*.parquet`` glob ever matches them; :func:`remove_stale_temporaries`
cleans up the ones a killed process left behind (never those of a writer still running).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from holistic.results.fs import Location, UriPath, parquet_bytes

TMP_SUFFIX = ".tmp"


def temporary_name(path: Path) -> Path:
    """A unique hidden sibling of ``path`` to write before renaming."""
    return path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}{TMP_SUFFIX}")


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path``, on error it is removed."""
    tmp = temporary_name(path)
    try:
        yield tmp
        _fsync(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            with contextlib.suppress(OSError):
                tmp.unlink()


def _fsync(path: Path) -> None:
    with contextlib.suppress(OSError), open(path, "rb") as fh:
        os.fsync(fh.fileno())


def write_bytes(path: Location, data: bytes) -> None:
    if isinstance(path, UriPath):
        path.write_bytes(data)
        return
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: Location, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_parquet(path: Location, table: pa.Table) -> None:
    """Write ``table`` as Parquet (zstd) atomically."""
    if isinstance(path, UriPath):
        path.write_bytes(parquet_bytes(table))
        return
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


class ParquetBatches:
    """A Parquet file written batch by batch under a temporary name (memory: one batch), renamed
    into place by :meth:`close`; :meth:`abort` removes it. Local folders only."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = path
        self.tmp = temporary_name(path)
        self._writer = pq.ParquetWriter(self.tmp, schema, compression="zstd")
        self.rows = 0

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            self._writer.write_table(table)
            self.rows += table.num_rows

    def close(self) -> None:
        self._writer.close()
        _fsync(self.tmp)
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
        with contextlib.suppress(OSError):
            self.tmp.unlink()


def _writer_alive(name: str) -> bool:
    """Whether the process that named this temporary (``.<file>.<pid>-<hex>.tmp``) still runs."""
    stem = name[: -len(TMP_SUFFIX)]
    pid_part = stem.rsplit(".", 1)[-1].split("-", 1)[0]
    if not pid_part.isdigit():
        return False
    try:
        os.kill(int(pid_part), 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but is not ours to signal
        return True
    return True


def remove_stale_temporaries(folder: Location) -> int:
    """Delete temporaries left in ``folder`` by writers that no longer run; returns how many
    (object stores never hold temporaries: their writes are whole-object)."""
    if isinstance(folder, UriPath) or not folder.is_dir():
        return 0
    removed = 0
    for entry in folder.iterdir():
        if not (entry.name.startswith(".") and entry.name.endswith(TMP_SUFFIX) and entry.is_file()):
            continue
        if _writer_alive(entry.name):
            continue
        with contextlib.suppress(OSError):
            entry.unlink()
            removed += 1
    return removed
