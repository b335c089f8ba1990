"""Tasks (conjunctions of clause types) and the queries sampled for them.

A task is named by its clause types joined with ``+`` (``company``, ``time``,
``company+time``, ``company+sentiment``; any combination of registered types works,
e.g. ``sentiment`` or ``company+sentiment+time``); the name is normalised to the
types' registered order (``time+company`` is ``company+time``). A :class:`Query` is one instantiation: its clauses, the
articles that satisfy all of them, and its hard negatives:

- with two or more clauses, an article that satisfies every clause but one
  (candidates failing a clause narrowly come first in the draw order);
- with one clause, an article that fails it narrowly (its ``near_misses``).

``excluded`` (matches and every hard-negative candidate) never enters the plain
haystack, so the gold set and the hard-negative share are exactly as recorded.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from holistic.core.errors import UnknownNameError
from holistic.core.hashing import stable_seed
from holistic.scenarios.haystack.clauses import CLAUSE_TYPES, Clause, ClauseType, CorpusIndex, Positions, task_sentence

BUILTIN_TASKS: tuple[str, ...] = ("company", "time", "company+time", "company+sentiment")
MAX_QUERY_ATTEMPTS = 2000


@dataclass(frozen=True)
class Task:
    """A named conjunction of clause types."""

    name: str
    """Canonical name, e.g. ``company+time``."""
    types: tuple[str, ...]


def parse_task(name: str) -> Task:
    """``"time+company"`` -> ``Task("company+time", ("company", "time"))``; unknown types name the known ones."""
    parts = [p.strip() for p in str(name).split("+")]
    if not all(parts):
        raise ValueError(f"task {name!r}: empty clause name (write clause types joined by '+', e.g. company+time)")
    types: list[ClauseType] = []
    for part in parts:
        try:
            types.append(CLAUSE_TYPES.get(part))
        except UnknownNameError as exc:
            raise ValueError(f"task {name!r}: {exc}") from None
    if len({t.name for t in types}) != len(types):
        raise ValueError(f"task {name!r} names a clause type twice")
    ordered = sorted(types, key=lambda t: (t.order, t.name))
    names = tuple(t.name for t in ordered)
    return Task("+".join(names), names)


@dataclass(frozen=True)
class Query:
    """One query of a task, resolved against a corpus."""

    task: Task
    clauses: tuple[Clause, ...]
    matches: tuple[int, ...]
    """Positions of every article satisfying all clauses (sorted)."""
    hard_negatives: tuple[int, ...]
    """Hard-negative candidates in draw-preference order (near misses first, each group shuffled)."""
    num_near: int
    """How many of ``hard_negatives`` (at the front) fail a clause narrowly."""
    excluded: Positions
    """Matches plus all hard-negative candidates: never used as plain haystack."""

    @property
    def sentence(self) -> str:
        return task_sentence(self.clauses)


def resolve_query(task: Task, clauses: tuple[Clause, ...], index: CorpusIndex, rng: random.Random) -> Query:
    """Matches and hard negatives of ``clauses`` (see the module docstring)."""
    sets = [c.matching(index) for c in clauses]
    matches = frozenset.intersection(*sets) if sets else index.all
    near: set[int] = set()
    far: set[int] = set()
    if len(clauses) == 1:
        near = set(clauses[0].near_misses(index) - sets[0])
    else:
        for i, clause in enumerate(clauses):
            others = frozenset.intersection(*(s for j, s in enumerate(sets) if j != i))
            failing = others - sets[i]
            close = failing & clause.near_misses(index)
            near |= close
            far |= failing - close
    far -= near
    near_list, far_list = sorted(near), sorted(far)
    rng.shuffle(near_list)
    rng.shuffle(far_list)
    return Query(
        task=task,
        clauses=clauses,
        matches=tuple(sorted(matches)),
        hard_negatives=tuple(near_list + far_list),
        num_near=len(near_list),
        excluded=frozenset(matches | near | far),
    )


def sample_queries(
    task: Task,
    index: CorpusIndex,
    count: int,
    *,
    min_matches: int,
    max_matches: int,
    min_hard_negatives: int,
    seed: int,
) -> list[Query]:
    """``count`` distinct queries with ``min_matches``..``max_matches`` matches and enough hard negatives.

    Each query starts from a seeded anchor article whose annotations propose the
    clauses. Raises ``ValueError`` when the corpus cannot support the request.
    """
    rng = random.Random(stable_seed("haystack-queries", seed, index.corpus.fingerprint, task.name))
    types = [CLAUSE_TYPES.get(t) for t in task.types]
    queries: list[Query] = []
    seen: set[str] = set()
    rejected = {"too few matches": 0, "too many matches": 0, "too few hard negatives": 0, "duplicate": 0}
    for _ in range(MAX_QUERY_ATTEMPTS):
        if len(queries) == count:
            break
        anchor = index.corpus[rng.randrange(len(index.corpus))]
        clauses = tuple(t.propose(anchor, index, rng) for t in types)
        sentence = task_sentence(clauses)
        if sentence in seen:
            rejected["duplicate"] += 1
            continue
        query = resolve_query(task, clauses, index, random.Random(rng.getrandbits(63)))
        if len(query.matches) < min_matches:
            rejected["too few matches"] += 1
        elif len(query.matches) > max_matches:
            rejected["too many matches"] += 1
        elif len(query.hard_negatives) < min_hard_negatives:
            rejected["too few hard negatives"] += 1
        else:
            seen.add(sentence)
            queries.append(query)
    if len(queries) < count:
        reasons = ", ".join(f"{k}: {v}" for k, v in rejected.items() if v)
        raise ValueError(
            f"task {task.name}: found only {len(queries)} of {count} queries with {min_matches}..{max_matches} "
            f"matching articles and >= {min_hard_negatives} hard negatives in corpus {index.corpus.name} "
            f"({len(index.corpus)} articles) after {MAX_QUERY_ATTEMPTS} draws ({reasons}); "
            "use a larger corpus, fewer queries, fewer needles or shorter lengths"
        )
    return queries
