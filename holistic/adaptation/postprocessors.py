"""Named output post-processors (``AdapterSpec.post_processing``), applied in order.

A post-processor takes a completion's text and its request state and returns the new
text, or raises :class:`ParseError` when the output cannot be read (recorded in
``RequestState.parse_error``, never raised to the caller). Third-party packages add
their own through the ``holistic.post_processors`` entry-point group.

Built in:

- ``strip``: remove surrounding whitespace.
- ``first_line``: the first non-empty line (stripped).
- ``lowercase``: lower-case the text.
- ``letter_to_choice``: for joint multiple choice, read a choice letter (``B``, ``B.``,
  ``(B)``, ``B)``, ``Answer: B``, ``The answer is (B)``) and return that choice's text
  from ``RequestState.output_mapping``; an answer that starts with a choice's text is
  taken as that choice.
- ``last_number``: the last number in the text, normalised (``1,234.50`` -> ``1234.5``,
  ``18.00`` -> ``18``).
- ``gsm8k_answer``: the number after GSM8K's ``####`` marker, else the last number.
- ``json``: the first JSON object or array, inside a code fence or not, ignoring text
  around it; returned as compact JSON text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import cast

from holistic.core.registry import Registry
from holistic.core.types import RequestState

PostProcessor = Callable[[str, RequestState], str]

POST_PROCESSORS: Registry[PostProcessor] = Registry("post-processor", group="holistic.post_processors")


class ParseError(ValueError):
    """The output cannot be read by a post-processor."""


def _preview(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


@POST_PROCESSORS.register("strip")
def strip(text: str, state: RequestState) -> str:
    return text.strip()


@POST_PROCESSORS.register("first_line")
def first_line(text: str, state: RequestState) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


@POST_PROCESSORS.register("lowercase")
def lowercase(text: str, state: RequestState) -> str:
    return text.lower()


_LETTER_ALONE = re.compile(r"^\(?([A-Z])\)?(?:[.):,*]|\s|$)")
_LETTER_AFTER_ANSWER = re.compile(r"\banswer\s*(?:is|:)?\s*[:\-]?\s*\(?([A-Z])\)?(?![A-Za-z])", re.IGNORECASE)


@POST_PROCESSORS.register("letter_to_choice")
def letter_to_choice(text: str, state: RequestState) -> str:
    mapping = state.output_mapping
    if not mapping:
        raise ParseError("letter_to_choice needs a multiple_choice_joint request (no letter mapping)")
    cleaned = text.strip().lstrip("*_ ")
    for pattern in (_LETTER_AFTER_ANSWER, _LETTER_ALONE):
        match = pattern.search(cleaned)
        if match and match.group(1) in mapping:
            return mapping[match.group(1)]
    for choice in sorted(mapping.values(), key=len, reverse=True):
        if choice and cleaned.lower().startswith(choice.lower()):
            return choice
    raise ParseError(f"letter_to_choice: no choice letter ({', '.join(sorted(mapping))}) in {_preview(text)}")


_NUMBER = re.compile(r"-?\$?\d[\d,]*(?:\.\d+)?|-?\$?\.\d+")


def normalise_number(raw: str) -> str:
    """``"$1,234.50"`` -> ``"1234.5"``; ``"18.00"`` -> ``"18"``; ``"-3"`` -> ``"-3"``."""
    number = raw.replace(",", "").replace("$", "")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
        if number.startswith("-."):
            number = "-0" + number[1:]
        elif number.startswith("."):
            number = "0" + number
    if number in ("", "-", "-0"):
        number = "0"
    return number


@POST_PROCESSORS.register("last_number")
def last_number(text: str, state: RequestState) -> str:
    found = _NUMBER.findall(text)
    if not found:
        raise ParseError(f"last_number: no number in {_preview(text)}")
    return normalise_number(found[-1])


_GSM8K_MARK = re.compile(r"####\s*(-?\$?[\d,]*\.?\d+)")


@POST_PROCESSORS.register("gsm8k_answer")
def gsm8k_answer(text: str, state: RequestState) -> str:
    match = _GSM8K_MARK.search(text)
    if match:
        return normalise_number(match.group(1))
    return last_number(text, state)


_FENCE = re.compile(r"```(?:[A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.DOTALL)


def _first_json(text: str) -> object | None:
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            return cast(object, value)
    return None


@POST_PROCESSORS.register("json")
def extract_json(text: str, state: RequestState) -> str:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        value = _first_json(candidate)
        if value is not None:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    raise ParseError(f"json: no JSON object or array in {_preview(text)}")
