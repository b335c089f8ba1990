"""Shaping a user's rows in YAML before the field mapping reads them: new columns
computed from each row, and columns joined from a second file.

A dataset as its authors ship it rarely has one column per field. ``columns`` adds
named columns, computed in the order written (a later one may read an earlier one),
each by one declarative operation — nothing in a spec runs code:

- ``{split: PATH, sep: "; "}`` — the text at a field path cut into a list at every
  ``sep``; or ``{split: PATH, pattern: '\\s*\\([A-D]\\)\\s*'}`` at every match of a
  regular expression (no capturing groups; matched with a time limit). Parts are
  stripped of surrounding white space and empty parts dropped; ``skip: N`` then drops
  the first N (OpenBookQA's ``stem (A) … (B) …`` with ``skip: 1`` gives the choices).
- ``{concat: [PATH, ...]}`` — one list of every value in order: a scalar adds itself,
  a list adds its elements (TruthfulQA's best answer, then its incorrect answers).
- ``{template: "..."}`` — a string rendered by the sandboxed Jinja2 environment over
  the row (``{{ sentence.split('_', 1)[0] }}{{ option1 }}``).
- ``{value: X}`` — the same value on every row (the position of a correct choice that
  ``concat`` put first: ``{value: 0}`` with ``label_format: index0``).

``join`` (the ``file`` scenario) adds columns read from another file, the way PIQA
ships its labels beside its questions:

- ``{path: valid-labels.lst, column: label}`` — a ``lines`` file (``.lst``, ``.txt``,
  or ``format: lines``): the n-th line is the value of ``column`` on the n-th row;
- ``{path: extra.csv, key: id}`` — a table (any ``file`` format), joined on a key column
  both files have (``right_key`` names the other file's column when it differs), or by
  row number with ``key: line`` (the default); its columns are added under ``prefix``.
  A null or NaN key never matches. The joined file is streamed: by key, only the rows
  the data needs are kept. (``key`` was spelled ``on``, which YAML 1.1 reads as ``true``;
  ``on`` and ``right_on`` are errors that say so.)

``path`` may map splits to files like the main ``path`` (``{train: train-labels.lst,
valid: valid-labels.lst}``). Row counts that differ, a key missing or repeated, a
column that would overwrite one the row has: each is an error naming the file and line.
Field sizes and pattern time are bounded per file (:mod:`~holistic.scenarios.loading.data_limits`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError, did_you_mean
from holistic.scenarios.loading.data_limits import PatternClock, check_field, is_null
from holistic.scenarios.loading.field_paths import FieldPath, FieldPathError
from holistic.scenarios.loading.user_fields import compile_row_template
from holistic.scenarios.loading.user_tables import FORMATS, LINES, LINES_EXTENSIONS, Row, infer_format

COLUMN_OPERATIONS = ("split", "concat", "template", "value")
_SPLIT_KEYS = frozenset({"split", "sep", "pattern", "skip"})
_MAX_PATTERN = 500
_REGEX_TIMEOUT_S = 1.0
JOIN_KEYS = ("path", "format", "column", "key", "right_key", "prefix")
RETIRED_JOIN_KEYS = {"on": "key", "right_on": "right_key"}
"""Join keys earlier versions spelled otherwise: a bare ``on:`` is read by YAML 1.1 as ``true:``, so the
README's own ``on: qid`` never worked; ``key`` cannot be misread."""

