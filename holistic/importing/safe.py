"""Reading other tools' files as hostile input: bounded sizes, strict UTF-8, strict JSON.

Every failure is an :class:`ImportFileError` (exit 2) naming the file, the line or member when
there is one, and what is wrong; nothing here raises anything else for bad bytes.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from holistic.core.errors import HolisticError

MAX_JSON_BYTES = 256 * 1024 * 1024
"""Largest JSON file (or ``.eval`` member) read whole."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest line of a JSON-lines file (one lm-eval document with its requests and responses)."""
MAX_EVAL_TOTAL = 1024 * 1024 * 1024
"""Largest total uncompressed size of an ``.eval`` archive's members."""
MAX_EVAL_MEMBERS = 100_000
"""Most members an ``.eval`` archive may have."""
MAX_RATIO = 200
"""Largest compression ratio of an ``.eval`` member above 1 MB (a zip bomb's is in the thousands)."""
MAX_DEPTH = 200
"""Deepest nesting of JSON arrays and objects."""


class ImportFileError(HolisticError):
    """A file of another tool that is missing, truncated, too large or not what that tool writes."""

    exit_code = 2

    def __init__(self, path: Path | str, problem: str, *, where: str | None = None) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}" + (f": {where}" if where else "") + f": {problem}")


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _depth(value: Any) -> int:
    depth, level = 0, [value]
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return depth
        nxt: list[Any] = []
        for v in level:
            if isinstance(v, dict):
                nxt.extend(v.values())
            elif isinstance(v, list):
                nxt.extend(v)
        level = nxt
    return depth


def parse_json(data: bytes, path: Path | str, *, where: str | None = None, allow_nan: bool = False) -> Any:
    """``data`` as JSON: strict UTF-8, no NaN/Infinity unless ``allow_nan`` (then they read as None)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFileError(
            path, f"not UTF-8: byte {exc.start} is {data[exc.start : exc.start + 1]!r}", where=where
        ) from None
    try:
        value = json.loads(text, parse_constant=(lambda _: None) if allow_nan else _reject_constant)
    except RecursionError:
        raise ImportFileError(path, f"nested deeper than {MAX_DEPTH} levels", where=where) from None
    except ValueError as exc:
        problem = str(exc)
        if isinstance(exc, json.JSONDecodeError):
            truncated = exc.pos >= len(text.rstrip())
            problem = ("truncated: " if truncated else "not JSON: ") + f"{exc.msg} at character {exc.pos}"
        raise ImportFileError(path, problem, where=where) from None
    if _depth(value) > MAX_DEPTH:
        raise ImportFileError(path, f"nested deeper than {MAX_DEPTH} levels", where=where)
    return value


def read_json(path: Path, *, limit: int | None = None, allow_nan: bool = False) -> Any:
    """The JSON document in ``path``, refused past ``limit`` bytes (default :data:`MAX_JSON_BYTES`)."""
    limit = limit or MAX_JSON_BYTES
    size = path.stat().st_size
    if size > limit:
        raise ImportFileError(path, f"{size} bytes, over the {limit}-byte limit of a JSON file read whole")
    return parse_json(path.read_bytes(), path, allow_nan=allow_nan)


def iter_jsonl(path: Path, *, line_limit: int | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSON-lines file, one line in memory at a time
    (each at most ``line_limit`` bytes, default :data:`MAX_LINE_BYTES`)."""
    line_limit = line_limit or MAX_LINE_BYTES
    with path.open("rb") as fh:
        number = 0
        while True:
            line = fh.readline(line_limit + 1)
            if not line:
                return
            number += 1
            if len(line) > line_limit and not line.endswith(b"\n"):
                raise ImportFileError(
                    path, f"longer than the {line_limit}-byte limit of one line", where=f"line {number}"
                )
            if line.strip():
                yield number, parse_json(line, path, where=f"line {number}")


def finite(value: Any, path: Path | str, where: str) -> float:
    """A metric value as a finite float, or an error naming where it is."""
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, (int, float)):
        raise ImportFileError(path, f"expected a number, found {type(value).__name__} {str(value)[:40]!r}", where=where)
    out = float(value)
    if not math.isfinite(out):
        raise ImportFileError(path, f"{out} is not a finite number", where=where)
    return out


def check_archive(path: Path) -> None:
    """An ``.eval`` archive checked before anyone opens it: member names stay inside it, every
    member's declared size, its real size and the total are bounded, and no member expands
    like a zip bomb."""
    with contextlib.suppress(ImportError):  # inspect_ai's zstd members (Python < 3.14), as inspect reads them
        importlib.import_module("zipfile_zstd")
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_EVAL_MEMBERS:
                raise ImportFileError(path, f"{len(infos)} members, over the limit of {MAX_EVAL_MEMBERS}")
            total = 0
            for info in infos:
                name = info.filename
                if name.startswith(("/", "\\")) or ".." in Path(name).parts or ":" in name:
                    raise ImportFileError(path, "a member's name leaves the archive", where=f"member {name!r}")
                _check_member_size(path, info)
                total += info.file_size
                if total > MAX_EVAL_TOTAL:
                    raise ImportFileError(path, f"members over {MAX_EVAL_TOTAL} bytes uncompressed in all")
                _check_real_size(path, archive, info)
    except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError) as exc:
        raise ImportFileError(path, f"not a readable .eval (zip) archive: {exc}") from None


def _check_member_size(path: Path, info: zipfile.ZipInfo) -> None:
    where = f"member {info.filename!r}"
    if info.file_size > MAX_JSON_BYTES:
        raise ImportFileError(
            path, f"declares {info.file_size} bytes, over the {MAX_JSON_BYTES}-byte limit", where=where
        )
    if info.file_size > 1 << 20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise ImportFileError(
            path,
            f"expands {info.file_size // max(info.compress_size, 1)} times ({info.compress_size} -> {info.file_size} "
            f"bytes), over the limit of {MAX_RATIO}: a zip bomb",
            where=where,
        )


def _check_real_size(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Decompress the member in blocks: it must not give more bytes than it declares."""
    read = 0
    with archive.open(info) as fh:
        while True:
            block = fh.read(1 << 20)
            if not block:
                break
            read += len(block)
            if read > info.file_size:
                raise ImportFileError(
                    path, f"gives more than the {info.file_size} bytes it declares", where=f"member {info.filename!r}"
                )


def read_member(path: Path, archive: zipfile.ZipFile, name: str) -> Any:
    """One JSON member of a checked archive."""
    info = archive.getinfo(name)
    with archive.open(info) as fh:
        data = fh.read(info.file_size + 1)
    return parse_json(data[: info.file_size], path, where=f"member {name!r}")
