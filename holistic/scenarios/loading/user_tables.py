"""Reading a user's table files into rows: CSV, TSV, JSON, JSONL and Parquet, and the
one-value-per-line files some authors ship labels in (``lines``). Every row keeps
``file:line`` (or ``file[index]``) for error messages."""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.jsonl import numbered_json_objects
from holistic.scenarios.loading.data_limits import (
    MIB,
    DataLimitError,
    bounded_lines,
    check_field,
    data_limits,
    file_too_big,
)
from holistic.scenarios.loading.readers import first_bad_utf8_line, open_text, read_json


@dataclass(frozen=True)
class Row:
    """One source row and where it came from (for error messages)."""

    values: Mapping[str, Any]
    where: str
    """``file:line`` or ``dataset[split][index]``."""
    split: str | None = None
    """The split given by the source (a file per split, a dataset split), if any."""


LINES = "lines"
"""The format of a file holding one value per line (PIQA's ``valid-labels.lst``)."""
LINES_EXTENSIONS = (".lst", ".txt", ".labels")
FORMATS = ("csv", "tsv", "json", "jsonl", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def infer_format(path: Path, given: str | None) -> str:
    if given is not None:
        if given not in FORMATS:
            raise ValueError(f"format {given!r} is not one of {', '.join(FORMATS)}")
        return given
    suffixes = [s for s in path.suffixes if s != ".gz"]
    fmt = _EXTENSIONS.get(suffixes[-1].lower()) if suffixes else None
    if fmt is None:
        raise ValueError(f"cannot tell the format of {path.name} from its extension; set format ({', '.join(FORMATS)})")
    return fmt


def read_rows(path: Path, fmt: str, split: str | None, limit: int | None = None) -> list[Row]:
    """Every row of a table file (the first ``limit`` when given), each with ``file:line``
    (or ``file[index]``) for errors. The file is read whole, within ``--max-data-file-mib``."""
    return list(iter_rows(path, fmt, split, limit, whole=True))


def iter_rows(
    path: Path, fmt: str, split: str | None, limit: int | None = None, *, whole: bool = False
) -> Iterator[Row]:
    """The rows of a table file one at a time (a JSON document is still parsed whole, so it is bounded by
    ``--max-data-file-mib``); every field within ``--max-data-field-chars`` (see
    :mod:`~holistic.scenarios.loading.data_limits`)."""
    for row in _iter_rows(path, fmt, split, limit, whole):
        for column, value in row.values.items():
            if not isinstance(value, (int, float, bool)) and value is not None:
                check_field(value, row.where, str(column))
        yield row


def _iter_rows(path: Path, fmt: str, split: str | None, limit: int | None, whole: bool) -> Iterator[Row]:
    if fmt in ("csv", "tsv"):
        with open_text(path, whole=whole) as fh:
            reader = csv.DictReader(fh, delimiter="\t" if fmt == "tsv" else ",")
            try:
                for values in itertools.islice(reader, limit):
                    if None in values:
                        raise DataSourceError(f"{path}:{reader.line_num}: more fields than the header has columns")
                    yield Row(values, f"{path}:{reader.line_num}", split)
            except csv.Error as exc:
                if "field larger than field limit" in str(exc):
                    raise DataLimitError(
                        f"{path}:{reader.line_num + 1}: a field of this line holds more than "
                        f"{data_limits().max_field_chars:,} characters (limit: --max-data-field-chars)"
                    ) from None
                raise DataSourceError(f"{path}:{reader.line_num}: {exc}") from None
            except UnicodeDecodeError as exc:
                line = first_bad_utf8_line(path) or reader.line_num + 1
                raise DataSourceError(f"{path}:{line}: not UTF-8 text ({exc.reason}); save the file as UTF-8") from None
        return
    if fmt == "jsonl":
        with open_text(path, whole=whole) as fh:
            numbered = itertools.islice(numbered_json_objects(bounded_lines(fh, path), path, DataSourceError), limit)
            yield from (Row(values, f"{path}:{number}", split) for number, values in numbered)
        return
    if fmt == "json":
        data = read_json(path)
        if isinstance(data, Mapping):
            lists = [v for v in data.values() if isinstance(v, list)]
            if len(lists) != 1:
                raise DataSourceError(f"{path}: expected a list of objects (or an object holding exactly one list)")
            data = lists[0]
        if not isinstance(data, list) or not all(isinstance(v, Mapping) for v in data):
            raise DataSourceError(f"{path}: expected a list of objects")
        yield from (Row(values, f"{path}[{i}]", split) for i, values in enumerate(data[:limit]))
        return
    import pyarrow.parquet as pq

    if whole and path.stat().st_size > data_limits().max_file_mib * MIB:
        raise DataLimitError(file_too_big(path))
    index = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=max(min(limit or 1024, 1024), 1)):
        for values in batch.to_pylist():
            if limit is not None and index >= limit:
                return
            yield Row(values, f"{path}[row {index}]", split)
            index += 1


def read_lines(path: Path, limit: int | None = None) -> list[Row]:
    """A lines file: one value per line (the line without its end), ``file:line`` for errors.
    A final empty line (a file ending in a newline) is not a row."""
    return list(iter_table(path, LINES, limit))


def read_table(path: Path, fmt: str, limit: int | None = None) -> list[Row]:
    """The rows of ``path`` in ``fmt``: a table format, or :data:`LINES` (the value of each
    line under the column ``value``)."""
    return read_lines(path, limit) if fmt == LINES else read_rows(path, fmt, None, limit)


def iter_table(path: Path, fmt: str, limit: int | None = None) -> Iterator[Row]:
    """:func:`read_table`'s rows one at a time, the file streamed (a joined file is never held whole)."""
    if fmt != LINES:
        yield from iter_rows(path, fmt, None, limit)
        return
    with open_text(path) as fh:
        number = 0
        try:
            for number, line in enumerate(itertools.islice(bounded_lines(fh, path), limit), start=1):
                value = line.rstrip("\r\n")
                check_field(value, f"{path}:{number}", "value")
                yield Row({"value": value}, f"{path}:{number}")
        except UnicodeDecodeError as exc:
            raise DataSourceError(f"{path}:{number + 1}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None