COLUMNS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "New columns computed from each row, in order: {split: PATH, sep|pattern, skip}, "
    "{concat: [PATH, ...]}, {template: JINJA}, or {value: X}.",
    "additionalProperties": {
        "type": "object",
        "properties": {
            "split": {"type": "string"},
            "sep": {"type": "string", "minLength": 1},
            "pattern": {"type": "string", "minLength": 1},
            "skip": {"type": "integer", "minimum": 0},
            "concat": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "template": {"type": "string"},
            "value": {"type": ["string", "number", "boolean"]},
        },
        "additionalProperties": False,
    },
}
JOIN_SCHEMA: dict[str, Any] = {
    "type": "array",
    "description": "Columns read from other files: a lines file (one value per line, into `column`) or a table, "
    "matched by row number (key: line) or by a key column (key: KEY, right_key: ITS KEY; null and NaN keys "
    "never match).",
    "items": {
        "type": "object",
        "properties": {
            "path": {"type": ["string", "object"], "x-path": True},
            "format": {"type": "string"},
            "column": {"type": "string", "minLength": 1},
            "key": {"type": "string", "minLength": 1, "default": "line"},
            "right_key": {"type": "string", "minLength": 1},
            "prefix": {"type": "string"},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
}


@dataclass(frozen=True)
class Column:
    """One computed column: ``name`` and the operation that makes it."""

    name: str
    operation: str
    spec: Mapping[str, Any]
    render: Callable[[Mapping[str, Any]], str] | None = field(default=None, compare=False)
    pattern: Any = field(default=None, compare=False)
    """The compiled ``regex`` pattern of a ``split`` by pattern."""

    @staticmethod
    def parse(name: str, spec: Any) -> Column:
        where = f"columns.{name}"
        if not isinstance(spec, Mapping):
            raise ValueError(f"{where}: expected a mapping with one of {', '.join(COLUMN_OPERATIONS)}, got {spec!r}")
        operations = [op for op in COLUMN_OPERATIONS if op in spec]
        if len(operations) != 1:
            unknown = [k for k in spec if k not in (*COLUMN_OPERATIONS, *_SPLIT_KEYS)]
            if unknown:
                near = did_you_mean(str(unknown[0]), [*COLUMN_OPERATIONS, *_SPLIT_KEYS])
                hint = f"; did you mean {near[0]!r}?" if near else ""
                raise ValueError(f"{where}: unknown key {unknown[0]!r}{hint}")
            found = f"got {', '.join(operations)}" if operations else "got none"
            raise ValueError(f"{where}: give exactly one of {', '.join(COLUMN_OPERATIONS)} ({found})")
        operation = operations[0]
        allowed = _SPLIT_KEYS if operation == "split" else {operation}
        extra = [k for k in spec if k not in allowed]
        if extra:
            raise ValueError(
                f"{where}: {extra[0]!r} does not apply to {operation} (keys: {', '.join(sorted(allowed))})"
            )
        if operation == "split":
            return _parse_split(name, spec, where)
        if operation == "concat":
            parts = spec["concat"]
            if not isinstance(parts, list) or not parts:
                raise ValueError(f"{where}.concat: expected a non-empty list of field paths, got {parts!r}")
            for path in parts:
                _check_path(path, f"{where}.concat")
            return Column(name, operation, dict(spec))
        if operation == "template":
            if not isinstance(spec["template"], str):
                raise ValueError(f"{where}.template: expected a string")
            return Column(
                name, operation, dict(spec), render=compile_row_template(spec["template"], f"{where}.template")
            )
        value = spec["value"]
        if not isinstance(value, (str, int, float, bool)):
            raise ValueError(f"{where}.value: expected a string, number or boolean, got {value!r}")
        return Column(name, operation, dict(spec))

    def compute(self, values: Mapping[str, Any], where: str, clock: PatternClock | None = None) -> Any:
        """This column's value on one row (``where`` names the row in errors; ``clock``: the pattern time
        left to the row's file)."""
        at = f"{where}: columns.{self.name}"
        if self.operation == "value":
            return self.spec["value"]
        if self.operation == "template":
            assert self.render is not None
            try:
                return self.render(values)
            except DataSourceError as exc:
                raise DataSourceError(f"{at}: {exc}") from None
        if self.operation == "concat":
            out: list[Any] = []
            for path in self.spec["concat"]:
                value = _get(values, path, at)
                out.extend(value if isinstance(value, (list, tuple)) else [value])
            return out
        return self._split(values, at, clock)

    def _split(self, values: Mapping[str, Any], at: str, clock: PatternClock | None) -> list[str]:
        text = _get(values, self.spec["split"], at)
        if not isinstance(text, str):
            raise DataSourceError(f"{at}: {self.spec['split']!r} holds {type(text).__name__} {text!r}, not text")
        if self.pattern is not None:
            left = clock.left() if clock is not None else _REGEX_TIMEOUT_S
            if left <= 0 and clock is not None:
                raise clock.exhausted(self.name)
            try:
                with clock.timing() if clock is not None else contextlib.nullcontext():
                    parts = self.pattern.split(text, timeout=min(_REGEX_TIMEOUT_S, left))
            except TimeoutError:
                if clock is not None and left < _REGEX_TIMEOUT_S:
                    raise clock.exhausted(self.name) from None
                raise DataSourceError(
                    f"{at}: the pattern took more than {_REGEX_TIMEOUT_S:g} s on this row; simplify it"
                ) from None
        else:
            parts = text.split(self.spec["sep"])
        kept = [p.strip() for p in parts if p.strip()]
        return kept[int(self.spec.get("skip", 0)) :]


def _parse_split(name: str, spec: Mapping[str, Any], where: str) -> Column:
    _check_path(spec["split"], f"{where}.split")
    if ("sep" in spec) == ("pattern" in spec):
        raise ValueError(f"{where}: a split needs exactly one of sep (a separator) or pattern (a regular expression)")
    skip = spec.get("skip", 0)
    if isinstance(skip, bool) or not isinstance(skip, int) or skip < 0:
        raise ValueError(f"{where}.skip: expected a non-negative integer, got {skip!r}")
    if "sep" in spec:
        if not isinstance(spec["sep"], str) or not spec["sep"]:
            raise ValueError(f"{where}.sep: expected a non-empty string")
        return Column(name, "split", dict(spec))
    import regex

    source = spec["pattern"]
    if not isinstance(source, str) or not source or len(source) > _MAX_PATTERN:
        raise ValueError(f"{where}.pattern: expected a regular expression of 1 to {_MAX_PATTERN} characters")
    try:
        compiled = regex.compile(source)
    except regex.error as exc:
        raise ValueError(f"{where}.pattern: not a valid regular expression: {exc}") from None
    if compiled.groups:
        raise ValueError(
            f"{where}.pattern: capturing groups would add their matches to the parts; write (?:...) instead of (...)"
        )
    if compiled.search(""):
        raise ValueError(f"{where}.pattern: it matches the empty string, so it cannot separate parts")
    return Column(name, "split", dict(spec), pattern=compiled)


def _check_path(path: Any, where: str) -> None:
    try:
        FieldPath.parse(path)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _get(values: Mapping[str, Any], path: str, at: str) -> Any:
    try:
        return FieldPath.parse(path).get(values)
    except FieldPathError as exc:
        raise DataSourceError(f"{at}: {exc}") from None


def parse_columns(spec: Mapping[str, Any] | None) -> tuple[Column, ...]:
    """The ``columns`` argument, validated (``ValueError`` naming ``columns.<name>``)."""
    if spec is None:
        return ()
    if not isinstance(spec, Mapping):
        raise ValueError(f"columns: expected a mapping of new column names to operations, got {spec!r}")
    return tuple(Column.parse(str(name), op) for name, op in spec.items())


def add_columns(rows: Sequence[Row], columns: Sequence[Column], source: Path | str | None = None) -> list[Row]:
    """``rows`` with every computed column added (in order); a clash with a column the
    row already has is an error naming the row. Each value is held to the field limits, and the
    ``split`` patterns to the pattern time of ``source`` (the rows' file; see
    :mod:`~holistic.scenarios.loading.data_limits`)."""
    if not columns:
        return list(rows)
    clock = PatternClock(source) if source is not None and any(c.pattern is not None for c in columns) else None
    out = []
    for row in rows:
        values = dict(row.values)
        for column in columns:
            if column.name in values:
                raise DataSourceError(
                    f"{row.where}: columns.{column.name}: the row already has a column {column.name!r}; "
                    "give the new column another name"
                )
            value = column.compute(values, row.where, clock)
            check_field(value, row.where, column.name)
            values[column.name] = value
        out.append(replace(row, values=values))
    return out


# ---------------------------------------------------------------------------
# joins
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Join:
    """One ``join`` entry, validated."""

    paths: Mapping[str | None, str]
    """Split (``None`` for one file for every row) -> file."""
    format: str
    column: str | None
    key: str
    """The key column of the rows (``line``: joined by row number)."""
    right_key: str
    """The key column of the joined file."""
    prefix: str

    @staticmethod
    def parse(index: int, spec: Any, split_names: Callable[[str], str | None]) -> Join:
        where = f"join[{index}]"
        if not isinstance(spec, Mapping) or "path" not in spec:
            raise ValueError(f"{where}: expected a mapping with at least path, got {spec!r}")
        retired = next((k for k in spec if k in (True, "True") or k in RETIRED_JOIN_KEYS), None)
        if retired is not None:
            raise ValueError(f"{where}: {retired_join_key(retired)}")
        unknown = [k for k in spec if k not in JOIN_KEYS]
        if unknown:
            near = did_you_mean(str(unknown[0]), JOIN_KEYS)
            hint = f"; did you mean {near[0]!r}?" if near else f"; keys: {', '.join(JOIN_KEYS)}"
            raise ValueError(f"{where}: unknown key {unknown[0]!r}{hint}")
        raw = spec["path"]
        paths: dict[str | None, str] = {}
        if isinstance(raw, Mapping):
            for split, file in raw.items():
                target = split_names(str(split))
                if target is None:
                    raise ValueError(f"{where}.path: {split!r} is not a split name (train, dev, valid, test...)")
                paths[target] = str(file)
        elif isinstance(raw, str) and raw:
            paths[None] = raw
        else:
            raise ValueError(f"{where}.path: expected a file path or a mapping of splits to files")
        formats = {_join_format(Path(p), spec.get("format"), where) for p in paths.values()}
        if len(formats) != 1:
            raise ValueError(f"{where}: every file of one join must have the same format; set format")
        fmt = formats.pop()
        on = str(spec.get("key", "line"))
        column = spec.get("column")
        if fmt == LINES:
            if not column:
                raise ValueError(f"{where}: a lines file needs column (the name its values take)")
            if on != "line" or "right_key" in spec:
                raise ValueError(f"{where}: a lines file has no columns to join on; it joins by line (key: line)")
            if "prefix" in spec:
                raise ValueError(f"{where}: prefix applies to a table's columns; a lines file gives one column")
        elif column is not None:
            raise ValueError(f"{where}: column names a lines file's values; a table's columns keep their names")
        right_on = str(spec.get("right_key", on))
        if on == "line" and "right_key" in spec:
            raise ValueError(f"{where}: right_key needs key (a key column); key: line joins by row number")
        return Join(paths, fmt, str(column) if column else None, on, right_on, str(spec.get("prefix", "")))

    def file_for(self, split: str | None) -> str | None:
        """The file joined to the rows of ``split`` (the main file's split, ``None`` for one file)."""
        if None in self.paths:
            return self.paths[None]
        return self.paths.get(split) if split is not None else None


def retired_join_key(key: Any) -> str:
    """The message for a join key spelled as earlier versions did (``on``, ``right_on``, or ``true``: YAML 1.1's
    reading of a bare ``on``)."""
    if key in (True, "True"):
        return (
            "a key read as true: YAML 1.1 reads a bare 'on:' as 'true:', so the join key is now spelled 'key' "
            "(write key: qid, and right_key: for the other file's column)"
        )
    return f"{key!r} is no longer accepted: it is now spelled {RETIRED_JOIN_KEYS[key]!r}"


def _join_format(path: Path, given: Any, where: str) -> str:
    if given is not None:
        if given != LINES and given not in FORMATS:
            raise ValueError(f"{where}.format: {given!r} is not one of {', '.join((LINES, *FORMATS))}")
        return str(given)
    suffixes = [s for s in path.suffixes if s != ".gz"]
    if suffixes and suffixes[-1].lower() in LINES_EXTENSIONS:
        return LINES
    try:
        return infer_format(path, None)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}; or format: lines for one value per line") from None


def parse_joins(spec: Any, split_names: Callable[[str], str | None]) -> tuple[Join, ...]:
    if spec is None:
        return ()
    if not isinstance(spec, list):
        raise ValueError(f"join: expected a list of files to join, got {spec!r}")
    return tuple(Join.parse(i, entry, split_names) for i, entry in enumerate(spec))


def join_rows(rows: Sequence[Row], join: Join, right: Iterable[Row], right_file: str, *, complete: bool) -> list[Row]:
    """``rows`` with the columns of ``right`` (the joined file's rows, streamed) added.

    By line, the two files are read side by side. By key, only the rows of ``right`` whose key
    one of ``rows`` needs are kept (the joined file is never held whole); a needed key that repeats
    is an error. A null or NaN key never matches. ``complete`` is false when only the first rows were
    read (``--plan``), so a difference in row counts or a missing key cannot be told yet.
    """
    if join.key == "line":
        pairs = _pairs_by_line(rows, right, right_file, complete=complete)
    else:
        pairs = _pairs_by_key(rows, join, right, right_file, complete=complete)
    out = []
    for row, other in pairs:
        values = dict(row.values)
        extra = {join.column: other.values["value"]} if join.column else _prefixed(other, join)
        for name, value in extra.items():
            if name in values:
                raise DataSourceError(
                    f"{row.where}: joining {other.where} would overwrite the column {name!r}; set a prefix"
                )
            values[name] = value
        out.append(replace(row, values=values))
    return out


def _pairs_by_line(
    rows: Sequence[Row], right: Iterable[Row], right_file: str, *, complete: bool
) -> list[tuple[Row, Row]]:
    pairs: list[tuple[Row, Row]] = []
    others = iter(right)
    for row in rows:
        other = next(others, None)
        if other is None:
            if complete:
                raise DataSourceError(
                    f"{right_file}: has {len(pairs)} rows, but the file it is joined to by line has {len(rows)}"
                )
            break
        pairs.append((row, other))
    if complete and next(others, None) is not None:
        extra = 1 + sum(1 for _ in others)
        raise DataSourceError(
            f"{right_file}: has {len(rows) + extra} rows, but the file it is joined to by line has {len(rows)}"
        )
    return pairs


def _pairs_by_key(
    rows: Sequence[Row], join: Join, right: Iterable[Row], right_file: str, *, complete: bool
) -> list[tuple[Row, Row]]:
    wanted: dict[str, list[Row]] = {}
    for row in rows:
        key = _key(row, join.key)
        if key is None:
            if complete:
                raise DataSourceError(
                    f"{row.where}: the key {join.key}={row.values[join.key]!r} is null; a null or NaN key "
                    f"matches no row of {right_file}"
                )
            continue
        wanted.setdefault(key, []).append(row)
    index: dict[str, Row] = {}
    for other in right:
        key = _key(other, join.right_key)
        if key is None or key not in wanted:
            continue  # a null key never matches; a row no one needs is not kept
        if key in index:
            raise DataSourceError(f"{other.where}: key {join.right_key}={key!r} repeats {index[key].where}")
        index[key] = other
    pairs = []
    for row in rows:
        key = _key(row, join.key)
        if key is None:
            continue
        if key not in index:
            if not complete:
                continue
            raise DataSourceError(f"{row.where}: no row of {right_file} has {join.right_key}={key!r}")
        pairs.append((row, index[key]))
    return pairs


def _prefixed(other: Row, join: Join) -> dict[str, Any]:
    return {f"{join.prefix}{k}": v for k, v in other.values.items() if join.key == "line" or k != join.right_key}


def _key(row: Row, column: str) -> str | None:
    """The row's key as text; ``None`` for a null or NaN key, which never matches (not the text
    ``"None"`` or ``"nan"``)."""
    if column not in row.values:
        near = did_you_mean(column, [str(k) for k in row.values])
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise DataSourceError(f"{row.where}: no key column {column!r}{hint}")
    value = row.values[column]
    return None if is_null(value) else str(value)
