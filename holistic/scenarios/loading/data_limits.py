"""What reading and shaping a data file may spend: bytes, field sizes, pattern time.

A data file is hostile input like a spec. Its reading and shaping (``columns``, ``join``) have a
budget per file, with defaults that fit a 1.5 GB address space (:class:`DataLimits`, set for a
whole ``helm-run`` by :func:`configure_data_limits`, from its ``--max-data-*`` options):

- a gzip file may not expand more than ``max_decompression_ratio`` times its size on disk
  (past a first MiB): a gzip bomb stops while it is being read, naming the file;
- a file read whole (a data file, a JSON document) may hold at most ``max_file_mib`` MiB of text
  once decompressed; a joined file is streamed, only the rows it matches kept;
- one field (a cell, a JSON value, a computed column) may hold at most ``max_field_chars``
  characters and ``max_field_items`` list elements: a ``concat`` that doubles a list column by
  column stops at the first column past the limit;
- the ``split`` patterns of one file may take ``pattern_seconds`` of matching in all, on top of
  the 1 s per row each already has (a pattern slow on every row no longer multiplies by the rows),
  and the patterns of every file of one ``helm-run`` (the whole spec, ``--plan`` included) may
  take ``total_pattern_seconds`` in all (many files each slow within its own budget no longer
  multiply by the files).

Memory is bounded per file: a spec's runs load their data one run at a time, so the largest
file bounds what reading a whole spec holds.

Past a limit, :class:`DataLimitError` (exit 2) names the file, the column and the limit with the
option that raises it.
"""

from __future__ import annotations

import gzip
import io
import math
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from holistic.core.errors import LimitError

MIB = 1 << 20
_FLOOR_BYTES = MIB
"""Decompressed bytes a gzip file may always produce, whatever its ratio (tiny files compress well)."""


class DataLimitError(LimitError):
    """A data file went past one of :class:`DataLimits` (exit 2, naming the file, column and limit)."""


@dataclass(frozen=True)
class DataLimits:
    """The budget of reading and shaping one data file (see the module docstring)."""

    max_decompression_ratio: float = 100.0
    """Decompressed bytes per byte of a gzip file (``--max-data-decompression-ratio``)."""
    max_file_mib: int = 256
    """Decompressed MiB of a file read whole (``--max-data-file-mib``)."""
    max_field_chars: int = 200_000_000
    """Characters of one field (``--max-data-field-chars``)."""
    max_field_items: int = 100_000
    """List elements of one field, e.g. a ``concat`` column (``--max-data-field-items``)."""
    pattern_seconds: float = 10.0
    """Seconds all the ``split`` patterns of one file may take (``--max-pattern-seconds``)."""
    total_pattern_seconds: float = 60.0
    """Seconds the ``split`` patterns of every file of one ``helm-run`` may take in all
    (``--max-pattern-seconds-total``)."""


_limits = DataLimits()


def configure_data_limits(limits: DataLimits) -> None:
    """Use ``limits`` for every data file read from now on (``helm-run`` calls it with its options)."""
    import csv

    global _limits, _spent_in_all
    _limits = limits
    with _spent_lock:
        _spent_in_all = 0.0
    csv.field_size_limit(limits.max_field_chars)


def data_limits() -> DataLimits:
    return _limits


def _mib(n: int) -> str:
    return f"{n / MIB:,.0f} MiB"


class _BoundedGzip(io.RawIOBase):
    """A gzip file's decompressed bytes, stopped past the ratio or the byte limit."""

    def __init__(self, path: Path, max_bytes: int | None) -> None:
        self._path = path
        self._inner = gzip.open(path, "rb")  # noqa: SIM115 (closed by close())
        size = max(path.stat().st_size, 1)
        self._ratio_bytes = max(int(size * _limits.max_decompression_ratio), _FLOOR_BYTES)
        self._max_bytes = max_bytes
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._inner.readinto(buffer)
        self._read += n
        if self._read > self._ratio_bytes:
            raise DataLimitError(
                f"{self._path}: expands more than {_limits.max_decompression_ratio:g} times its size on disk "
                f"(past {_mib(self._ratio_bytes)}): a decompression bomb? (limit: --max-data-decompression-ratio)"
            )
        if self._max_bytes is not None and self._read > self._max_bytes:
            raise DataLimitError(file_too_big(self._path, "decompressed"))
        return n

    def close(self) -> None:
        self._inner.close()
        super().close()


def file_too_big(path: Path, how: str = "") -> str:
    return (
        f"{path}: more than {_limits.max_file_mib:,} MiB of text{f' {how}' if how else ''} in a file read whole "
        "(limit: --max-data-file-mib; JSON Lines, CSV or Parquet are read row by row where a file is joined)"
    )


