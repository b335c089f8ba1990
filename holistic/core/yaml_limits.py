"""Bounds on the YAML files users hand us (run specs, includes, model files).

A YAML file is data from anywhere: a few hundred bytes of nested aliases can
expand to gigabytes ("billion laughs"), a path can name ``/dev/zero``, a stray
control byte can hide in a copy-paste. Every reader of user YAML goes through
these checks, which fail with a :class:`~holistic.core.errors.SpecError` naming the
file (and line) instead of exhausting memory or printing a traceback.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from holistic.core.errors import SpecError

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Largest run-spec or model file read (a spec is a few kilobytes; this stops a wrong path early)."""
MAX_NODES = 200_000
"""Most values one file may expand to, aliases included (stops alias bombs)."""
MAX_DEPTH = 100
"""Deepest nesting of mappings and lists in one file."""

_FORBIDDEN_CHARS = frozenset(chr(c) for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F))
"""C0 control characters other than tab, newline and carriage return (YAML forbids them unescaped)."""
_MERGE_TAG = "tag:yaml.org,2002:merge"


def read_limited(path: Path, shown: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; :class:`SpecError` otherwise."""
    try:
        if not path.is_file():
            if path.exists():
                raise SpecError("not a regular file (expected a YAML text file)", file=shown)
            raise SpecError("file not found", file=shown)
        with open(path, "rb") as fh:
            raw = fh.read(limit + 1)
    except SpecError:
        raise
    except OSError as exc:
        raise SpecError(f"cannot read file: {exc.strerror or exc}", file=shown) from None
    if len(raw) > limit:
        size = f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit:,} bytes"
        raise SpecError(f"file is larger than {size}; expected a small YAML file", file=shown)
    return raw


def decode_utf8(raw: bytes, shown: str) -> str:
    """``raw`` as text; :class:`SpecError` with the line of the first invalid byte otherwise."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SpecError(f"not UTF-8 text (byte {exc.start})", file=shown, line=line) from None


def check_characters(text: str, shown: str) -> None:
    """Refuse unescaped control characters (NUL, BEL, ...) with their line and column."""
    bad = next((i for i, ch in enumerate(text) if ch in _FORBIDDEN_CHARS), None)
    if bad is None:
        return
    line = text.count("\n", 0, bad) + 1
    column = bad - (text.rfind("\n", 0, bad) + 1) + 1
    raise SpecError(
        f"control character U+{ord(text[bad]):04X} is not allowed in YAML (write it as an escape "
        "inside a double-quoted string)",
        file=shown,
        line=line,
        column=column,
    )


def merged_size(node: yaml.MappingNode, memo: dict[int, int] | None = None) -> int:
    """Entries of ``node`` once its merge keys (``<<``) are flattened, computed without flattening."""
    memo = {} if memo is None else memo
    if id(node) in memo:
        return memo[id(node)]
    memo[id(node)] = MAX_NODES + 1  # a merge cycle counts as too large
    total = 0
    for key_node, value_node in node.value:
        if key_node.tag != _MERGE_TAG:
            total += 1
            continue
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in sources:
            if isinstance(source, yaml.MappingNode):
                total += merged_size(source, memo)
        if total > MAX_NODES:
            break
    memo[id(node)] = total
    return total


class NodeBudget:
    """Counts the values built from one file (each alias use counts again) and their depth."""

    def __init__(self) -> None:
        self.nodes = 0

    def spend(self, depth: int) -> str | None:
        """Count one value at ``depth``; the problem when a limit is passed."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            return (
                f"the document expands to more than {MAX_NODES} values (YAML aliases repeat what they point "
                "to); check the anchors (&) and aliases (*)"
            )
        if depth > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep"
        return None

    @staticmethod
    def mapping_problem(node: yaml.MappingNode) -> str | None:
        if merged_size(node) > MAX_NODES:
            return f"YAML merge keys (<<) expand this mapping to more than {MAX_NODES} entries"
        return None
