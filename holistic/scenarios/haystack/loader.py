"""A user's own annotated corpus: CSV (with a header) or JSON Lines.

Columns (CSV) or keys (JSONL): ``id``, ``title``, ``body``, ``company``, ``date``
(ISO ``YYYY-MM-DD``; a time part after it is ignored) and ``sentiment`` (one of
``very_negative``, ``negative``, ``neutral``, ``positive``, ``very_positive``, written
with spaces, hyphens or underscores in any case, or ``-2``..``2``). An optional
``sector`` column improves near misses for the company clause. Other columns are
ignored. ``.gz`` files are read transparently.

Every problem is reported with the file, the line and the field: a missing column
(with the nearest column name present), an empty value, a bad date or sentiment,
a duplicated id.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError, did_you_mean
from holistic.scenarios.haystack.corpus import Article, Corpus, make_corpus, parse_sentiment
from holistic.scenarios.loading.readers import iter_numbered_jsonl, open_text

REQUIRED_COLUMNS: tuple[str, ...] = ("id", "title", "body", "company", "date", "sentiment")
OPTIONAL_COLUMNS: tuple[str, ...] = ("sector",)
FORMATS: tuple[str, ...] = (".csv", ".jsonl")


def _format_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    kind = suffixes[-1] if suffixes else ""
    if kind == ".json":
        kind = ".jsonl"
    if kind not in FORMATS:
        raise DataSourceError(
            f"{path}: unsupported corpus format {kind or '(no suffix)'!r}; use .csv or .jsonl (optionally .gz)"
        )
    return kind


def _rows(path: Path, kind: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if kind == ".csv":
        with open_text(path) as fh:
            reader = csv.DictReader(fh)
            header = list(reader.fieldnames or [])
            _check_columns(path, 1, header)
            try:
                for row in reader:
                    if None in row:
                        raise DataSourceError(f"{path}:{reader.line_num}: row has more fields than the header")
                    yield reader.line_num, row
            except csv.Error as exc:
                raise DataSourceError(f"{path}:{reader.line_num}: cannot read as CSV: {exc}") from None
        return
    for number, value in iter_numbered_jsonl(path):
        _check_columns(path, number, list(value))
        yield number, value


def _check_columns(path: Path, line: int, present: list[str]) -> None:
    for column in REQUIRED_COLUMNS:
        if column not in present:
            near = did_you_mean(column, present)
            hint = f"; did you mean {near[0]!r}?" if near else f" (found: {', '.join(present) or 'none'})"
            raise DataSourceError(f"{path}:{line}: missing field {column!r}{hint}")


def _field(path: Path, line: int, row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    text = "" if value is None else str(value).strip()
    if not text:
        raise DataSourceError(f"{path}:{line}: field {name!r} is empty")
    return text


def _date(path: Path, line: int, text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        raise DataSourceError(f"{path}:{line}: field 'date' is {text!r}, expected YYYY-MM-DD") from None


def load_corpus(path: Path) -> Corpus:
    """Read and validate a user corpus (see the module docstring)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataSourceError(f"corpus file {path} does not exist")
    kind = _format_of(path)
    articles: list[Article] = []
    first_line: dict[str, int] = {}
    for line, row in _rows(path, kind):
        article_id = _field(path, line, row, "id")
        if article_id in first_line:
            raise DataSourceError(
                f"{path}:{line}: field 'id': {article_id!r} already used on line {first_line[article_id]}"
            )
        first_line[article_id] = line
        try:
            sentiment = parse_sentiment(_field(path, line, row, "sentiment"))
        except ValueError as exc:
            raise DataSourceError(f"{path}:{line}: field 'sentiment': {exc}") from None
        sector = row.get("sector")
        articles.append(
            Article(
                id=article_id,
                title=_field(path, line, row, "title"),
                body=_field(path, line, row, "body"),
                company=_field(path, line, row, "company"),
                date=_date(path, line, _field(path, line, row, "date")),
                sentiment=sentiment,
                sector=str(sector).strip() or None if sector is not None else None,
            )
        )
    if not articles:
        raise DataSourceError(f"{path}: the corpus has no articles")
    return make_corpus(path.name, articles)
