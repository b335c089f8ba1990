"""Search clauses: the concepts a haystack task combines ("about X", "since D", "very positive").

A task is a conjunction of clauses, one per concept. Each concept is a
:class:`ClauseType` registered by name in :data:`CLAUSE_TYPES` (third-party packages
add theirs through the ``holistic.haystack_clauses`` entry-point group). A clause
type proposes a clause from an *anchor* article (so a query always has at least one
match), and a clause answers three questions over a :class:`CorpusIndex`:

- ``matching``: which articles satisfy it;
- ``near_misses``: which articles fail it narrowly (the hard negatives of a
  one-clause task: another company of the same sector or with the same name stem,
  an article dated just before the cut-off, an adjacent sentiment class);
- ``phrase``: how it reads in the task sentence ("Find all <before> articles <after>").

Built in: ``company``, ``time``, ``sentiment``.
"""

from __future__ import annotations

import bisect
import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from holistic.core.registry import Registry
from holistic.scenarios.haystack.corpus import SENTIMENTS, Article, Corpus, sentiment_label

Positions = frozenset[int]


@dataclass(frozen=True)
class CorpusIndex:
    """Look-ups over a corpus by company, sector, sentiment and date (article positions)."""

    corpus: Corpus
    by_company: dict[str, Positions]
    by_sentiment: dict[str, Positions]
    company_sector: dict[str, str | None]
    by_date: tuple[int, ...]
    """Positions sorted by date (then id)."""
    dates: tuple[dt.date, ...]
    """Dates in the order of ``by_date``."""
    all: Positions = field(default_factory=frozenset)

    @staticmethod
    def of(corpus: Corpus) -> CorpusIndex:
        by_company: dict[str, set[int]] = {}
        by_sentiment: dict[str, set[int]] = {s: set() for s in SENTIMENTS}
        sector: dict[str, str | None] = {}
        for position, article in enumerate(corpus.articles):
            by_company.setdefault(article.company, set()).add(position)
            by_sentiment[article.sentiment].add(position)
            if sector.get(article.company) is None:
                sector[article.company] = article.sector
        order = sorted(range(len(corpus)), key=lambda p: (corpus[p].date, corpus[p].id))
        return CorpusIndex(
            corpus=corpus,
            by_company={k: frozenset(v) for k, v in by_company.items()},
            by_sentiment={k: frozenset(v) for k, v in by_sentiment.items()},
            company_sector=sector,
            by_date=tuple(order),
            dates=tuple(corpus[p].date for p in order),
            all=frozenset(range(len(corpus))),
        )

    def dated_from(self, start: dt.date, end: dt.date | None = None) -> Positions:
        """Articles dated ``start`` <= date (< ``end`` when given)."""
        lo = bisect.bisect_left(self.dates, start)
        hi = len(self.dates) if end is None else bisect.bisect_left(self.dates, end)
        return frozenset(self.by_date[lo:hi])


@runtime_checkable
class Clause(Protocol):
    """One condition of a query."""

    @property
    def type(self) -> str:
        """The registered clause type name."""
        ...

    def matching(self, index: CorpusIndex) -> Positions: ...

    def near_misses(self, index: CorpusIndex) -> Positions: ...

    def phrase(self) -> tuple[str, str]:
        """``(before, after)``: words before and after "articles" in the task sentence."""
        ...

    def describe(self) -> dict[str, Any]:
        """JSON-compatible description for instance metadata (``type`` and value)."""
        ...


@runtime_checkable
class ClauseType(Protocol):
    """A concept that can be turned into clauses."""

    name: str
    order: int
    """Position in canonical task names (lower first); the sentence order comes from ``phrase``."""

    def propose(self, anchor: Article, index: CorpusIndex, rng: random.Random) -> Clause:
        """A clause that ``anchor`` satisfies."""
        ...


CLAUSE_TYPES: Registry[ClauseType] = Registry("haystack clause", group="holistic.haystack_clauses")


def _name_tokens(name: str) -> set[str]:
    return {w.lower() for w in name.replace("-", " ").split() if len(w) >= 4}


@dataclass(frozen=True)
class CompanyClause:
    """The article is about ``company``."""

    company: str
    type: str = "company"

    def matching(self, index: CorpusIndex) -> Positions:
        return index.by_company.get(self.company, frozenset())

    def near_misses(self, index: CorpusIndex) -> Positions:
        """Articles about another company of the same sector or sharing a name word."""
        sector = index.company_sector.get(self.company)
        words = _name_tokens(self.company)
        out: set[int] = set()
        for other, positions in index.by_company.items():
            if other == self.company:
                continue
            same_sector = sector is not None and index.company_sector.get(other) == sector
            if same_sector or words & _name_tokens(other):
                out.update(positions)
        return frozenset(out)

    def phrase(self) -> tuple[str, str]:
        return "", f"about {self.company}"

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "company": self.company}


@dataclass(frozen=True)
class TimeClause:
    """The article was published on or after ``since``."""

    since: dt.date
    near_days: int = 90
    """Articles up to this many days before ``since`` are near misses."""
    type: str = "time"

    def matching(self, index: CorpusIndex) -> Positions:
        return index.dated_from(self.since)

    def near_misses(self, index: CorpusIndex) -> Positions:
        return index.dated_from(self.since - dt.timedelta(days=self.near_days), self.since)

    def phrase(self) -> tuple[str, str]:
        return "", f"published on or after {self.since.isoformat()}"

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "since": self.since.isoformat()}


@dataclass(frozen=True)
class SentimentClause:
    """The article's sentiment (about its company) is ``sentiment``."""

    sentiment: str
    type: str = "sentiment"

    def matching(self, index: CorpusIndex) -> Positions:
        return index.by_sentiment.get(self.sentiment, frozenset())

    def near_misses(self, index: CorpusIndex) -> Positions:
        """Articles of the adjacent sentiment classes."""
        i = SENTIMENTS.index(self.sentiment)
        out: set[int] = set()
        for j in (i - 1, i + 1):
            if 0 <= j < len(SENTIMENTS):
                out.update(index.by_sentiment.get(SENTIMENTS[j], frozenset()))
        return frozenset(out)

    def phrase(self) -> tuple[str, str]:
        return sentiment_label(self.sentiment), ""

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "sentiment": self.sentiment}


class CompanyType:
    name = "company"
    order = 0

    def propose(self, anchor: Article, index: CorpusIndex, rng: random.Random) -> Clause:
        return CompanyClause(anchor.company)


class TimeType:
    """``since`` is the anchor's date moved back by up to 60 days."""

    name = "time"
    order = 1

    def propose(self, anchor: Article, index: CorpusIndex, rng: random.Random) -> Clause:
        return TimeClause(anchor.date - dt.timedelta(days=rng.randint(0, 60)))


class SentimentType:
    name = "sentiment"
    order = 2

    def propose(self, anchor: Article, index: CorpusIndex, rng: random.Random) -> Clause:
        return SentimentClause(anchor.sentiment)


CLAUSE_TYPES.add("company", CompanyType())
CLAUSE_TYPES.add("time", TimeType())
CLAUSE_TYPES.add("sentiment", SentimentType())


def task_sentence(clauses: Sequence[Clause]) -> str:
    """``Find all very positive articles about X published on or after D``."""
    before = " ".join(p for p in (c.phrase()[0] for c in clauses) if p)
    after = " ".join(p for p in (c.phrase()[1] for c in clauses) if p)
    words = ["Find all", before, "articles", after]
    return " ".join(w for w in words if w)
