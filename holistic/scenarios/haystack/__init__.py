"""Controlled long-context evaluation: the ``haystack`` scenario and its corpora.

Modules, one idea each:

- :mod:`.corpus`: the annotated article and corpus types;
- :mod:`.vocabulary`, :mod:`.generator`: the embedded synthetic financial-news corpus;
- :mod:`.loader`: a user's own corpus (CSV or JSONL);
- :mod:`.clauses`: the pluggable concepts (company, time, sentiment) as search clauses;
- :mod:`.queries`: tasks (clause combinations) and the queries sampled for them;
- :mod:`.tokens`: lengths in the evaluated model's tokens (or a flagged chars/4 fallback);
- :mod:`.prompts`: instruction placement and formatting ablations, JSON answer format;
- :mod:`.records`: needles, hard negatives, shared haystack and depths;
- :mod:`.scenario`: the ``haystack`` scenario;
- :mod:`.phrasebank`: ``financial_phrasebank``, the sentiment concept's short-context baseline.

Importing this package registers both scenarios.
"""

from holistic.scenarios.haystack import phrasebank, scenario
from holistic.scenarios.haystack.clauses import CLAUSE_TYPES, Clause, ClauseType, CorpusIndex
from holistic.scenarios.haystack.corpus import SENTIMENTS, Article, Corpus
from holistic.scenarios.haystack.generator import generate_corpus
from holistic.scenarios.haystack.loader import load_corpus
from holistic.scenarios.haystack.queries import BUILTIN_TASKS, parse_task
from holistic.scenarios.haystack.records import RecordBuilder, RecordSettings
from holistic.scenarios.haystack.tokens import resolve_length_unit

__all__ = [
    "BUILTIN_TASKS",
    "CLAUSE_TYPES",
    "SENTIMENTS",
    "Article",
    "Clause",
    "ClauseType",
    "Corpus",
    "CorpusIndex",
    "RecordBuilder",
    "RecordSettings",
    "generate_corpus",
    "load_corpus",
    "parse_task",
    "phrasebank",
    "resolve_length_unit",
    "scenario",
]
