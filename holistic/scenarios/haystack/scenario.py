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
from pathlib import Path
from typing import Any

import holistic.scenarios.haystack.prompts as prompts
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, Instance, Reference
from holistic.scenarios.base import BaseScenario
from holistic.scenarios.haystack.clauses import CorpusIndex
from holistic.scenarios.haystack.corpus import Corpus
from holistic.scenarios.haystack.generator import DEFAULT_SIZE, cached_corpus
from holistic.scenarios.haystack.prompts import FORMATTINGS, PLACEMENTS
from holistic.scenarios.haystack.queries import BUILTIN_TASKS, Task, parse_task
from holistic.scenarios.haystack.records import TYPICAL_QUERY, RecordBuilder, RecordSettings, check_fit
from holistic.scenarios.haystack.tokens import resolve_length_unit
from holistic.scenarios.loading.common import object_schema
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
        args_schema=object_schema(
            {
                "tasks": {"type": "array", "items": {"type": "string"}, "minItems": 1, "default": list(BUILTIN_TASKS)},
                "lengths": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 64},
                    "minItems": 1,
                    "default": list(DEFAULT_LENGTHS),
                },
                "tokenizer": {"type": ["string", "null"], "default": None},
                "instruction_placement": {"enum": list(PLACEMENTS), "default": "before"},
                "formatting": {"enum": list(FORMATTINGS), "default": "plain"},
                "records_per_length": {"type": "integer", "minimum": 1, "default": 4},
                "num_queries": {"type": "integer", "minimum": 1, "default": 20},
                "min_needles": {"type": "integer", "minimum": 1, "default": 1},
                "max_needles": {"type": "integer", "minimum": 1, "default": 10},
                "hard_negative_share": {
                    "type": "array",
                    "items": {"type": "number", "minimum": 0, "maximum": 0.8},
                    "minItems": 2,
                    "maxItems": 2,
                    "default": [0.1, 0.2],
                },
                "depth_bins": {"type": "integer", "minimum": 1, "maximum": 20, "default": 4},
                "corpus": {"type": "string", "default": "synthetic"},
                "corpus_size": {"type": "integer", "minimum": 100, "maximum": 900000, "default": DEFAULT_SIZE},
                "seed": {"type": "integer", "default": 0},
            }
        ),
        tags=("long_context", "retrieval", "finance", "targeted"),
    )

    def __init__(
        self,
        tasks: list[str] | tuple[str, ...] = BUILTIN_TASKS,
        lengths: list[int] | tuple[int, ...] = DEFAULT_LENGTHS,
        tokenizer: str | None = None,
        instruction_placement: str = "before",
        formatting: str = "plain",
        records_per_length: int = 4,
        num_queries: int = 20,
        min_needles: int = 1,
        max_needles: int = 10,
        hard_negative_share: list[float] | tuple[float, float] = (0.1, 0.2),
        depth_bins: int = 4,
        corpus: str = "synthetic",
        corpus_size: int = DEFAULT_SIZE,
        seed: int = 0,
    ) -> None:
        names = [tasks] if isinstance(tasks, str) else list(tasks)
        self.tasks: list[Task] = [parse_task(t) for t in names]
        if len({t.name for t in self.tasks}) != len(self.tasks):
            raise ValueError(f"tasks has duplicates: {names}")
        share = tuple(float(x) for x in hard_negative_share)
        if len(share) != 2:
            raise ValueError(f"hard_negative_share must be [low, high], got {list(hard_negative_share)}")
        self.settings = RecordSettings(
            lengths=_int_list("lengths", lengths),
            records_per_length=records_per_length,
            num_queries=num_queries,
            min_needles=min_needles,
            max_needles=max_needles,
            hard_negative_share=(share[0], share[1]),
            depth_bins=depth_bins,
            formatting=formatting,
            placement=instruction_placement,
            seed=seed,
        )
        self.tokenizer = tokenizer
        self.corpus_ref = corpus
        self.corpus_size = corpus_size

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        tasks = args.get("tasks", BUILTIN_TASKS)
        lengths = args.get("lengths", DEFAULT_LENGTHS)
        n_tasks = 1 if isinstance(tasks, str) else len(tasks)
        n_lengths = len(lengths) if isinstance(lengths, (list, tuple)) else 1
        return 2 * n_tasks * n_lengths * int(args.get("records_per_length", 4))

    @classmethod
    def estimate_input_chars(cls, args: dict[str, Any]) -> int | None:
        lengths = args.get("lengths", DEFAULT_LENGTHS)
        values = lengths if isinstance(lengths, (list, tuple)) else [lengths]
        return int(4 * sum(values) / max(len(values), 1))

    @classmethod
    def check_args(cls, args: dict[str, Any]) -> None:
        """Compile-time check that ``max_needles`` and ``hard_negative_share`` fit the shortest length.

        Token counts are estimated at :data:`ESTIMATE_CHARS_PER_TOKEN` characters per
        token (no tokenizer is loaded at compile time); the run checks again with the
        real tokenizer.
        """
        try:
            scenario = cls(**args)
        except (TypeError, ValueError):
            return  # the run reports these with the scenario's own message
        try:
            corpus = scenario.load_corpus()
        except Exception:
            return  # a corpus that cannot be read is reported by the run
        texts = [prompts.article_block(a, scenario.settings.formatting) for a in corpus.articles]
        mean_chars = sum(len(t) for t in texts) / max(len(texts), 1)
        fixed = prompts.fixed_parts(
            prompts.instruction(TYPICAL_QUERY, ["X"], scenario.settings.formatting, scenario.settings.placement),
            scenario.settings.formatting,
            scenario.settings.placement,
        )
        check_fit(
            scenario.settings, mean_chars / ESTIMATE_CHARS_PER_TOKEN, math.ceil(len(fixed) / ESTIMATE_CHARS_PER_TOKEN)
        )

    @classmethod
    def plan_note(cls, args: dict[str, Any], max_eval_instances: int | None) -> str | None:
        """What ``--plan`` says about the cells of a run with ``args``."""
        tasks = args.get("tasks", list(BUILTIN_TASKS))
        lengths = args.get("lengths", list(DEFAULT_LENGTHS))
        n_tasks, n_lengths = len(tasks), len(lengths)
        per_cell = int(args.get("records_per_length", 4))
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
        return (
            f"haystack {', '.join(tasks)} x lengths {', '.join(str(n) for n in lengths)}: "
            f"{n_tasks * n_lengths} task x length cells of {kept} needle + {kept} zero-needle records each "
            f"({state}; k = {args.get('min_needles', 1)}..{args.get('max_needles', 10)} needles at independent depths, "
            f"{args.get('depth_bins', 4)} depth bins); the same records under every placement/formatting value"
        )

    def load_corpus(self) -> Corpus:
        if self.corpus_ref == "synthetic":
            return cached_corpus(self.corpus_size, self.settings.seed)
        from holistic.scenarios.haystack.loader import load_corpus

        return load_corpus(Path(self.corpus_ref))

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        unit = resolve_length_unit(self.tokenizer, ctx)
        builder = RecordBuilder(CorpusIndex.of(self.load_corpus()), unit, self.settings)
        instances: list[Instance] = []
        for task in self.tasks:
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
