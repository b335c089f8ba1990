"""Reading a haystack answer and scoring one record (see :mod:`holistic.metrics.haystack`).

An answer is the ``json`` post-processor's output when the run uses it, else the first JSON
value found in the raw text: an object with a list under ``article_ids`` (or under its only
list-valued key), or a bare list, of ids (strings or numbers) or objects with an ``id``.
Ids are matched to the context exactly, then ignoring case.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from holistic.core.types import RequestState
from holistic.metrics.states import succeeded

ANSWER_KEY = "article_ids"

# -- reading answers -----------------------------------------------------------------

_FENCE = re.compile(r"```(?:[A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_TOKEN = re.compile(r"\w+|[^\w\s]")
DEGENERATE_MIN_TOKENS = 24
DEGENERATE_MAX_DISTINCT = 0.3


@dataclass(frozen=True)
class Answer:
    """What a completion says."""

    ids: tuple[str, ...] | None
    """Returned ids in answer order (duplicates kept), or ``None`` when unreadable."""
    problem: str | None = None
    """Why the answer is unreadable (``no JSON``, ``JSON of another shape``, ``request failed``)."""
    degenerate: bool = False


def _first_json(text: str) -> Any:
    decoder = json.JSONDecoder()
    for candidate in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        for i, ch in enumerate(candidate):
            if ch in "{[":
                try:
                    return decoder.raw_decode(candidate, i)[0]
                except json.JSONDecodeError:
                    continue
    return None


def ids_of(value: Any) -> tuple[str, ...] | None:
    """The ids in a decoded JSON answer, or ``None`` when it has another shape."""
    if isinstance(value, dict):
        if ANSWER_KEY in value:
            value = value[ANSWER_KEY]
        else:
            lists = [v for v in value.values() if isinstance(v, list)]
            if len(lists) != 1:
                return None
            value = lists[0]
    if not isinstance(value, list):
        return None
    out: list[str] = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("id", item.get("article_id"))
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            return None
        out.append(str(item).strip().lstrip("#"))
    return tuple(out)


def is_degenerate(text: str, ids: Sequence[str] | None = None) -> bool:
    """Runaway repetition: at least 24 tokens of which few 4-grams are distinct (<= 30%),
    or a list of 8+ returned ids of which at most half are distinct."""
    if ids is not None and len(ids) >= 8 and len(set(ids)) * 2 <= len(ids):
        return True
    tokens = _TOKEN.findall(text)
    if len(tokens) < DEGENERATE_MIN_TOKENS:
        return False
    grams = [tuple(tokens[i : i + 4]) for i in range(len(tokens) - 3)]
    return len(set(grams)) / len(grams) <= DEGENERATE_MAX_DISTINCT


def read_answer(state: RequestState) -> Answer:
    """The answer of one request state (see the module docstring)."""
    if not succeeded(state) or state.result is None or not state.result.completions:
        return Answer(None, "request failed")
    raw = state.result.completions[0].text
    if state.post_processed is not None:
        processed = state.post_processed[0] if state.post_processed else ""
        try:
            value = json.loads(processed) if processed else None
        except json.JSONDecodeError:  # another post-processing chain: look for JSON in its text
            value = _first_json(processed)
    else:
        value = _first_json(raw)
    if value is None:
        return Answer(None, "no JSON", is_degenerate(raw))
    ids = ids_of(value)
    if ids is None:
        return Answer(None, "JSON of another shape", is_degenerate(raw))
    return Answer(ids, None, is_degenerate(raw, ids))


# -- scoring one record ------------------------------------------------------------


@dataclass(frozen=True)
class RecordScore:
    """Set comparison of one record's returned ids with its gold ids."""

    gold: int
    returned: int
    """Distinct returned ids."""
    found: int
    """True positives."""
    false_positives: int
    hallucinated: int
    """Returned ids that are not in the context at all."""
    hard_negative_hits: int
    valid: bool

    @property
    def zero_needle(self) -> bool:
        return self.gold == 0

    @property
    def precision(self) -> float:
        return self.found / self.returned if self.returned else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        """Set F1; with no gold ids: 1 for a valid empty answer, else 0."""
        if self.zero_needle:
            return float(self.valid and self.returned == 0)
        denominator = 2 * self.found + self.false_positives + (self.gold - self.found)
        return 2 * self.found / denominator if denominator else 0.0


def canonical_ids(returned: Iterable[str], context: Sequence[str]) -> list[str]:
    """Returned ids mapped onto context ids (exact, then case-insensitive), deduplicated."""
    exact = set(context)
    folded = {c.casefold(): c for c in context}
    out: dict[str, None] = {}
    for rid in returned:
        out[rid if rid in exact else folded.get(rid.casefold(), rid)] = None
    return list(out)


def score_record(
    returned: Sequence[str] | None, gold: Sequence[str], context: Sequence[str], hard_negatives: Sequence[str] = ()
) -> RecordScore:
    """Score one record; ``returned=None`` is an unreadable answer (nothing returned, invalid)."""
    ids = canonical_ids(returned or (), context)
    gold_set, context_set, hard_set = set(gold), set(context), set(hard_negatives)
    found = sum(1 for i in ids if i in gold_set)
    return RecordScore(
        gold=len(gold_set),
        returned=len(ids),
        found=found,
        false_positives=len(ids) - found,
        hallucinated=sum(1 for i in ids if i not in context_set),
        hard_negative_hits=sum(1 for i in ids if i in hard_set),
        valid=returned is not None,
    )
