"""The annotated article corpus a haystack is built from.

Every article carries the annotations the search clauses test: the company it is
about, its publication date and its sentiment on five classes. ``sector`` is
optional: when known it makes better near misses for the company clause (another
company of the same sector).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

SENTIMENTS: tuple[str, ...] = ("very_negative", "negative", "neutral", "positive", "very_positive")
"""The five sentiment classes, from worst to best (their order defines 'adjacent')."""

_SENTIMENT_ALIASES: dict[str, str] = {
    "-2": "very_negative",
    "-1": "negative",
    "0": "neutral",
    "1": "positive",
    "2": "very_positive",
    "strongly_negative": "very_negative",
    "strongly_positive": "very_positive",
}


def sentiment_label(sentiment: str) -> str:
    """The words used in prompts: ``very_positive`` -> ``very positive``."""
    return sentiment.replace("_", " ")


def parse_sentiment(value: object) -> str:
    """A sentiment class from a label as users write it (``Very Positive``, ``very-positive``, ``2``).

    Raises ``ValueError`` naming the valid classes.
    """
    raw = str(value).strip().lower()
    text = _SENTIMENT_ALIASES.get(raw) or raw.replace("-", "_").replace(" ", "_")
    text = _SENTIMENT_ALIASES.get(text, text)
    if text not in SENTIMENTS:
        raise ValueError(f"unknown sentiment {value!r}; expected one of {', '.join(SENTIMENTS)} (or -2..2)")
    return text


@dataclass(frozen=True)
class Article:
    """One annotated news article."""

    id: str
    """Identifier the model must return; unique within the corpus."""
    title: str
    body: str
    company: str
    """The company the article is about."""
    date: dt.date
    """Publication date."""
    sentiment: str
    """One of :data:`SENTIMENTS` (the article's sentiment about ``company``)."""
    sector: str | None = None
    """The company's sector, when known (used for company near misses)."""


@dataclass(frozen=True)
class Corpus:
    """An ordered, id-unique collection of articles plus where it came from."""

    name: str
    """``synthetic`` or the user's file name."""
    articles: tuple[Article, ...]
    fingerprint: str
    """Stable digest of the content (mixed into every seed, recorded in metadata)."""
    _by_id: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for position, article in enumerate(self.articles):
            if article.id in index:
                raise ValueError(f"corpus {self.name}: article id {article.id!r} appears twice")
            index[article.id] = position
        self._by_id.update(index)

    def __len__(self) -> int:
        return len(self.articles)

    def __iter__(self) -> Iterator[Article]:
        return iter(self.articles)

    def position(self, article_id: str) -> int:
        return self._by_id[article_id]

    def __getitem__(self, position: int) -> Article:
        return self.articles[position]

    def companies(self) -> list[str]:
        return sorted({a.company for a in self.articles})


def corpus_fingerprint(articles: Sequence[Article]) -> str:
    """sha256 over every field of every article, in order."""
    from holistic.core.hashing import sha256_hex

    rows = "\n".join(
        "\t".join((a.id, a.title, a.body, a.company, a.date.isoformat(), a.sentiment, a.sector or "")) for a in articles
    )
    return sha256_hex(rows)[:16]


def make_corpus(name: str, articles: Sequence[Article]) -> Corpus:
    return Corpus(name=name, articles=tuple(articles), fingerprint=corpus_fingerprint(articles))
