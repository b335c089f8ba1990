"""Atomic file and folder writes: write to a hidden temporary name in the same folder, then rename.

``os.replace`` within one folder is atomic on POSIX and Windows, so a reader (or a
rerun after ``kill -9``) sees either the old file, the whole new file, or no file —
never a half-written one under the final name. On an object store (a
:class:`~holistic.results.fs.UriPath`) a file is one whole-object write instead, which
readers likewise see whole or not at all. Temporary names start with ``.`` and
end with ``.tmp`` so no ``*.parquet`` glob ever matches them; :func:`remove_stale_temporaries`
cleans up the ones a killed process left behind (never those of a writer still running).

A folder (the summary, the site) is built whole under a hidden temporary name and swapped
in by :func:`build_folder`: two renames, the old folder set aside under a name that shares
the new one's token. :func:`recover_folder`, called before the next build, finishes a swap
that a kill interrupted between the two renames (the new folder if it was set to go in, else
the old one back) and removes the temporary folders of killed builds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from holistic.core.errors import StoreError
from holistic.results.fs import Location, UriPath, parquet_bytes, parquet_options

T = TypeVar("T")

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
    """Write ``table`` as Parquet (zstd, :func:`~holistic.results.fs.parquet_options`) atomically."""
    if isinstance(path, UriPath):
        path.write_bytes(parquet_bytes(table))
        return
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **parquet_options(table))


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
    pid_part = stem.rsplit(".", 1)[-1].split("-", 1)[0]  # also .<folder>.<pid>-<hex>-old.tmp
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


_OLD = "-old"


@contextlib.contextmanager
def writing(path: Path) -> Iterator[Path]:
    """Around a write of ``path``: an ``OSError`` (disk full, read-only) becomes a :class:`StoreError`
    naming ``path``, the file that could not be written (a failed write's own error names no file,
    and a failed copy names its source)."""
    try:
        yield path
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None


def build_folder(final: Path, build: Callable[[Path], T], *, what: str) -> T:
    """``build(folder)`` into a fresh hidden sibling of ``final``, then swap it in whole.

    A failure (or a kill) leaves ``final`` as it was; ``what`` names the folder in errors."""
    recover_folder(final)
    building = temporary_name(final)
    try:
        building.mkdir(parents=True)
    except OSError as exc:
        raise StoreError(f"cannot write the {what} in {final.parent}: {exc.strerror or exc}") from None
    try:
        result = build(building)
        _swap_in(building, final, what)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)
    return result


def _swap_in(building: Path, final: Path, what: str) -> None:
    old = building.with_name(building.name[: -len(TMP_SUFFIX)] + _OLD + TMP_SUFFIX)
    try:
        if final.exists():
            os.replace(final, old)
        os.replace(building, final)
    except OSError as exc:
        if old.exists() and not final.exists():
            with contextlib.suppress(OSError):
                os.replace(old, final)
        raise StoreError(f"cannot replace the {what} {final}: {exc.strerror or exc}") from None
    shutil.rmtree(old, ignore_errors=True)


def recover_folder(final: Path) -> int:
    """Finish a swap of ``final`` a killed process left half done, and remove the temporary
    folders of builds whose process no longer runs; returns how many were removed."""
    parent = final.parent
    if isinstance(final, UriPath) or not parent.is_dir():
        return 0
    prefix = f".{final.name}."
    stale = [
        e
        for e in parent.iterdir()
        if e.name.startswith(prefix) and e.name.endswith(TMP_SUFFIX) and e.is_dir() and not _writer_alive(e.name)
    ]
    if not final.exists():
        for old in sorted((e for e in stale if e.name.endswith(_OLD + TMP_SUFFIX)), key=lambda e: e.name):
            # killed between the two renames: the new folder was complete, else the old one was
            new = old.with_name(old.name[: -len(_OLD + TMP_SUFFIX)] + TMP_SUFFIX)
            chosen = new if new in stale else old
            with contextlib.suppress(OSError):
                os.replace(chosen, final)
                stale.remove(chosen)
                break
    for entry in stale:
        shutil.rmtree(entry, ignore_errors=True)
    return len(stale)
