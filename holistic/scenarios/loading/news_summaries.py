"""HELM's news summarization instances (CNN/DailyMail, XSum), from the rows its run reads.

HELM 0.5.16 reads each dataset as preprocessed rows (an article and its summary per row,
in ``train``, ``validation`` and ``test``) that are the Hugging Face conversions' rows:
``abisee/cnn_dailymail`` 3.0.0 (``article``, ``highlights``) and ``EdinburghNLP/xsum``
(``document``, ``summary``). holistic rebuilds those rows from the authors' files
(:func:`cnn_dailymail_row`, :func:`xsum_row`) or reads them from the Hub copy, then makes
HELM's instances of them (:func:`helm_summary_instances`), with the arguments of HELM's
run specs (``summarization_cnndm``, ``summarization_xsum``):

- every text has its line breaks made spaces and its whitespace runs made one space; an
  article keeps its first 512 whitespace-separated words (``doc_max_length``);
- a training article of fewer than 50 or more than 150 words (after that cut) is not in
  the in-context pool (``sampling_min_length``, ``sampling_max_length``); on XSum neither
  is one HELM's XSum filter drops (a BBC "Media playback is unsupported on your device"
  or "Last updated at" page, a summary of 10 words or fewer, or one longer than a fifth
  of its article);
- every validation and test row is an instance, empty or not (validation and test are
  both evaluated, as HELM's sample draws from the two);
- the order is the rows': training, then validation, then test.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference

DOC_MAX_WORDS = 512
TRAIN_MIN_WORDS = 50
TRAIN_MAX_WORDS = 150
SPLITS = (("train", TRAIN_SPLIT), ("validation", VALID_SPLIT), ("test", TEST_SPLIT))
"""The rows' split names -> holistic's, in the order HELM reads them."""


@dataclass(frozen=True)
class SummaryRow:
    """One preprocessed row: its id, article, summary and (authors' files only) metadata."""

    id: str
    article: str
    summary: str
    metadata: dict[str, Any] = field(default_factory=dict)


def helm_text(text: str, max_words: int | None = None) -> str:
    """HELM's cleaning: line breaks become spaces, whitespace runs one space, the first ``max_words`` kept."""
    return " ".join(text.replace("\n", " ").split()[:max_words])


def _xsum_dropped(article: str, summary: str) -> bool:
    """HELM's XSum filter of training rows (on the cleaned texts)."""
    if "Media playback is unsupported on your device" in article or "Last updated at" in article:
        return True
    summary_words = len(summary.split())
    return summary_words <= 10 or summary_words / len(article.split()) > 0.2


def helm_summary_instances(rows: Iterable[tuple[str, SummaryRow]], *, xsum_filter: bool = False) -> list[Instance]:
    """HELM's instances of ``(split, row)`` pairs in the rows' order (see the module's docstring)."""
    instances: list[Instance] = []
    for split, row in rows:
        article, summary = helm_text(row.article, DOC_MAX_WORDS), helm_text(row.summary)
        if split == TRAIN_SPLIT:
            words = len(article.split())
            if words > TRAIN_MAX_WORDS or words < TRAIN_MIN_WORDS:
                continue
            if xsum_filter and _xsum_dropped(article, summary):
                continue
        instances.append(
            Instance(
                id=row.id,
                input=article,
                references=(Reference(summary, (CORRECT_TAG,)),),
                split=split,
                metadata=dict(row.metadata),
            )
        )
    return instances


_END_TOKENS = frozenset(".!?'`\")\u2019\u201d")
"""The line endings abisee/cnn_dailymail's conversion takes as a sentence's end."""


def cnn_dailymail_row(story_id: str, text: str, metadata: dict[str, Any] | None = None) -> SummaryRow:
    """The ``abisee/cnn_dailymail`` 3.0.0 row of a ``.story`` file: each line stripped, `` .``
    added to a line that ends without a sentence end, the paragraphs before the first
    ``@highlight`` joined with spaces (the article), every later line a highlight, joined
    with line breaks."""
    article: list[str] = []
    highlights: list[str] = []
    in_highlights = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("@highlight"):
            in_highlights = True
            continue
        if "@highlight" not in line and line[-1] not in _END_TOKENS:
            line += " ."
        (highlights if in_highlights else article).append(line)
    return SummaryRow(story_id, " ".join(article), "\n".join(highlights), metadata or {})


_XSUM_DROPPED_LINES = frozenset(
    line + "\n"
    for line in (
        "Share this with",
        "Email",
        "Facebook",
        "Messenger",
        "Twitter",
        "Pinterest",
        "WhatsApp",
        "Linkedin",
        "LinkedIn",
        "Copy this link",
        "These are external links and will open in a new window",
    )
)
"""The share-button lines EdinburghNLP/xsum's conversion leaves out of a ``.summary`` file."""


def xsum_row(doc_id: str, text: str, where: str) -> SummaryRow:
    """The ``EdinburghNLP/xsum`` row of a ``.summary`` file: blank and share-button lines
    left out, then the ``[SN]``-delimited sections: ``FIRST-SENTENCE`` is the summary,
    ``RESTBODY`` the document (each stripped); title and URL go to the metadata."""
    kept = "".join(line for line in text.splitlines(keepends=True) if line not in _XSUM_DROPPED_LINES and line.strip())
    parts = kept.split("[SN]")
    if len(parts) < 9:
        raise DataSourceError(f"{where}: expected [SN]URL, TITLE, FIRST-SENTENCE and RESTBODY sections")
    return SummaryRow(doc_id, parts[8].strip(), parts[6].strip(), {"title": parts[4].strip(), "url": parts[2].strip()})
