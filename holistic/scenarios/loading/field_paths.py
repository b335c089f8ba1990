"""Field paths: where a value sits inside one row of a user's dataset.

A path is what a dataset's authors' nesting calls for, written the way ``jq`` users
expect:

- ``question`` — a column (a top-level key);
- ``question.stem`` — a key of an object (a JSON object, a Parquet struct, a
  Hugging Face dict feature);
- ``question.choices[*].text`` — ``[*]`` projects over a list: the ``text`` of every
  element, as a list;
- ``choices[0]`` — one element of a list (0-based).

A column whose own name holds a dot or a bracket (a CSV header ``a.b``) is matched as
a whole first. Errors say which step failed, what was there and the nearest key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from holistic.core.errors import did_you_mean

_STEP = re.compile(r"([^.\[\]]+)((?:\[(?:\*|\d+)\])*)")
_INDEX = re.compile(r"\[(\*|\d+)\]")

EACH = "*"


class FieldPathError(LookupError):
    """A path that does not fit a row (the message names the failing step)."""


@dataclass(frozen=True)
class FieldPath:
    """A parsed field path."""

    text: str
    steps: tuple[str | int, ...]
    """Keys (``str``), list indices (``int``) and projections (:data:`EACH`)."""

    @staticmethod
    def parse(text: str) -> FieldPath:
        """Parse ``text``; raises ``ValueError`` on a malformed path."""
        if not isinstance(text, str) or not text:
            raise ValueError(f"a field path must be a non-empty string, got {text!r}")
        steps: list[str | int] = []
        for part in text.split("."):
            match = _STEP.fullmatch(part)
            if match is None:
                raise ValueError(
                    f"malformed field path {text!r} at {part!r}: use names joined by '.', with [*] or [N] after a list"
                )
            steps.append(match.group(1))
            for index in _INDEX.findall(match.group(2)):
                steps.append(EACH if index == EACH else int(index))
        return FieldPath(text, tuple(steps))

    @property
    def column(self) -> str:
        """The top-level column the path starts from."""
        return str(self.steps[0])

    def get(self, values: Mapping[str, Any]) -> Any:
        """The value at this path in ``values``; raises :class:`FieldPathError`."""
        if self.text in values:
            return values[self.text]
        return _walk(values, self.steps, 0, self.text)


def _walk(value: Any, steps: Sequence[str | int], at: int, text: str) -> Any:
    if at == len(steps):
        return value
    step = steps[at]
    where = _prefix(steps, at)
    if step == EACH:
        if not isinstance(value, (list, tuple)):
            raise FieldPathError(f"field {text!r}: {where} is {_kind(value)}, not a list, so [*] does not apply")
        return [_walk(item, steps, at + 1, text) for item in value]
    if isinstance(step, int):
        if not isinstance(value, (list, tuple)):
            raise FieldPathError(f"field {text!r}: {where} is {_kind(value)}, not a list")
        if not 0 <= step < len(value):
            raise FieldPathError(f"field {text!r}: {where} has {len(value)} elements, no [{step}]")
        return _walk(value[step], steps, at + 1, text)
    if isinstance(value, (list, tuple)):
        raise FieldPathError(
            f"field {text!r}: {where} is a list; write {where}[*].{step} to take {step!r} from every element"
        )
    if not isinstance(value, Mapping):
        raise FieldPathError(f"field {text!r}: {where} is {_kind(value)}, which has no key {step!r}")
    if step not in value:
        keys = [str(k) for k in value]
        near = did_you_mean(step, keys)
        full = ".".join([*filter(None, [where if at else ""]), near[0]]) if near else ""
        hint = f"; did you mean {full!r}?" if near else ""
        if at == 0:
            raise FieldPathError(f"no column {step!r}{hint} (columns: {', '.join(keys) or 'none'})")
        raise FieldPathError(f"no field {text!r}{hint} (keys of {where}: {', '.join(keys) or 'none'})")
    return _walk(value[step], steps, at + 1, text)


def _prefix(steps: Sequence[str | int], upto: int) -> str:
    out = ""
    for step in steps[:upto]:
        if step == EACH:
            out += "[*]"
        elif isinstance(step, int):
            out += f"[{step}]"
        else:
            out += ("." if out else "") + step
    return out or "the row"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__} ({str(value)[:40]!r})"
