"""Building test records: needles, hard negatives and haystack at a target length in tokens.

For every task, length and record number ``r`` (``records_per_length`` per task and
length) two records are built from the same query: a *needle* record and its
*zero-needle* twin, so there are exactly as many zero-needle records as needle
records. All choices are seeded from ``seed``, the corpus fingerprint, the task, the
length and ``r`` (never from global state).

A needle record:

1. its query is the task's query number ``r mod num_queries`` (queries are sampled
   once per task and re-used at every length);
2. ``k`` is drawn uniformly from ``min_needles..max_needles`` (the paper's k in
   [1, 10]); :func:`check_fit` makes sure that many needles fit every length;
3. each of the ``k`` needle depths is drawn independently and uniformly in [0, 1),
   and the needles are drawn from the query's matches;
4. a hard-negative share ``s`` is drawn uniformly from ``hard_negative_share``;
   hard negatives (near misses first) are added until they fill ``s`` of the
   target length, never more than the upper bound;
5. the rest is plain haystack: the length's **shared haystack order** (one seeded
   permutation of the corpus per length, the same for every task, query and
   ablation) is walked from the start, skipping the query's matches and
   hard-negative candidates, and articles too long for the room left, until 50
   articles in a row did not fit;
6. hard negatives are inserted at random positions among the haystack, and each
   needle where its depth falls;
7. the full text (instruction + articles) is counted with the length unit; while
   it exceeds the target, the last haystack article is dropped.

Depth is measured, not assumed: a needle's depth is the number of article tokens
before it divided by all article tokens (the instruction is not counted), so
``needle_depths`` is where the needles actually sit; ``needle_depth_bins`` gives each
needle's bin (the heatmaps' recall cells count needles by these), and ``depth_bin``
summarises the record by the bin of its median needle depth (its F1 cells).

Every record carries ``sample_unit`` (its pair) and ``sample_stratum`` (task and
length), so down-sampling keeps twins together and cells balanced; neither the record
ids nor their needles depend on the prompt ablations, so every ablation value sees the
same records.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import holistic.scenarios.haystack.prompts as prompts
from holistic.core.errors import ScenarioArgError
from holistic.core.hashing import stable_seed
from holistic.core.types import SAMPLE_STRATUM_KEY, SAMPLE_UNIT_KEY
from holistic.scenarios.haystack.clauses import CorpusIndex
from holistic.scenarios.haystack.queries import Query, Task, sample_queries
from holistic.scenarios.haystack.tokens import LengthUnit

MAX_MATCH_SHARE = 0.1
"""A query may match at most this share of the corpus (more would starve the haystack)."""
_ESTIMATE_SAMPLE = 300
_MAX_SKIPS = 50
"""Haystack articles skipped for being too long before the context counts as full."""
TYPICAL_QUERY = "Find all very positive articles about Northwind Holdings published between 2021-01-01 and 2021-06-30"
"""A long query sentence, for token budgets before queries are drawn."""


@dataclass(frozen=True)
class RecordSettings:
    """How records are built (the scenario's args)."""

    lengths: tuple[int, ...]
    """Target context lengths in the length unit's tokens."""
    records_per_length: int = 4
    """Needle records per task and length (as many zero-needle records are added)."""
    num_queries: int = 20
    """Distinct queries sampled per task (records cycle through them)."""
    min_needles: int = 1
    max_needles: int = 10
    hard_negative_share: tuple[float, float] = (0.1, 0.2)
    depth_bins: int = 4
    formatting: str = "plain"
    placement: str = "before"
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.lengths or any(int(n) < 64 for n in self.lengths):
            raise ValueError(f"lengths must be a non-empty list of token counts >= 64, got {list(self.lengths)}")
        if len(set(self.lengths)) != len(self.lengths):
            raise ValueError(f"lengths has duplicates: {list(self.lengths)}")
        if not 1 <= self.min_needles <= self.max_needles:
            raise ValueError(f"need 1 <= min_needles <= max_needles, got {self.min_needles} and {self.max_needles}")
        lo, hi = self.hard_negative_share
        if not 0 <= lo <= hi < 0.8:
            raise ValueError(f"hard_negative_share must be [low, high] with 0 <= low <= high < 0.8, got {[lo, hi]}")
        if self.depth_bins < 1:
            raise ValueError(f"depth_bins must be >= 1, got {self.depth_bins}")
        if self.records_per_length < 1 or self.num_queries < 1:
            raise ValueError("records_per_length and num_queries must be >= 1")
        if self.formatting not in prompts.FORMATTINGS:
            raise ValueError(f"formatting must be one of {', '.join(prompts.FORMATTINGS)}, got {self.formatting!r}")
        if self.placement not in prompts.PLACEMENTS:
            raise ValueError(
                f"instruction_placement must be one of {', '.join(prompts.PLACEMENTS)}, got {self.placement!r}"
            )


def depth_bin_label(index: int, bins: int) -> str:
    """``0-25``, ``25-50``... (percent of the article context)."""
    return f"{round(100 * index / bins)}-{round(100 * (index + 1) / bins)}"


def depth_bin_of(depth: float, bins: int) -> int:
    return min(int(depth * bins), bins - 1)


def check_fit(settings: RecordSettings, article_tokens: float, instruction_tokens: int) -> None:
    """Refuse a needle count or hard-negative share that cannot fit the shortest length.

    A record must hold ``max_needles`` articles of ``article_tokens`` tokens, hard
    negatives up to the upper ``hard_negative_share`` of the length and the instruction.
    The error names the field and the largest value that fits.
    """
    length = min(settings.lengths)
    low, high = settings.hard_negative_share
    room = length - instruction_tokens
    if settings.max_needles * article_tokens + high * length <= room:
        return
    facts = (
        f"at length {length} (the shortest), with ~{instruction_tokens} tokens of instruction and articles of "
        f"~{article_tokens:.0f} tokens"
    )
    largest_k = math.floor((room - high * length) / article_tokens)
    if largest_k >= settings.min_needles:
        raise ScenarioArgError(
            "max_needles",
            f"max_needles {settings.max_needles} does not fit {facts} and hard negatives up to {high:.0%}: "
            f"the largest max_needles that fits is {largest_k} (or raise the shortest length)",
        )
    largest_share = math.floor(100 * (room - settings.max_needles * article_tokens) / length) / 100
    if largest_share >= low:
        raise ScenarioArgError(
            "hard_negative_share",
            f"hard_negative_share up to {high:.0%} does not fit {facts} and {settings.max_needles} needles: "
            f"the largest upper share that fits is {largest_share:.2f} (or raise the shortest length)",
        )
    raise ScenarioArgError(
        "lengths",
        f"length {length} cannot hold {settings.min_needles}..{settings.max_needles} needles and "
        f"{low:.0%}-{high:.0%} hard negatives {facts}: raise the shortest length",
    )


@dataclass(frozen=True)
class Record:
    """One test record: the text and everything needed to score and display it."""

    id: str
    task: str
    text: str
    gold_ids: tuple[str, ...]
    """Needle ids in context order."""
    metadata: dict[str, Any]

    @property
    def reference(self) -> str:
        return json.dumps({prompts.ANSWER_KEY: list(self.gold_ids)})


@dataclass(frozen=True)
class _Layout:
    positions: tuple[int, ...]
    """Corpus positions in context order."""
    kinds: tuple[str, ...]
    """``needle``, ``hard_negative`` or ``haystack`` per position."""


class RecordBuilder:
    """Builds every record of a set of tasks over one corpus (see the module docstring)."""

    def __init__(self, index: CorpusIndex, unit: LengthUnit, settings: RecordSettings) -> None:
        self.index = index
        self.unit = unit
        self.settings = settings
        self._tokens: dict[int, int] = {}
        self._orders: dict[int, tuple[int, ...]] = {}
        self.mean_tokens, self.max_tokens = self._estimate_article_tokens()
        check_fit(settings, self.mean_tokens, self.instruction_tokens())

    # -- per-article facts -------------------------------------------------------
    def block(self, position: int) -> str:
        return prompts.article_block(self.index.corpus[position], self.settings.formatting)

    def tokens(self, position: int) -> int:
        known = self._tokens.get(position)
        if known is None:
            known = self._tokens[position] = self.unit.counter.count(self.block(position))
        return known

    def _estimate_article_tokens(self) -> tuple[float, int]:
        n = len(self.index.corpus)
        rng = random.Random(stable_seed("haystack-estimate", self.index.corpus.fingerprint))
        sample = rng.sample(range(n), min(n, _ESTIMATE_SAMPLE))
        counts = [self.tokens(p) for p in sample]
        return sum(counts) / len(counts), max(counts)

    def haystack_order(self, length: int) -> tuple[int, ...]:
        """The shared haystack order of ``length``: one permutation of the corpus for every task."""
        order = self._orders.get(length)
        if order is None:
            positions = list(range(len(self.index.corpus)))
            random.Random(
                stable_seed("haystack-order", self.settings.seed, self.index.corpus.fingerprint, length)
            ).shuffle(positions)
            order = self._orders[length] = tuple(positions)
        return order

    def instruction_tokens(self) -> int:
        """Tokens of the instruction and headings around the articles (a typical query)."""
        example = [self.index.corpus[p].id for p in range(min(2, len(self.index.corpus)))]
        text = prompts.instruction(TYPICAL_QUERY, example, self.settings.formatting, self.settings.placement)
        return self.unit.counter.count(prompts.fixed_parts(text, self.settings.formatting, self.settings.placement))

    # -- queries -----------------------------------------------------------------------
    def queries(self, task: Task) -> list[Query]:
        s = self.settings
        longest = max(s.lengths)
        k_needed = s.max_needles
        hn_needed = math.ceil(s.hard_negative_share[1] * longest / self.mean_tokens) + 3
        return sample_queries(
            task,
            self.index,
            s.num_queries,
            min_matches=k_needed,
            max_matches=max(k_needed, int(MAX_MATCH_SHARE * len(self.index.corpus))),
            min_hard_negatives=hn_needed,
            seed=s.seed,
        )

    # -- records -----------------------------------------------------------------------
    def build_task(self, task: Task) -> list[Record]:
        """Every record of ``task``: per length, ``records_per_length`` needle/zero-needle pairs."""
        queries = self.queries(task)
        out: list[Record] = []
        for length in self.settings.lengths:
            for r in range(self.settings.records_per_length):
                out.extend(self.build_pair(task, queries[r % len(queries)], length, r))
        return out

    def build_pair(self, task: Task, query: Query, length: int, r: int) -> tuple[Record, Record]:
        s = self.settings
        base_id = f"{task.name.replace('+', '_')}-{length}-{r:03d}"
        rng = random.Random(stable_seed("haystack-record", s.seed, self.index.corpus.fingerprint, task.name, length, r))
        k = rng.randint(s.min_needles, s.max_needles)
        needles = rng.sample(query.matches, k)
        targets = sorted(rng.random() for _ in range(k))
        share = rng.uniform(*s.hard_negative_share)
        example = query.hard_negatives[-2:]
        hard = self._hard_negatives(query, rng, share, length, exclude=set(example))
        layout_seed = rng.getrandbits(63)
        common = {
            "query_index": r % s.num_queries,
            "pair": base_id,
            "hard_negative_target_share": round(share, 4),
            SAMPLE_UNIT_KEY: base_id,
            SAMPLE_STRATUM_KEY: f"{task.name}|{length}",
        }
        needle_record = self._record(
            f"{base_id}-needle",
            task,
            query,
            length,
            needles,
            targets,
            hard,
            example,
            layout_seed,
            {**common, "k_max": s.max_needles},
        )
        zero_record = self._record(
            f"{base_id}-zero",
            task,
            query,
            length,
            [],
            [],
            hard,
            example,
            layout_seed ^ 1,
            {**common, "k_max": 0},
        )
        return needle_record, zero_record

    def _hard_negatives(
        self, query: Query, rng: random.Random, share: float, length: int, exclude: set[int]
    ) -> list[int]:
        near = [p for p in query.hard_negatives[: query.num_near] if p not in exclude]
        far = [p for p in query.hard_negatives[query.num_near :] if p not in exclude]
        rng.shuffle(near)
        rng.shuffle(far)
        # The share is of the context actually built, which may fall short of the target
        # length by up to one article: the ceiling allows for that.
        ceiling = self.settings.hard_negative_share[1] * (length - self.max_tokens)
        target = min(share * length, ceiling)
        chosen: list[int] = []
        total = 0
        for position in near + far:
            if total >= target:
                break
            t = self.tokens(position)
            if total + t > ceiling:
                continue
            chosen.append(position)
            total += t
        return chosen

    def _layout(
        self,
        length: int,
        budget: int,
        needles: Sequence[int],
        targets: Sequence[float],
        hard: Sequence[int],
        excluded: frozenset[int],
        rng: random.Random,
    ) -> _Layout:
        used = set(needles) | set(hard)
        room = budget - sum(self.tokens(p) for p in used)
        filler: list[int] = []
        misses = 0
        for position in self.haystack_order(length):
            if position in excluded or position in used:
                continue
            t = self.tokens(position)
            if t > room:  # skip it; a shorter article further on may still fit
                misses += 1
                if misses > _MAX_SKIPS:
                    break
                continue
            filler.append(position)
            room -= t
        items: list[tuple[int, str]] = [(p, "haystack") for p in filler]
        for position in hard:
            items.insert(rng.randint(0, len(items)), (position, "hard_negative"))
        total = sum(self.tokens(p) for p, _ in items) + sum(self.tokens(p) for p in needles)
        placed: list[tuple[int, str]] = []
        offset, pending = 0, list(zip(targets, needles, strict=True))
        for item in items:
            t = self.tokens(item[0])
            while pending and pending[0][0] * total <= offset + t / 2:
                placed.append((pending[0][1], "needle"))
                offset += self.tokens(pending.pop(0)[1])
            placed.append(item)
            offset += t
        placed.extend((p, "needle") for _, p in pending)
        return _Layout(tuple(p for p, _ in placed), tuple(kind for _, kind in placed))

    def _record(
        self,
        record_id: str,
        task: Task,
        query: Query,
        length: int,
        needles: Sequence[int],
        targets: Sequence[float],
        hard: Sequence[int],
        example: Sequence[int],
        layout_seed: int,
        extra: dict[str, Any],
    ) -> Record:
        s = self.settings
        corpus = self.index.corpus
        example_ids = [corpus[p].id for p in example]
        instruction = prompts.instruction(query.sentence, example_ids, s.formatting, s.placement)
        fixed = self.unit.counter.count(prompts.fixed_parts(instruction, s.formatting, s.placement))
        layout = self._layout(
            length, length - fixed, needles, targets, hard, query.excluded, random.Random(layout_seed)
        )
        positions, kinds = list(layout.positions), list(layout.kinds)
        while True:
            text = prompts.assemble(instruction, [self.block(p) for p in positions], s.formatting, s.placement)
            context_tokens = self.unit.counter.count(text)
            # Over the target: drop the last haystack article; with none left (long needles),
            # the last hard negative. Needles stay.
            kind = next((k for k in ("haystack", "hard_negative") if k in kinds), None)
            if context_tokens <= length or kind is None:
                break
            drop = len(kinds) - 1 - kinds[::-1].index(kind)
            del positions[drop], kinds[drop]
        block_tokens = [self.tokens(p) for p in positions]
        article_tokens = sum(block_tokens)
        starts = [sum(block_tokens[:i]) for i in range(len(block_tokens))]
        gold = [
            (corpus[p].id, round(starts[i] / article_tokens, 4))
            for i, p in enumerate(positions)
            if kinds[i] == "needle"
        ]
        hard_tokens = sum(t for t, kind in zip(block_tokens, kinds, strict=True) if kind == "hard_negative")
        depths = [d for _, d in gold]
        median_depth = round(statistics.median(depths), 4) if depths else None
        metadata: dict[str, Any] = {
            "task": task.name,
            "query": query.sentence,
            "clauses": [c.describe() for c in query.clauses],
            "length": length,
            "context_tokens": context_tokens,
            "article_tokens": article_tokens,
            "num_needles": len(gold),
            "zero_needle": not gold,
            "gold_ids": [i for i, _ in gold],
            "needle_depths": depths,
            "needle_depth_bins": [depth_bin_label(depth_bin_of(d, s.depth_bins), s.depth_bins) for d in depths],
            "depth": median_depth,
            "depth_bin": depth_bin_label(depth_bin_of(median_depth, s.depth_bins), s.depth_bins)
            if median_depth is not None
            else None,
            "depth_bins": s.depth_bins,
            "hard_negative_ids": [
                corpus[p].id for p, kind in zip(positions, kinds, strict=True) if kind == "hard_negative"
            ],
            "hard_negative_share": round(hard_tokens / context_tokens, 4) if context_tokens else 0.0,
            "context_ids": [corpus[p].id for p in positions],
            "num_articles": len(positions),
            "example_ids": example_ids,
            "formatting": s.formatting,
            "instruction_placement": s.placement,
            "haystack": f"{corpus.fingerprint}-{s.seed}-{length}",
            "corpus": corpus.name,
            "corpus_fingerprint": corpus.fingerprint,
            "length_unit": "chars/4" if self.unit.fallback else "tokens",
            "tokenizer": self.unit.name,
            "tokenizer_fallback": self.unit.fallback,
            "tokenizer_fallback_reason": self.unit.reason,
            **extra,
        }
        return Record(record_id, task.name, text, tuple(metadata["gold_ids"]), metadata)
