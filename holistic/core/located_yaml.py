"""Read a user's YAML file (a run spec, a models file) and remember where every value came from.

Errors are reported as ``file:line:column: at runs[1].adaptation.method: ...``.
To do that the reader needs the position of every value after the file has become plain
Python data. :func:`load_source` composes the YAML node tree with PyYAML's safe
loader, builds the data from the nodes, and records a :class:`Location` for each
document path (a tuple of mapping keys and sequence indices).

Mapping keys are recorded twice: the value's own position under its path, and the
key's position under ``path + (KEY, name)`` (used when the key itself is wrong,
e.g. an unknown field).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from holistic.core.errors import SpecError
from holistic.core.yaml_limits import MAX_DEPTH, MAX_FILE_BYTES, NodeBudget, check_characters, decode_utf8, read_limited

PathPart = str | int
DocPath = tuple[PathPart, ...]

KEY = "\x00key"
"""Marker inside a :data:`DocPath` for the position of a mapping key rather than its value."""


def format_path(path: DocPath) -> str:
    """``("runs", 1, "adaptation", "method")`` -> ``runs[1].adaptation.method``."""
    out = ""
    for part in path:
        if part == KEY:
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(document)"


@dataclass(frozen=True)
class Location:
    """Where a value was written."""

    file: str
    """The file, as the user named it (relative paths stay relative)."""
    line: int
    """1-based line."""
    column: int
    """1-based column."""
    path: DocPath
    """The value's path inside *that* file (it may differ from its path after includes merge)."""

    def error(self, message: str, *, path: DocPath | None = None) -> SpecError:
        """A :class:`SpecError` pointing here (``path`` overrides the displayed document path)."""
        return SpecError(
            message,
            file=self.file,
            line=self.line,
            column=self.column,
            path=format_path(self.path if path is None else path),
        )


class Locations:
    """Document path -> :class:`Location`; lookups fall back to the nearest recorded ancestor."""

    def __init__(self, file: str, entries: Mapping[DocPath, Location] | None = None) -> None:
        self.file = file
        self._entries: dict[DocPath, Location] = dict(entries or {})

    def add(self, path: DocPath, location: Location) -> None:
        self._entries[path] = location

    def update(self, other: Locations) -> None:
        self._entries.update(other._entries)

    def items(self) -> Iterator[tuple[DocPath, Location]]:
        return iter(self._entries.items())

    def rebased(self, old_prefix: DocPath, new_prefix: DocPath) -> Locations:
        """The entries under ``old_prefix`` moved under ``new_prefix`` (for list concatenation)."""
        out = Locations(self.file)
        n = len(old_prefix)
        for path, loc in self._entries.items():
            if path[:n] == old_prefix:
                out.add(new_prefix + path[n:], loc)
        return out

    def find(self, path: DocPath) -> Location:
        """The location of ``path``, or of its nearest recorded ancestor."""
        probe = tuple(path)
        while True:
            loc = self._entries.get(probe)
            if loc is not None:
                return loc
            if not probe:
                return Location(self.file, 1, 1, ())
            probe = probe[:-1]

    def key(self, path: DocPath, key: str) -> Location:
        """The location of mapping key ``key`` under ``path`` (the value's, if the key was not seen)."""
        loc = self._entries.get((*path, KEY, key))
        return loc if loc is not None else self.find((*path, key))

    def error(self, path: DocPath, message: str) -> SpecError:
        """A :class:`SpecError` at ``path``, naming the path as written in its own file."""
        return self.find(path).error(message, path=self.display_path(path))

    def display_path(self, path: DocPath) -> DocPath:
        """``path`` as written in the file that holds it (after includes, indices can differ)."""
        # The nearest recorded ancestor knows its in-file path; re-append the remaining parts.
        probe = tuple(path)
        while probe and probe not in self._entries:
            probe = probe[:-1]
        loc = self._entries.get(probe)
        if loc is None:
            return path
        return loc.path + tuple(path[len(probe) :])


@dataclass(frozen=True)
class Source:
    """One loaded YAML file."""

    path: Path
    display: str
    """How errors name the file."""
    raw: bytes
    data: Any
    locations: Locations


