"""The embedded synthetic financial-news corpus: fictional companies, dated, with sentiment.

:func:`generate_corpus` makes ``size`` distinct articles from the templates and word
lists of :mod:`holistic.scenarios.haystack.vocabulary`, deterministically from
``seed`` (no download, no global random state):

- companies: ``companies_per_sector`` per sector, named ``<stem> <sector suffix>``;
  stems are shared across sectors (``Halden Bank``, ``Halden Energy``), so similar
  names exist and make hard negatives for the company clause;
- dates: uniform over ``start``..``end`` (default 2019-01-01..2024-12-31);
- sentiment: five classes drawn with weights :data:`SENTIMENT_WEIGHTS`; the title
  and event sentence come from that class's templates, so the text carries it;
- ids: ``n`` plus six digits, drawn without replacement, so an id says nothing about
  an article's date, company or position.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from dataclasses import dataclass
from functools import lru_cache

import holistic.scenarios.haystack.vocabulary as vocab
from holistic.core.hashing import stable_seed
from holistic.scenarios.haystack.corpus import SENTIMENTS, Article, Corpus, make_corpus

SENTIMENT_WEIGHTS: tuple[float, ...] = (0.15, 0.2, 0.3, 0.2, 0.15)
"""Share of each class of :data:`~holistic.scenarios.haystack.corpus.SENTIMENTS` in the corpus."""

DEFAULT_SIZE = 8000
DEFAULT_START = dt.date(2019, 1, 1)
DEFAULT_END = dt.date(2024, 12, 31)


@dataclass(frozen=True)
class Company:
    """A fictional company of the synthetic corpus."""

    name: str
    stem: str
    sector: str
    ceo: str
    city: str


def make_companies(rng: random.Random, per_sector: int) -> list[Company]:
    """``per_sector`` companies per sector; each stem is used in at most three sectors."""
    total = per_sector * len(vocab.SECTORS)
    stems = list(vocab.NAME_STEMS)
    rng.shuffle(stems)
    needed = -(-total // 3)
    if needed > len(stems):
        raise ValueError(f"at most {3 * len(stems) // len(vocab.SECTORS)} companies per sector, got {per_sector}")
    pool = stems[: max(needed, min(len(stems), total))]
    uses = dict.fromkeys(pool, 0)
    companies: list[Company] = []
    for sector, (suffix, _, _) in vocab.SECTORS.items():
        free = [s for s in pool if uses[s] < 3]
        rng.shuffle(free)
        for stem in sorted(free[:per_sector], key=pool.index):
            uses[stem] += 1
            ceo = f"{rng.choice(vocab.FIRST_NAMES)} {rng.choice(vocab.LAST_NAMES)}"
            companies.append(Company(f"{stem} {suffix}", stem, sector, ceo, rng.choice(vocab.CITIES)))
    return companies


def _quarter(date: dt.date) -> tuple[str, int]:
    """The last completed quarter at ``date`` (what a results article reports)."""
    q = (date.month - 1) // 3
    return (f"Q{q}", date.year) if q else ("Q4", date.year - 1)


def _slots(rng: random.Random, company: Company, date: dt.date) -> dict[str, str]:
    _, products, segments = vocab.SECTORS[company.sector]
    quarter, year = _quarter(date)
    amount = rng.choice((rng.randint(12, 950), rng.randint(1, 9)))
    unit = "million" if amount >= 12 else "billion"
    return {
        "company": company.name,
        "ceo": company.ceo,
        "product": rng.choice(products),
        "segment": rng.choice(segments),
        "metric": rng.choice(vocab.METRICS),
        "pct": f"{rng.randint(1, 9)}.{rng.randint(0, 9)}",
        "big_pct": str(rng.randint(18, 65)),
        "amount": f"€{amount} {unit}",
        "quarter": quarter,
        "year": str(year),
        "region": rng.choice(vocab.REGIONS),
        "city": rng.choice(vocab.CITIES),
        "hq": company.city,
        "unit": rng.choice(vocab.UNITS),
        "jobs": f"{rng.randint(2, 90) * 50:,}",
        "analyst_firm": rng.choice(vocab.ANALYST_FIRMS),
        "role": rng.choice(vocab.ROLES),
        "person": f"{rng.choice(vocab.FIRST_NAMES)} {rng.choice(vocab.LAST_NAMES)}",
    }


_SENTENCE_START = re.compile(r"(^|[.!?] )([a-z])")


def _capitalise(text: str) -> str:
    """Upper-case the first letter of every sentence (slots may start one)."""
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)


def generate_corpus(
    size: int = DEFAULT_SIZE,
    *,
    seed: int = 0,
    companies_per_sector: int = 5,
    start: dt.date = DEFAULT_START,
    end: dt.date = DEFAULT_END,
) -> Corpus:
    """``size`` distinct synthetic articles (see the module docstring)."""
    if size < 1:
        raise ValueError(f"corpus size must be >= 1, got {size}")
    if size > 900_000:
        raise ValueError(f"corpus size must be <= 900000 (six-digit ids), got {size}")
    if end < start:
        raise ValueError(f"corpus end date {end} is before its start {start}")
    rng = random.Random(stable_seed("haystack-corpus", seed, size, companies_per_sector, str(start), str(end)))
    companies = make_companies(rng, companies_per_sector)
    ids = rng.sample(range(100_000, 1_000_000), size)
    span = (end - start).days
    seen: set[tuple[str, str]] = set()
    articles: list[Article] = []
    attempts = 0
    while len(articles) < size:
        attempts += 1
        if attempts > size * 50:
            raise ValueError(f"could not make {size} distinct articles; use a smaller corpus size")
        company = rng.choice(companies)
        date = start + dt.timedelta(days=rng.randint(0, span))
        sentiment = rng.choices(SENTIMENTS, weights=SENTIMENT_WEIGHTS)[0]
        title_t, body_t = rng.choice(vocab.EVENTS[sentiment])
        slots = _slots(rng, company, date)
        title = _capitalise(title_t.format(**slots))
        closing = rng.choice(vocab.CLOSINGS).format(**slots)
        body = _capitalise(body_t.format(**slots)) + (" " + closing if closing else "")
        if (title, body) in seen:
            continue
        seen.add((title, body))
        articles.append(
            Article(
                id=f"n{ids[len(articles)]}",
                title=title,
                body=body,
                company=company.name,
                date=date,
                sentiment=sentiment,
                sector=company.sector,
            )
        )
    articles.sort(key=lambda a: (a.date, a.id))
    return make_corpus("synthetic", articles)


@lru_cache(maxsize=4)
def cached_corpus(size: int, seed: int) -> Corpus:
    """:func:`generate_corpus` with default dates, memoised per process (runs re-use it)."""
    return generate_corpus(size, seed=seed)
