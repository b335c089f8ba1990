"""Reading relational tables the way HELM's entity scenarios see them (through pandas).

HELM serialises table rows as ``column: value`` with the value as pandas prints it
after ``read_csv``: a column is typed as a whole, so a column of whole numbers with
one missing cell becomes floats (``1599`` prints ``1599.0``), a missing cell prints
``nan``, and text prints as written. :func:`read_table` reproduces that typing
without pandas: missing markers are pandas' defaults, and a column is integer,
float, boolean or text by the same rules.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.scenarios.loading.readers import open_text

MISSING = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)
"""The cell texts pandas reads as missing by default."""

NAN_TEXT = "nan"
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity)$", re.IGNORECASE)
_BOOLS = {"True": "True", "TRUE": "True", "true": "True", "False": "False", "FALSE": "False", "false": "False"}


def _render_column(cells: Sequence[str]) -> list[str]:
    """Each cell of one column as pandas prints it after typing the column as a whole."""
    present = [c for c in cells if c not in MISSING]
    if present and all(_INT.match(c) for c in present) and len(present) == len(cells):
        return [str(int(c)) for c in cells]
    if present and all(_INT.match(c) or _FLOAT.match(c) for c in present):
        return [NAN_TEXT if c in MISSING else repr(float(c)) for c in cells]
    if present and len(present) == len(cells) and all(c in _BOOLS for c in present):
        return [_BOOLS[c] for c in cells]
    return [NAN_TEXT if c in MISSING else c for c in cells]


@dataclass(frozen=True)
class Table:
    """A table read from CSV: its columns and, per row, the cells as pandas would print them."""

    path: Path
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    lines: tuple[int, ...]
    """The line each row starts on (for error messages)."""

    def column(self, name: str) -> int:
        if name not in self.columns:
            raise DataSourceError(f"{self.path}: no column {name!r}; columns: {', '.join(self.columns)}")
        return self.columns.index(name)

    def records(self) -> Iterable[tuple[int, dict[str, str]]]:
        """(line, {column: printed value}) for every row."""
        for line, row in zip(self.lines, self.rows, strict=True):
            yield line, dict(zip(self.columns, row, strict=True))


def table_from_rows(path: Path, header: Sequence[str], raw: Sequence[tuple[int, Sequence[str]]]) -> Table:
    """Type the columns of already split rows; a row with the wrong number of cells names its line."""
    width = len(header)
    for line, cells in raw:
        if len(cells) != width:
            raise DataSourceError(f"{path}:{line}: {len(cells)} fields, the header has {width}")
    rendered = [_render_column([cells[i] for _, cells in raw]) for i in range(width)]
    rows = tuple(tuple(rendered[i][r] for i in range(width)) for r in range(len(raw)))
    return Table(path, tuple(header), rows, tuple(line for line, _ in raw))


def read_table(path: Path, encoding: str = "utf-8-sig") -> Table:
    """A CSV file with a header line (quoted cells may span lines)."""
    try:
        with open_text(path, encoding) as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise DataSourceError(f"{path}: empty file, expected a header line")
            raw: list[tuple[int, list[str]]] = []
            start = reader.line_num + 1
            for cells in reader:
                if cells:
                    raw.append((start, cells))
                start = reader.line_num + 1
    except (csv.Error, UnicodeDecodeError) as exc:
        raise DataSourceError(f"{path}: cannot read as CSV: {exc}") from None
    return table_from_rows(path, header, raw)


def serialise(record: dict[str, str], columns: Sequence[str]) -> str:
    """HELM's row text: ``col: value`` per column (each stripped), joined by ``. ``."""
    return ". ".join(f"{c}: {record[c]}".strip() for c in columns)
