"""A word/phrase substitution driven by a table, shared by dialect and gender.

Whole-word, case-insensitive matches of the table's keys (longest first) are
replaced, each distinct source word with probability ``prob``; the decision and
the chosen target depend only on the word (not on its position), so the input
and the references of one instance change in the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from holistic.perturbations.base import PerturbRandom, match_case, normalize_key, phrase_pattern


class PhraseMapper:
    """Replaces phrases by one of their listed targets, deterministically per word."""

    def __init__(self, table: Mapping[str, tuple[str, ...]]) -> None:
        self.table = {normalize_key(k): tuple(v) for k, v in table.items() if v}
        self.pattern: re.Pattern[str] | None = phrase_pattern(list(self.table)) if self.table else None

    def apply(self, text: str, rng: PerturbRandom, prob: float) -> str:
        if self.pattern is None:
            return text

        def one(match: re.Match[str]) -> str:
            source = match.group(0)
            key = normalize_key(source)
            choice = rng.for_key(key)
            if choice.random() >= prob:
                return source
            return match_case(source, choice.choice(self.table[key]))

        return self.pattern.sub(one, text)