def open_binary(path: Path, *, whole: bool) -> io.BufferedReader:
    """``path``'s bytes (gunzipped when it ends in ``.gz``, within the ratio); ``whole``: the file is read
    whole, so its (decompressed) size is bounded by ``max_file_mib`` too."""
    max_bytes = _limits.max_file_mib * MIB if whole else None
    if path.suffix == ".gz":
        return io.BufferedReader(_BoundedGzip(path, max_bytes), buffer_size=1 << 16)
    if max_bytes is not None and path.stat().st_size > max_bytes:
        raise DataLimitError(file_too_big(path))
    return path.open("rb")


def check_field(value: Any, where: str, column: str) -> None:
    """Raise :class:`DataLimitError` when ``value`` (a cell or a computed column, nested lists and
    mappings included) holds more characters or list elements than one field may."""
    chars, items = _measure(value, 0)
    if chars > _limits.max_field_chars:
        raise DataLimitError(
            f"{where}: column {column!r} holds more than {_limits.max_field_chars:,} characters "
            "(limit: --max-data-field-chars)"
        )
    if items > _limits.max_field_items:
        raise DataLimitError(
            f"{where}: column {column!r} holds more than {_limits.max_field_items:,} list elements "
            "(limit: --max-data-field-items)"
        )


def _measure(value: Any, depth: int) -> tuple[int, int]:
    if isinstance(value, str):
        return len(value), 0
    if depth > 64:
        return 0, 0
    if isinstance(value, (list, tuple)):
        chars = items = len(value)
        for v in value:
            c, i = _measure(v, depth + 1)
            chars, items = chars + c, items + i
            if chars > _limits.max_field_chars or items > _limits.max_field_items:
                break
        return chars, items
    if isinstance(value, Mapping):
        chars = items = 0
        for v in value.values():
            c, i = _measure(v, depth + 1)
            chars, items = chars + c, items + i
        return chars, items
    return 0, 0


def bounded_lines(fh: IO[str], path: Path) -> Iterator[str]:
    """The lines of ``fh``, none longer than twice ``max_field_chars`` (a one-line file of gigabytes is
    never read into one string)."""
    most = 2 * _limits.max_field_chars
    number = 0
    while True:
        line = fh.readline(most + 1)
        if not line:
            return
        number += 1
        if len(line) > most and not line.endswith("\n"):
            raise DataLimitError(
                f"{path}:{number}: a line longer than {most:,} characters (twice the field limit: "
                "--max-data-field-chars)"
            )
        yield line


def is_null(value: Any) -> bool:
    """A missing key: ``None`` or a float NaN (never a match in a join)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


# ---------------------------------------------------------------------------
# pattern time, per file
# ---------------------------------------------------------------------------

_spent: dict[tuple[str, int, int], float] = {}
_spent_in_all = 0.0
"""Pattern seconds spent over every file since the limits were last set (one ``helm-run``)."""
_spent_lock = threading.Lock()


class PatternClock:
    """The pattern time left to one file (kept for the process: a ``--plan`` that reads the same file
    again does not get a new budget)."""

    def __init__(self, path: Path | str) -> None:
        try:
            stat = Path(path).stat()
            self._key = (str(path), stat.st_size, stat.st_mtime_ns)
        except OSError:
            self._key = (str(path), 0, 0)
        self.file = str(path)

    def _budgets_left(self) -> tuple[float, float]:
        """Seconds left to this file's own budget, and to the run's total."""
        with _spent_lock:
            return _limits.pattern_seconds - _spent.get(self._key, 0.0), _limits.total_pattern_seconds - _spent_in_all

    def left(self) -> float:
        """Seconds left: the file's own budget or the run's total, whichever is less."""
        return min(self._budgets_left())

    def add(self, seconds: float) -> None:
        global _spent_in_all
        with _spent_lock:
            _spent[self._key] = _spent.get(self._key, 0.0) + seconds
            _spent_in_all += seconds

    def exhausted(self, column: str) -> DataLimitError:
        own, overall = self._budgets_left()
        if overall < own:
            return DataLimitError(
                f"{self.file}: column {column!r}: the split patterns of this run's data files took more than "
                f"{_limits.total_pattern_seconds:g} s in all (limit: --max-pattern-seconds-total); simplify the patterns"
            )
        return DataLimitError(
            f"{self.file}: column {column!r}: the split patterns of this file took more than "
            f"{_limits.pattern_seconds:g} s in all (limit: --max-pattern-seconds); simplify the pattern"
        )

    @contextmanager
    def timing(self) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(time.perf_counter() - started)
