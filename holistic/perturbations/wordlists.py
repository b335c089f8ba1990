"""Load the word lists shipped as data files inside the package.

Format (all lists): UTF-8 text, one entry per line, tab-separated columns.
Lines starting with ``#`` are comments; every file starts with a ``# source:``
header naming the published resource it follows. Blank lines are ignored.
A malformed line raises :class:`WordListError` naming the file and line.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from holistic.core.errors import HolisticError


class WordListError(HolisticError):
    """A shipped word list is malformed (names the file and line)."""


def _data_file_text(package: str, filename: str) -> str:
    try:
        return resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WordListError(f"word list {filename!r} is missing from package {package!r}") from None


@cache
def read_rows(package: str, filename: str, columns: int) -> tuple[tuple[str, ...], ...]:
    """Rows of a tab-separated list with exactly ``columns`` columns.

    Requires a ``# source:`` header so every list names where it comes from.
    """
    text = _data_file_text(package, filename)
    rows: list[tuple[str, ...]] = []
    has_source = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\n")
        if line.startswith("#"):
            has_source = has_source or line.lower().startswith("# source:")
            continue
        if not line.strip():
            continue
        cells = tuple(cell.strip() for cell in line.split("\t"))
        if len(cells) != columns or not all(cells):
            raise WordListError(
                f"{package}/{filename}:{lineno}: expected {columns} non-empty tab-separated "
                f"column(s), got {len(cells)}: {line!r}"
            )
        rows.append(cells)
    if not has_source:
        raise WordListError(f"{package}/{filename}: missing the '# source:' header line")
    return tuple(rows)


def read_mapping(package: str, filename: str) -> dict[str, tuple[str, ...]]:
    """A two-column list ``key<TAB>value1,value2,...`` as a dict (keys lower-cased).

    A key listed twice merges its values (in file order, without duplicates).
    """
    out: dict[str, list[str]] = {}
    for key, values in read_rows(package, filename, 2):
        bucket = out.setdefault(key.lower(), [])
        for value in values.split(","):
            value = value.strip()
            if value and value not in bucket:
                bucket.append(value)
    return {k: tuple(v) for k, v in out.items()}
