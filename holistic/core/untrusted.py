"""Values read from another tool's files, checked the way a run spec's values are.

An importer (HELM's run folders today; any other tool's logs the same way) decodes a file's JSON
and then calls :func:`check_value` on each value before using it: nesting depth, string size,
integers within the 64-bit range Parquet stores, floats finite (``NaN`` and ``Infinity`` are not
results), and :func:`check_type` for the type a field must have. A violation is an
:class:`UntrustedValueError` naming the field, which the importer turns into its own exit-2 error
naming the file. Names shown to people (models, runs) go through :func:`name_problem`, the rules
of native names; text printed on a terminal through :func:`terminal_safe`; a path read from a
folder through :func:`check_inside` (a symbolic link that leaves the folder is refused).
"""

from __future__ import annotations

import math
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class ValueLimits:
    """What one decoded value may hold."""

    max_depth: int = 64
    """Nesting of lists and objects (HELM's deepest is about 8)."""
    max_string: int = 64 << 20
    """Characters in one string."""
    max_items: int = 10_000_000
    """Lists' and objects' members in one value, all levels together."""


DEFAULT_LIMITS = ValueLimits()
MAX_NAME = 200
"""Longest model or run name taken from another tool's files."""


class UntrustedValueError(ValueError):
    """A value from another tool's file that holistic will not take (the importer adds the file)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field or 'the value'}: {problem}")


def _join(field: str, key: object) -> str:
    if isinstance(key, int):
        return f"{field}[{key}]"
    return f"{field}.{key}" if field else str(key)


def _scalar_problem(value: Any, limits: ValueLimits) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            digits = len(str(abs(value))) if abs(value) < 10**4000 else "thousands of"
            return f"an integer of {digits} digits is outside the 64-bit range"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number"
    if isinstance(value, str):
        if len(value) > limits.max_string:
            return f"a string of {len(value):,} characters is longer than {limits.max_string:,}"
        return None
    return f"unexpected value of type {type(value).__name__}"


def check_value(value: Any, field: str = "", *, limits: ValueLimits = DEFAULT_LIMITS) -> None:
    """Check every value inside ``value`` (iteratively: depth never costs Python's stack)."""
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    items = 0
    while stack:
        current, where, depth = stack.pop()
        if isinstance(current, dict | list):
            if depth >= limits.max_depth:
                raise UntrustedValueError(where, f"nested deeper than {limits.max_depth} levels")
            items += len(current)
            if items > limits.max_items:
                raise UntrustedValueError(where, f"more than {limits.max_items:,} members in one value")
            pairs = current.items() if isinstance(current, dict) else enumerate(current)
            for key, inner in pairs:
                if isinstance(key, str) and len(key) > limits.max_string:
                    raise UntrustedValueError(where, "a member name is too long")
                stack.append((inner, _join(where, key), depth + 1))
            continue
        problem = _scalar_problem(current, limits)
        if problem is not None:
            raise UntrustedValueError(where, problem)


_TYPES: dict[str, tuple[type, ...]] = {
    "an object": (dict,),
    "a list": (list,),
    "a string": (str,),
    "a whole number": (int,),
    "a number": (int, float),
}


def check_type(value: Any, expected: str, field: str) -> Any:
    """``value`` if it is of the ``expected`` kind (a key of ``_TYPES``: ``"an object"``, ``"a whole
    number"``...), else an :class:`UntrustedValueError` naming the field. ``True`` is no number."""
    kinds = _TYPES[expected]
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise UntrustedValueError(field, f"expected {expected}, found {type(value).__name__} {_short(value)}")
    return value


def finite(value: Any, field: str) -> float:
    """A finite number (``NaN``, infinities and non-numbers refused)."""
    check_type(value, "a number", field)
    number = float(value)
    if not math.isfinite(number):
        raise UntrustedValueError(field, f"{value} is not a finite number")
    return number


def _short(value: Any) -> str:
    text = repr(value)
    return terminal_safe(text if len(text) <= 40 else text[:37] + "...")


def name_problem(name: object, what: str = "name") -> str | None:
    """Why ``name`` cannot be shown as a model or run name (``None`` when it can): the rules of
    native names (no control or formatting character: NUL, newlines, U+202E and the other
    direction marks), no markup (``<`` ``>``), not empty, at most :data:`MAX_NAME` characters."""
    if not isinstance(name, str) or not name.strip():
        return f"a {what} must be a non-empty string"
    if len(name) > MAX_NAME:
        return f"a {what} must be at most {MAX_NAME} characters (got {len(name):,})"
    bad = next((ch for ch in name if unicodedata.category(ch).startswith("C")), None)
    if bad is not None:
        return (
            f"a {what} must not contain control or formatting characters (found U+{ord(bad):04X} "
            f"{unicodedata.name(bad, 'control')})"
        )
    if "<" in name or ">" in name:
        return f"a {what} must not contain markup ('<' or '>')"
    if name != name.strip():
        return f"a {what} must not start or end with spaces"
    return None


def terminal_safe(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control or formatting character shown as an escape (``\\x1b``,
    ``\\u202e``), so a name cannot move the cursor, recolour or reorder a terminal's text
    (``keep_newlines``: a message's own line breaks stay)."""
    kept = "\n" if keep_newlines else ""
    if not any(unicodedata.category(ch).startswith("C") and ch not in kept for ch in text):
        return text
    out = []
    for ch in text:
        if unicodedata.category(ch).startswith("C") and ch not in kept:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def check_inside(path: Path, root: Path) -> Path:
    """``path`` if it (following every symbolic link) is inside ``root``; else an
    :class:`UntrustedValueError`: a link out of an imported folder is never followed."""
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real != real_root and real_root not in real.parents:
        raise UntrustedValueError(str(path), f"a symbolic link that leaves {root} (to {real}); refused")
    return path
