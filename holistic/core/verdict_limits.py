"""Bounds on reading a judge's verdict: a verdict is a hostile server's text.

Every check runs before (or instead of) the parser that could be made to hang or crash,
and every violation is a :class:`VerdictError` (the verdict is *unparseable*: retried,
never cached, never a score):

- size: at most :data:`MAX_VERDICT_CHARS` characters;
- regular expressions: each search stops after :data:`PATTERN_TIMEOUT_S` seconds (the
  ``regex`` module's ``timeout``, as split patterns in data specs have);
- JSON: at most :data:`MAX_JSON_DEPTH` levels of nesting (checked by a scan before
  ``json.loads``, which would raise ``RecursionError``), no ``NaN`` or ``Infinity``, and
  every number at most :data:`MAX_NUMBER_CHARS` characters (a 400-digit integer would
  overflow ``float``);
- scores: a finite number of at most :data:`MAX_NUMBER_CHARS` characters.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_VERDICT_CHARS = 100_000
"""A longer verdict is unparseable (bounds the parsers' time and memory)."""
PATTERN_TIMEOUT_S = 1.0
"""Time one verdict pattern may search one verdict."""
MAX_JSON_DEPTH = 64
"""Nesting of a JSON verdict (objects and lists)."""
MAX_NUMBER_CHARS = 40
"""Characters of one number in a verdict (digits, sign, point and exponent)."""


class VerdictError(ValueError):
    """A verdict the rule cannot read."""


def check_size(text: str) -> None:
    if len(text) > MAX_VERDICT_CHARS:
        raise VerdictError(f"the verdict is {len(text)} characters long, over the limit of {MAX_VERDICT_CHARS}")


def search(pattern: str, text: str) -> dict[str, Any] | None:
    """The named groups of ``pattern``'s first match in ``text`` (``None``: no match)."""
    import regex

    try:
        match = regex.search(pattern, text, timeout=PATTERN_TIMEOUT_S)
    except TimeoutError:
        raise VerdictError(
            f"pattern {pattern[:80]!r} took more than {PATTERN_TIMEOUT_S:g} s on this verdict ({len(text)} characters)"
        ) from None
    return None if match is None else dict(match.groupdict())


def _depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_JSON_DEPTH:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def _number(text: str) -> float | int:
    if len(text) > MAX_NUMBER_CHARS:
        raise VerdictError(f"a number of {len(text)} characters (the limit is {MAX_NUMBER_CHARS})")
    value = float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(value, float) and not math.isfinite(value):
        raise VerdictError(f"the number {text} is not finite")
    return value


def _constant(name: str) -> Any:
    raise VerdictError(f"{name} is not a number a verdict may hold")


def load_json(text: str) -> Any:
    """``json.loads`` within the bounds above."""
    if _depth(text) > MAX_JSON_DEPTH:
        raise VerdictError(f"the JSON is nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        return json.loads(text, parse_int=_number, parse_float=_number, parse_constant=_constant)
    except VerdictError:
        raise
    except (ValueError, RecursionError) as exc:
        raise VerdictError(f"not JSON: {str(exc)[:200]}") from None


def number(raw: Any, field: str) -> float:
    """A score field as a finite float."""
    if isinstance(raw, bool):
        raise VerdictError(f"{field} is a boolean, not a number")
    text = raw.strip() if isinstance(raw, str) else raw
    if isinstance(text, str) and len(text) > MAX_NUMBER_CHARS:
        raise VerdictError(f"{field} is {len(text)} characters long, not a number (the limit is {MAX_NUMBER_CHARS})")
    try:
        score = float(text)
    except (TypeError, ValueError, OverflowError):
        raise VerdictError(f"{field} {str(raw)[:40]!r} is not a number") from None
    if not math.isfinite(score):
        raise VerdictError(f"{field} is not finite")
    return score
