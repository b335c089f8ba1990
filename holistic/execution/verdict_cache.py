"""Judges' answers through the request cache: only a verdict the rule can read is kept.

A judge's answer is a successful request, which the request cache would store; but an
answer its rule cannot read (too long, a hanging pattern, nested too deeply, a score out
of range...) must not come back on the next run as if it were good. :class:`VerdictReader`
reads each answer once (the outcome kept per text), and :class:`ReadableVerdictCache`
wraps the run's cache for the annotation stage: an unreadable answer is neither stored
nor served, so a rerun asks the judge again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from holistic.core.judges import VerdictError, VerdictRule
from holistic.core.types import RequestResult
from holistic.models.cache import ResultCache

Reading = tuple[dict[str, Any], float] | str
"""``(fields, score)``, or why the verdict cannot be read."""


class VerdictReader:
    """One rule's readings of verdicts, each text read once."""

    def __init__(self, rule: VerdictRule) -> None:
        self.rule = rule
        self._seen: dict[str, Reading] = {}

    def read(self, text: str) -> Reading:
        found = self._seen.get(text)
        if found is None:
            try:
                found = self.rule.read(text)
            except (VerdictError, ValueError, OverflowError, RecursionError) as exc:
                found = str(exc) or type(exc).__name__
            self._seen[text] = found
        return found

    def readable(self, result: RequestResult) -> bool:
        """A successful answer the rule can read (failures are never cached anyway)."""
        if not result.success or not result.completions:
            return False
        return not isinstance(self.read(result.completions[0].text), str)


class ReadableVerdictCache:
    """``cache`` as the annotation stage uses it: unreadable answers are misses and are not stored."""

    def __init__(self, cache: ResultCache, reader: VerdictReader) -> None:
        self.cache = cache
        self.reader = reader

    def get_many(self, keys: Sequence[str]) -> dict[str, RequestResult]:
        return {k: r for k, r in self.cache.get_many(keys).items() if self.reader.readable(r)}

    def put_many(self, items: Iterable[tuple[str, RequestResult, str, str]]) -> int:
        return self.cache.put_many([item for item in items if self.reader.readable(item[1])])

    def close(self) -> None:
        """The run's cache stays open (its owner closes it)."""
