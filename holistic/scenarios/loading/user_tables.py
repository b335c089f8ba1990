"""Reading a user's table files into rows: CSV, TSV, JSON, JSONL and Parquet, and the
one-value-per-line files some authors ship labels in (``lines``). Every row keeps
``file:line`` (or ``file[index]``) for error messages."""

from __future__ import annotations

import csv
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.scenarios.loading.readers import first_bad_utf8_line, iter_numbered_jsonl, open_text, read_json


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
    (or ``file[index]``) for errors."""
    if fmt in ("csv", "tsv"):
        with open_text(path) as fh:
            reader = csv.DictReader(fh, delimiter="\t" if fmt == "tsv" else ",")
            rows = []
            try:
                for values in itertools.islice(reader, limit):
                    if None in values:
                        raise DataSourceError(f"{path}:{reader.line_num}: more fields than the header has columns")
                    rows.append(Row(values, f"{path}:{reader.line_num}", split))
            except csv.Error as exc:
                raise DataSourceError(f"{path}:{reader.line_num}: {exc}") from None
            except UnicodeDecodeError as exc:
                line = first_bad_utf8_line(path) or reader.line_num + 1
                raise DataSourceError(f"{path}:{line}: not UTF-8 text ({exc.reason}); save the file as UTF-8") from None
            return rows
    if fmt == "jsonl":
        numbered = itertools.islice(iter_numbered_jsonl(path), limit)
        return [Row(values, f"{path}:{number}", split) for number, values in numbered]
    if fmt == "json":
        data = read_json(path)
        if isinstance(data, Mapping):
            lists = [v for v in data.values() if isinstance(v, list)]
            if len(lists) != 1:
                raise DataSourceError(f"{path}: expected a list of objects (or an object holding exactly one list)")
            data = lists[0]
        if not isinstance(data, list) or not all(isinstance(v, Mapping) for v in data):
            raise DataSourceError(f"{path}: expected a list of objects")
        return [Row(values, f"{path}[{i}]", split) for i, values in enumerate(data[:limit])]
    import pyarrow.parquet as pq

    if limit is not None:
        batch = next(pq.ParquetFile(path).iter_batches(batch_size=max(limit, 1)), None)
        values_list = batch.to_pylist()[:limit] if batch is not None else []
    else:
        values_list = pq.read_table(path).to_pylist()
    return [Row(values, f"{path}[row {i}]", split) for i, values in enumerate(values_list)]


def read_lines(path: Path, limit: int | None = None) -> list[Row]:
    """A lines file: one value per line (the line without its end), ``file:line`` for errors.
    A final empty line (a file ending in a newline) is not a row."""
    rows: list[Row] = []
    with open_text(path) as fh:
        try:
            for number, line in enumerate(fh, start=1):
                if limit is not None and len(rows) >= limit:
                    break
                rows.append(Row({"value": line.rstrip("\r\n")}, f"{path}:{number}"))
        except UnicodeDecodeError as exc:
            raise DataSourceError(f"{path}:{len(rows) + 1}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None
    return rows


def read_table(path: Path, fmt: str, limit: int | None = None) -> list[Row]:
    """The rows of ``path`` in ``fmt``: a table format, or :data:`LINES` (the value of each
    line under the column ``value``)."""
    return read_lines(path, limit) if fmt == LINES else read_rows(path, fmt, None, limit)