def load_source(path: Path, display: str | None = None, *, limit: int = MAX_FILE_BYTES, fast: bool = False) -> Source:
    """Read (at most ``limit`` bytes of a regular file) and parse ``path``; YAML errors become
    :class:`SpecError` with file:line:column. ``fast``: see :func:`parse_source`."""
    shown = display if display is not None else str(path)
    raw = read_limited(path, shown, limit)
    text = decode_utf8(raw, shown)
    return parse_source(text, shown, path=path, raw=raw, fast=fast)


def parse_source(
    text: str, display: str, *, path: Path | None = None, raw: bytes | None = None, fast: bool = False
) -> Source:
    """Parse YAML text; see :func:`load_source`.

    ``fast``: parse with libyaml when PyYAML has it (same nodes and marks, about ten times faster).
    Only for files that ship with holistic: libyaml composes nested nodes by recursion in C, which
    a hostile file nested deeply enough would overflow, where the Python parser stops with an error."""
    check_characters(text, display)
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if fast else yaml.SafeLoader
    try:
        loader = loader_class(text)
    except yaml.YAMLError as exc:  # the reader refuses a character before parsing starts
        raise SpecError(f"YAML syntax error: {str(exc).splitlines()[0]}", file=display) from None
    try:
        node = loader.get_single_node()
        locations = Locations(display)
        data = _build(loader, node, (), locations, budget=NodeBudget()) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            started = ""
            if exc.context_mark is not None and exc.context_mark is not mark:
                started = f" started at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
            problem = f"{exc.problem} ({exc.context}{started})"
        raise SpecError(
            f"YAML syntax error: {problem}",
            file=display,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    except yaml.YAMLError as exc:
        raise SpecError(
            f"YAML syntax error: {str(exc).splitlines()[0] if str(exc) else 'invalid YAML'}", file=display
        ) from None
    except RecursionError:
        raise SpecError(f"YAML nested too deeply (more than {MAX_DEPTH} levels)", file=display) from None
    finally:
        loader.dispose()
    return Source(
        path=path if path is not None else Path(display),
        display=display,
        raw=raw if raw is not None else text.encode("utf-8"),
        data=data,
        locations=locations,
    )


def _mark(node: yaml.Node, display: str, path: DocPath) -> Location:
    return Location(display, node.start_mark.line + 1, node.start_mark.column + 1, path)


def _build(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: DocPath,
    locations: Locations,
    active: frozenset[int] = frozenset(),
    *,
    budget: NodeBudget,
) -> Any:
    problem = budget.spend(len(path))
    if problem is not None:
        raise locations.find(path).error(problem)
    locations.add(path, _mark(node, locations.file, path))
    if id(node) in active:
        raise locations.find(path).error("recursive YAML alias (a value that contains itself)")
    active = active | {id(node)}
    if isinstance(node, yaml.MappingNode):
        problem = NodeBudget.mapping_problem(node)
        if problem is not None:
            raise locations.find(path).error(problem)
        loader.flatten_mapping(node)  # resolves YAML merge keys (<<)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            # a non-scalar key is refused before it is built (an alias key could be huge)
            key = loader.construct_object(key_node, deep=True) if isinstance(key_node, yaml.ScalarNode) else key_node
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise SpecError(
                    "mapping keys must be plain scalars",
                    file=locations.file,
                    line=key_node.start_mark.line + 1,
                    column=key_node.start_mark.column + 1,
                    path=format_path(path),
                )
            skey = key if isinstance(key, str) else str(key)
            if skey in out:
                raise SpecError(
                    f"duplicate key {skey!r}",
                    file=locations.file,
                    line=key_node.start_mark.line + 1,
                    column=key_node.start_mark.column + 1,
                    path=format_path(path),
                )
            locations.add((*path, KEY, skey), _mark(key_node, locations.file, (*path, skey)))
            out[skey] = _build(loader, value_node, (*path, skey), locations, active, budget=budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, (*path, i), locations, active, budget=budget) for i, item in enumerate(node.value)]
    value = loader.construct_object(node, deep=True)
    if not isinstance(value, (str, int, float, bool)) and value is not None:
        kind = "a date" if isinstance(value, (datetime.date, datetime.datetime)) else f"a {type(value).__name__}"
        raise locations.find(path).error(f"YAML reads this value as {kind}; put it in quotes to make it text")
    return value
