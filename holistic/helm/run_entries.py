"""HELM's command line as it is: run entries (``mmlu:subject=anatomy,model=...``) and conf files.

HELM 0.5.16 reads a run entry with ``parse_object_spec``: ``NAME`` or ``NAME:KEY=VALUE,KEY=VALUE``,
each value an ``int`` when it reads as one, else a ``float``, else the string. A conf file
(``--conf-paths``) is HOCON holding ``entries: [{description: "...", priority: N, groups: [...]}]``;
HELM's ``--priority P`` keeps the entries whose priority is at most ``P`` (an entry without one is
kept), and an entry from ``--run-entries`` has priority 1. This module reads both, bounded (file
size, entries, nesting), and every problem is a :class:`~holistic.core.errors.SpecError` naming the
file and line; :mod:`holistic.helm.entry_specs` turns the entries into a holistic run spec.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import SpecError

MAX_CONF_BYTES = 4 * 1024 * 1024
"""Largest conf file read (HELM's own, ``run_entries.conf``, is 90 KB)."""
MAX_ENTRIES = 20_000
"""Most run entries all conf files and ``--run-entries`` together may hold."""
MAX_DEPTH = 16
"""Deepest nesting of objects and lists in a conf file."""
MAX_DESCRIPTION = 4096
"""Longest run-entry description."""

Value = str | int | float


@dataclass(frozen=True)
class RunEntry:
    """HELM's ``RunEntry``: a description, its priority (1 highest) and groups to add."""

    description: str
    priority: int | None = None
    groups: tuple[str, ...] | None = None
    where: str = "--run-entries"
    """The file and line (or the flag) the entry came from, for messages."""


def parse_value(text: str) -> Value:
    """A value as HELM's ``parse_object_spec`` reads it: ``int``, else ``float``, else the string."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def parse_description(description: str, where: str = "--run-entries") -> tuple[str, dict[str, Value]]:
    """``NAME:KEY=VALUE,...`` -> ``(NAME, {KEY: VALUE})``, as HELM's ``parse_object_spec``."""
    if len(description) > MAX_DESCRIPTION:
        raise SpecError(f"{where}: a run entry is longer than {MAX_DESCRIPTION} characters")
    name, _, rest = description.partition(":")
    name = name.strip()
    if not name:
        raise SpecError(f"{where}: run entry {description!r} has no name before ':'")
    args: dict[str, Value] = {}
    if ":" in description:
        for part in rest.split(","):
            if "=" not in part:
                raise SpecError(f"{where}: run entry {description!r}: expected KEY=VALUE, got {part!r}")
            key, value = part.split("=", 1)
            if key in args:
                raise SpecError(f"{where}: run entry {description!r} sets {key!r} twice")
            args[key] = parse_value(value)
    return name, args


def keep_priority(entries: list[RunEntry], priority: int | None) -> list[RunEntry]:
    """HELM's ``--priority``: entries whose priority is at most ``priority`` (unset keeps them all)."""
    if priority is None:
        return entries
    return [e for e in entries if e.priority is None or e.priority <= priority]


class _Reader:
    """A bounded reader of the HOCON HELM's conf files use: objects, lists, quoted and bare
    strings, numbers, ``#`` and ``//`` comments, separators ``,`` or newlines, ``:`` or ``=``."""

    def __init__(self, text: str, file: str) -> None:
        self.text, self.file, self.pos = text, file, 0

    def line(self) -> int:
        return self.text.count("\n", 0, self.pos) + 1

    def error(self, message: str) -> SpecError:
        return SpecError(message, file=self.file, line=self.line())

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r\n,":
                self.pos += 1
            elif ch == "#" or text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.error(f"nested deeper than {MAX_DEPTH} levels")
        ch = self.peek()
        if ch == "{":
            self.pos += 1
            return self.members("}", depth + 1)
        if ch == "[":
            self.pos += 1
            items: list[Any] = []
            while self.peek() != "]":
                if not self.peek():
                    raise self.error("a list is not closed with ']'")
                items.append(self.value(depth + 1))
            self.pos += 1
            return items
        if ch == '"':
            return self.quoted()
        if not ch:
            raise self.error("a value is missing at the end of the file")
        return self.bare()

    def quoted(self) -> str:
        start = self.pos
        end = start + 1
        while end < len(self.text) and self.text[end] != '"':
            end += 2 if self.text[end] == "\\" else 1
        if end >= len(self.text):
            raise self.error("a quoted string is not closed")
        self.pos = end + 1
        try:
            text: str = json.loads(self.text[start : end + 1])
        except json.JSONDecodeError as exc:
            raise self.error(f"bad quoted string: {exc.msg}") from None
        return text

    def bare(self) -> Value:
        start = self.pos
        while (
            self.pos < len(self.text)
            and self.text[self.pos] not in ',\n\r#{}[]:="'
            and not self.text.startswith("//", self.pos)
        ):
            self.pos += 1
        word = self.text[start : self.pos].strip()
        if not word:
            raise self.error(f"unexpected {self.text[self.pos]!r}")
        return parse_value(word)

    def members(self, close: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while True:
            ch = self.peek()
            if ch == close and close:
                self.pos += 1
                return out
            if not ch:
                if close:
                    raise self.error(f"an object is not closed with {close!r}")
                return out
            key = self.quoted() if ch == '"' else self.bare()
            if self.peek() in (":", "="):
                self.pos += 1
            elif self.peek() not in ("{",):
                raise self.error(f"expected ':' after {key!r}")
            out[str(key)] = self.value(depth)


def _entry(raw: Any, where: str) -> RunEntry:
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: an entry must be an object {{description: ..., priority: ...}}")
    unknown = sorted(set(raw) - {"description", "priority", "groups"})
    if unknown:
        raise SpecError(f"{where}: unknown entry field {unknown[0]!r} (HELM's are description, priority, groups)")
    description = raw.get("description")
    if not isinstance(description, str):
        raise SpecError(f"{where}: description must be a string")
    priority = raw.get("priority")
    if priority is not None and (not isinstance(priority, int) or isinstance(priority, bool) or priority < 0):
        raise SpecError(f"{where}: priority must be a non-negative integer, got {priority!r}")
    groups = raw.get("groups")
    if groups is not None and (not isinstance(groups, list) or not all(isinstance(g, str) and g for g in groups)):
        raise SpecError(f"{where}: groups must be a list of names")
    return RunEntry(description, priority, None if groups is None else tuple(groups), where)


def read_conf(path: Path) -> list[RunEntry]:
    """The entries of one HELM conf file (HELM's ``read_run_entries``), bounded."""
    file = str(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONF_BYTES + 1)
    except OSError as exc:
        raise SpecError(f"cannot read conf file: {exc.strerror or exc}", file=file) from None
    if len(raw) > MAX_CONF_BYTES:
        raise SpecError(f"conf file is larger than {MAX_CONF_BYTES} bytes", file=file)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"conf file is not UTF-8 (byte {exc.start})", file=file) from None
    reader = _Reader(text, file)
    if reader.peek() == "{":
        reader.pos += 1
        top = reader.members("}", 1)
        if reader.peek():
            raise reader.error("text after the closing '}'")
    else:
        top = reader.members("", 1)
    entries = top.get("entries")
    if not isinstance(entries, list):
        raise SpecError("a conf file holds entries: [{description: ..., priority: ...}, ...]", file=file)
    lines = _entry_lines(text)
    out = []
    for i, item in enumerate(entries):
        where = f"{file}:{lines[i]}" if i < len(lines) else f"{file} entry {i + 1}"
        out.append(_entry(item, where))
    return out


def _entry_lines(text: str) -> list[int]:
    """The line of each ``description`` in the file, in order (for messages)."""
    out, at = [], text.find("description")
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        if "#" not in text[line_start:at] and "//" not in text[line_start:at]:
            out.append(text.count("\n", 0, at) + 1)
        at = text.find("description", at + 1)
    return out


def collect(conf_paths: list[Path], run_entries: list[str], priority: int | None) -> list[RunEntry]:
    """Every entry of the conf files then of ``--run-entries`` (priority 1), filtered by ``priority``."""
    entries: list[RunEntry] = []
    for path in conf_paths:
        entries.extend(read_conf(path))
        if len(entries) > MAX_ENTRIES:
            raise SpecError(f"more than {MAX_ENTRIES} run entries", file=str(path))
    entries.extend(RunEntry(d, 1, None, "--run-entries") for d in run_entries)
    if len(entries) > MAX_ENTRIES:
        raise SpecError(f"more than {MAX_ENTRIES} run entries")
    return keep_priority(entries, priority)
