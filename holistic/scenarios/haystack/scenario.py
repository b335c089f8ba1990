"""``haystack``: controlled long-context retrieval over an annotated news corpus.

After Gupta et al. (2024), "Systematic evaluation of long-context LLMs on financial
concepts": each record asks the model to find every article satisfying a query
(``Find all very positive articles about Halden Bank``) in a context of a target
length built from needles, hard negatives and shared haystack
(:mod:`holistic.scenarios.haystack.records`), and to answer with JSON ids.

Arguments (``runspecs/longcontext.yaml`` shows them in use):

- ``tasks``: task names, clause types joined by ``+`` (default: ``company``, ``time``,
  ``company+time``, ``company+sentiment``); one run holds all of them, so tasks share
  haystacks and compare;
- ``lengths``: target context lengths in the evaluated model's tokens;
- ``tokenizer``: how lengths are counted: ``null`` (default) = the tokenizer of the
  model under evaluation (each model gets records of the requested length in its own
  tokens), a model registry name or a tokenizer folder / GGUF file (every model gets
  the same records), or ``chars/4`` (flagged in metadata);
- ``instruction_placement`` (``before``/``after``) and ``formatting``
  (``plain``/``markdown``): the two prompt ablations (lists multiply into runs);
- ``records_per_length`` (needle records per task and length; as many zero-needle
  twins are added), ``num_queries``, ``min_needles`` and ``max_needles`` (k is drawn in
  that range per record; a count that cannot fit the shortest length is refused at
  compile time, as is a hard-negative share that cannot fit), ``hard_negative_share``
  ([low, high] of the context), ``depth_bins`` (rows of the heatmaps), ``seed``;
- ``corpus``: ``synthetic`` (the embedded generator, ``corpus_size`` articles) or
  the path of a CSV/JSONL corpus (:mod:`holistic.scenarios.haystack.loader`).

Instance metadata keys (shown by the instance browser; the metric reads them):
``task``, ``query``, ``clauses``, ``length`` (target), ``context_tokens`` (actual, the
whole input), ``article_tokens``, ``num_needles``, ``zero_needle``, ``gold_ids`` (in
context order), ``needle_depths`` (parallel to ``gold_ids``; 0 = first article token,
1 = end), ``needle_depth_bins`` (each needle's bin, ``0-25``...), ``depth`` (the median
needle depth, the record's summary depth) and ``depth_bin`` (its bin; both ``null`` for
zero needles), ``depth_bins``, ``hard_negative_ids``,
``hard_negative_share`` (of the context's tokens), ``hard_negative_target_share``,
``context_ids`` (every article in order), ``num_articles``, ``example_ids`` (the ids in
the prompt's JSON example), ``pair`` (shared by a needle record and its zero-needle
twin; also ``sample_unit``, with ``sample_stratum`` = task|length, for down-sampling),
``query_index``, ``k_max`` (``max_needles``), ``formatting``, ``instruction_placement``,
``haystack`` (the shared-haystack key: corpus fingerprint, seed, length), ``corpus``,
``corpus_fingerprint``, ``length_unit`` (``tokens`` or ``chars/4``), ``tokenizer``,
``tokenizer_fallback``, ``tokenizer_fallback_reason``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import holistic.scenarios.haystack.prompts as prompts
from holistic.core.arguments import arg
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, Instance, Reference
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.haystack.clauses import CorpusIndex
from holistic.scenarios.haystack.corpus import Corpus
from holistic.scenarios.haystack.generator import DEFAULT_SIZE, cached_corpus
from holistic.scenarios.haystack.prompts import FORMATTINGS, PLACEMENTS
from holistic.scenarios.haystack.queries import BUILTIN_TASKS, Task, parse_task
from holistic.scenarios.haystack.records import TYPICAL_QUERY, RecordBuilder, RecordSettings, check_fit
from holistic.scenarios.haystack.tokens import resolve_length_unit
from holistic.scenarios.loading.prompt_format import prompt_format

DEFAULT_LENGTHS: tuple[int, ...] = (1536, 4096, 8192)
ESTIMATE_CHARS_PER_TOKEN = 3.5
"""Characters per token assumed by the compile-time fit check (SmolLM2's BPE gives ~3.5
on the synthetic corpus; a 4-characters estimate would let more through)."""
_NOT_APPLICABLE = {
    "calibration": "the answer is a set of article ids, not one answer whose probability could be calibrated",
    "robustness": "a typo in the haystack can change which articles match the query, and with it the gold set",
    "fairness": "the articles are about fictional companies; there is no dialect, gender or name to vary",
    "bias": "the output is a list of ids, not generated text about social groups",
    "toxicity": "the output is a list of ids, not free text",
}


def _int_list(name: str, value: Any) -> tuple[int, ...]:
    values = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{name} must be integers, got {v!r}")
        out.append(v)
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class HaystackScenario(BaseScenario):
    """Find every article matching a query in a long, controlled context."""

    info = ScenarioInfo(
        name="haystack",
        description=(
            "Controlled long-context retrieval (Gupta et al., 2024): find all news articles matching "
            "company/time/sentiment clauses among needles, hard negatives and haystack at set token lengths."
        ),
        task="long_context",
        default_adapter=prompt_format(
            output_prefix="Answer: ",
            instance_prefix="",
            max_train_instances=0,
            max_tokens=150,
            stop_sequences=None,
            post_processing=("json",),
        ),
        main_metric="haystack_f1_median",
        metric_categories=("accuracy", "efficiency"),
        not_applicable_reasons=_NOT_APPLICABLE,
        tags=("long_context", "retrieval", "finance", "targeted"),
    )

    tasks: Sequence[str] = arg(BUILTIN_TASKS, minItems=1)
    lengths: Sequence[int] = arg(DEFAULT_LENGTHS, minItems=1, items={"type": "integer", "minimum": 64})
    tokenizer: str | None = arg(None, type=["string", "null"])
    instruction_placement: str = arg("before", enum=PLACEMENTS)
    formatting: str = arg("plain", enum=FORMATTINGS)
    records_per_length: int = arg(4, minimum=1)
    num_queries: int = arg(20, minimum=1)
    min_needles: int = arg(1, minimum=1)
    max_needles: int = arg(10, minimum=1)
    hard_negative_share: Sequence[float] = arg(
        (0.1, 0.2), minItems=2, maxItems=2, items={"type": "number", "minimum": 0, "maximum": 0.8}
    )
    depth_bins: int = arg(4, minimum=1, maximum=20)
    corpus: str = "synthetic"
    corpus_size: int = arg(DEFAULT_SIZE, minimum=100, maximum=900000)
    seed: int = 0
    parsed_tasks: tuple[Task, ...] = field(init=False, repr=False, compare=False)
    settings: RecordSettings = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [self.tasks] if isinstance(self.tasks, str) else list(self.tasks)
        parsed = tuple(parse_task(t) for t in names)
        if len({t.name for t in parsed}) != len(parsed):
            raise ValueError(f"tasks has duplicates: {names}")
        share = tuple(float(x) for x in self.hard_negative_share)
        if len(share) != 2:
            raise ValueError(f"hard_negative_share must be [low, high], got {list(self.hard_negative_share)}")
        settings = RecordSettings(
            lengths=_int_list("lengths", self.lengths),
            records_per_length=self.records_per_length,
            num_queries=self.num_queries,
            min_needles=self.min_needles,
            max_needles=self.max_needles,
            hard_negative_share=(share[0], share[1]),
            depth_bins=self.depth_bins,
            formatting=self.formatting,
            placement=self.instruction_placement,
            seed=self.seed,
        )
        object.__setattr__(self, "parsed_tasks", parsed)
        object.__setattr__(self, "settings", settings)

    def check_args(self) -> None:
        """Compile-time check that ``max_needles`` and ``hard_negative_share`` fit the shortest length.

        Token counts are estimated at :data:`ESTIMATE_CHARS_PER_TOKEN` characters per
        token (no tokenizer is loaded at compile time); the run checks again with the
        real tokenizer.
        """
        try:
            corpus = self.load_corpus()
        except Exception:
            return  # a corpus that cannot be read is reported by the run
        texts = [prompts.article_block(a, self.settings.formatting) for a in corpus.articles]
        mean_chars = sum(len(t) for t in texts) / max(len(texts), 1)
        fixed = prompts.fixed_parts(
            prompts.instruction(TYPICAL_QUERY, ["X"], self.settings.formatting, self.settings.placement),
            self.settings.formatting,
            self.settings.placement,
        )
        check_fit(
            self.settings, mean_chars / ESTIMATE_CHARS_PER_TOKEN, math.ceil(len(fixed) / ESTIMATE_CHARS_PER_TOKEN)
        )

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        """Two records (needle, zero-needle) per task, length and ``records_per_length``; the
        input as long as the lengths' mean (in characters); and what the cells hold."""
        lengths = self.settings.lengths
        n_tasks, n_lengths = len(self.parsed_tasks), len(lengths)
        per_cell = self.records_per_length
        total = 2 * per_cell * n_tasks * n_lengths
        kept = per_cell
        if max_eval_instances is not None and max_eval_instances < total:
            kept = max_eval_instances // (2 * n_tasks * n_lengths)
        state = (
            "full, balanced"
            if kept == per_cell
            else (
                f"down-sampled to max_eval_instances {max_eval_instances}: {kept} of {per_cell} pairs per cell "
                f"(whole pairs, cells within one pair of each other)"
            )
        )
        note = (
            f"haystack {', '.join(self.tasks)} x lengths {', '.join(str(n) for n in lengths)}: "
            f"{n_tasks * n_lengths} task x length cells of {kept} needle + {kept} zero-needle records each "
            f"({state}; k = {self.min_needles}..{self.max_needles} needles at independent depths, "
            f"{self.depth_bins} depth bins); the same records under every placement/formatting value"
        )
        return PlanFacts(num_instances=total, input_chars=int(4 * sum(lengths) / max(n_lengths, 1)), notes=(note,))

    def load_corpus(self) -> Corpus:
        if self.corpus == "synthetic":
            return cached_corpus(self.corpus_size, self.settings.seed)
        from holistic.scenarios.haystack.loader import load_corpus

        return load_corpus(Path(self.corpus))

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        unit = resolve_length_unit(self.tokenizer, ctx)
        builder = RecordBuilder(CorpusIndex.of(self.load_corpus()), unit, self.settings)
        instances: list[Instance] = []
        for task in self.parsed_tasks:
            for record in builder.build_task(task):
                instances.append(
                    Instance(
                        id=record.id,
                        input=record.text,
                        references=(Reference(record.reference, (CORRECT_TAG,)),),
                        split=TEST_SPLIT,
                        metadata=record.metadata,
                    )
                )
        return instances
