"""Readers for the file formats benchmark authors ship, with errors that name file and line.

Text is always decoded as UTF-8 (a byte-order mark is dropped); right-to-left and
non-Latin text passes through untouched.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from holistic.core.errors import DataSourceError
from holistic.core.jsonl import numbered_json_objects
from holistic.scenarios.loading.data_limits import data_limits, open_binary

# Some benchmark CSVs hold whole articles in one field: up to the field limit (200 M characters by default).
# The limits in force are kept (a helm-run sets its options before this module is first imported).
csv.field_size_limit(data_limits().max_field_chars)


def open_text(path: Path, encoding: str = "utf-8-sig", *, whole: bool = False) -> IO[str]:
    """Open a text file (transparently gunzipped when it ends in ``.gz``, within the decompression
    ratio of :mod:`~holistic.scenarios.loading.data_limits`); ``whole``: it will be read whole, so its
    size is bounded too."""
    return io.TextIOWrapper(open_binary(path, whole=whole), encoding=encoding, newline="")


def first_bad_utf8_line(path: Path) -> int | None:
    """The 1-based line of the first byte of ``path`` (gunzipped) that is not UTF-8, or ``None``.

    A text reader decodes a whole buffer at once, so its own position says where the buffer
    began (often line 1), not where the bad byte is."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    lines = 0
    with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                return lines + block.count(b"\n", 0, max(exc.start, 0)) + 1
            lines += block.count(b"\n")
    return None


def read_csv_rows(path: Path, *, delimiter: str = ",", encoding: str = "utf-8-sig") -> list[list[str]]:
    """All rows of a header-less CSV (quoted fields may span lines)."""
    try:
        with open_text(path, encoding) as fh:
            return [row for row in csv.reader(fh, delimiter=delimiter) if row]
    except (csv.Error, UnicodeDecodeError) as exc:
        raise DataSourceError(f"{path}: cannot read as CSV: {exc}") from None


def read_csv_dicts(path: Path, *, delimiter: str = ",", encoding: str = "utf-8-sig") -> list[dict[str, str]]:
    """All rows of a CSV with a header line, as dicts keyed by column name."""
    try:
        with open_text(path, encoding) as fh:
            reader = csv.DictReader(fh, delimiter=delimiter)
            rows = []
            for row in reader:
                if None in row:
                    raise DataSourceError(
                        f"{path}:{reader.line_num}: row has more fields than the header ({len(reader.fieldnames or [])})"
                    )
                rows.append({k: (v if v is not None else "") for k, v in row.items()})
            return rows
    except (csv.Error, UnicodeDecodeError) as exc:
        raise DataSourceError(f"{path}: cannot read as CSV: {exc}") from None


def iter_numbered_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each line of a JSON Lines file (blank lines skipped); a bad line names its number."""
    with open_text(path) as fh:
        yield from numbered_json_objects(fh, path, DataSourceError)


def iter_located_jsonl(path: Path) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, ``path:line`` for messages, object) of each line of a JSON Lines file
    (blank lines skipped, so the number is the file's own line, not the object's position)."""
    for number, value in iter_numbered_jsonl(path):
        yield number, f"{path}:{number}", value


def read_json(path: Path) -> Any:
    with open_text(path, whole=True) as fh:
        try:
            return json.load(fh)
        except json.JSONDecodeError as exc:
            raise DataSourceError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None


def require(row: dict[str, Any], key: str, where: str) -> Any:
    """``row[key]``, or a clear error naming the file/line and the keys that exist."""
    if key not in row:
        raise DataSourceError(f"{where}: missing field {key!r}; fields present: {', '.join(sorted(row))}")
    return row[key]


def require_text(row: dict[str, Any], key: str, where: str) -> str:
    """``row[key]`` (see :func:`require`), which must be a non-empty string."""
    value = require(row, key, where)
    if not isinstance(value, str) or not value.strip():
        raise DataSourceError(f"{where}: field {key!r} must be a non-empty string")
    return value
