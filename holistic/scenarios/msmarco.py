"""MS MARCO passage ranking (Nguyen et al., 2016), HELM's two tracks.

Each instance is one query; its references are passages in first-stage order, marked
for :mod:`holistic.metrics.ranking` and the ``ranking_binary`` adapter:

- ``Reference.first_stage_rank`` on the top ``num_candidates`` passages of the
  first-stage (BM25) list, in that order;
- the tag ``correct`` on relevant passages, and (TREC) ``Reference.relevance`` with the
  judged grade;
- judged passages missing from the first-stage top are appended after it (no
  first-stage rank), so the "boosted" variant can rerank them.

Authors' files (tab-separated):

- ``regular`` (dev, small): ``queries.dev.small.tsv`` (qid, query),
  ``qrels.dev.small.tsv`` (qid, 0, pid, 1), ``top1000.dev`` (qid, pid, query,
  passage; first-stage order as listed);
- ``trec`` (TREC DL 2019): ``msmarco-test2019-queries.tsv``, ``2019qrels-pass.txt``
  (qid, Q0, pid, grade 0-3; relevant means grade >= 2), ``msmarco-passagetest2019-top1000.tsv``.

``collection.tsv`` (pid, passage), when present, supplies judged passages that are
not in the first-stage file; without it they are left out. A fixed seeded set of 50
queries is the in-context pool (``train``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import replace
from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import RANKING
from holistic.scenarios.loading.common import FileScenario, check_choice, object_schema, with_train_pool
from holistic.scenarios.loading.readers import open_text
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

TRACKS = ("regular", "trec")
_BASE = "https://msmarco.z22.web.core.windows.net/msmarcoranking/"
_FILES = {
    "regular": ("queries.dev.small.tsv", "qrels.dev.small.tsv", "top1000.dev"),
    "trec": ("msmarco-test2019-queries.tsv", "2019qrels-pass.txt", "msmarco-passagetest2019-top1000.tsv"),
}
_ARCHIVES = {
    "queries.dev.small.tsv": ("collectionandqueries.tar.gz", "queries.dev.small.tsv"),
    "qrels.dev.small.tsv": ("collectionandqueries.tar.gz", "qrels.dev.small.tsv"),
    "collection.tsv": ("collectionandqueries.tar.gz", "collection.tsv"),
    "top1000.dev": ("top1000.dev.tar.gz", "top1000.dev"),
    "msmarco-test2019-queries.tsv": ("msmarco-test2019-queries.tsv.gz", None),
    "2019qrels-pass.txt": ("2019qrels-pass.txt", None),
    "msmarco-passagetest2019-top1000.tsv": ("msmarco-passagetest2019-top1000.tsv.gz", None),
}
_TREC_RELEVANT = 2
_POOL = 50


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    with open_text(path) as fh:
        for number, row in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
            if row:
                yield number, row


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    """qid -> pid -> grade, from ``qid<TAB>0<TAB>pid<TAB>grade`` (or space separated)."""
    out: dict[str, dict[str, int]] = {}
    with open_text(path) as fh:
        for number, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4 or not parts[3].lstrip("-").isdigit():
                raise DataSourceError(f"{path}:{number}: expected 'qid 0 pid grade', got {line.strip()[:60]!r}")
            out.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    return out


def _file(name: str) -> DataFile:
    archive, member = _ARCHIVES[name]
    return DataFile(name, downloads=(Download(_BASE + archive, member=member),))


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    WITH_COLLECTION = 0
    """The ranked lists with ``collection.tsv``."""
    WITHOUT_COLLECTION = 1
    """The ranked lists alone."""


class MSMARCOScenario(FileScenario):
    """Rerank first-stage passages by asking whether each answers the query."""

    info = ScenarioInfo(
        name="msmarco",
        description="MS MARCO passage ranking (regular dev queries or TREC DL 2019), scored by RR@10 / NDCG@10.",
        task="ranking",
        default_adapter={
            "method": "ranking_binary",
            "instructions": "",
            "max_train_instances": 4,
            "max_tokens": 5,
            "temperature": 0.0,
            "stop_sequences": ("\n",),
        },
        main_metric="rr@10",
        **RANKING,
        args_schema=object_schema(
            {
                "track": {"enum": list(TRACKS), "default": "regular"},
                "num_candidates": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 30},
            }
        ),
        tags=("information_retrieval", "ranking", "core"),
    )

    def __init__(self, track: str = "regular", num_candidates: int = 30) -> None:
        self.track = check_choice(track, TRACKS, "MS MARCO track")
        if self.track == "trec":
            # HELM reports the TREC track by NDCG@10 (graded judgements), the regular one by RR@10.
            self.info = replace(type(self).info, main_metric="ndcg@10")
        if isinstance(num_candidates, bool) or not isinstance(num_candidates, int) or num_candidates < 1:
            raise ValueError(f"num_candidates must be a positive integer, got {num_candidates!r}")
        self.num_candidates = num_candidates

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        return 43 if args.get("track") == "trec" else 6980 - _POOL

    def data_needs(self) -> DataNeeds:
        files = tuple(_file(name) for name in _FILES[self.track])
        return DataNeeds(
            "msmarco",
            layouts=((*files, _file("collection.tsv")), files),
            hint="https://microsoft.github.io/msmarco/ (passage ranking files)",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        queries_name, qrels_name, top_name = _FILES[self.track]
        queries: dict[str, str] = {}
        for number, row in _rows(data[queries_name]):
            if len(row) < 2:
                raise DataSourceError(f"{data[queries_name]}:{number}: expected 'qid<TAB>query'")
            queries[row[0]] = row[1]
        qrels = {q: judged for q, judged in _qrels(data[qrels_name]).items() if q in queries}
        candidates: dict[str, list[str]] = {}
        texts: dict[str, str] = {}
        for number, row in _rows(data[top_name]):
            if len(row) != 4:
                raise DataSourceError(f"{data[top_name]}:{number}: expected 'qid<TAB>pid<TAB>query<TAB>passage'")
            qid, pid, _, passage = row
            if qid not in qrels:
                continue
            ranked = candidates.setdefault(qid, [])
            if len(ranked) < self.num_candidates:
                ranked.append(pid)
                texts[pid] = passage
        missing = {pid for q, judged in qrels.items() for pid in judged if pid not in texts}
        if missing and data.layout == _Layout.WITH_COLLECTION:
            for _, row in _rows(data["collection.tsv"]):
                if row[0] in missing:
                    texts[row[0]] = row[1]
        instances = [
            self._instance(qid, queries[qid], candidates.get(qid, []), qrels[qid], texts)
            for qid in sorted(qrels, key=_qid_key)
        ]
        return with_train_pool(instances, min(_POOL, len(instances) // 4), f"msmarco-{self.track}-train-pool")

    def _instance(
        self, qid: str, query: str, ranked: list[str], judged: dict[str, int], texts: dict[str, str]
    ) -> Instance:
        threshold = _TREC_RELEVANT if self.track == "trec" else 1
        references = []
        pids = ranked + [pid for pid in sorted(judged, key=_qid_key) if pid not in ranked and pid in texts]
        for position, pid in enumerate(pids):
            grade = judged.get(pid, 0)
            references.append(
                Reference(
                    texts[pid],
                    (CORRECT_TAG,) if grade >= threshold else (),
                    relevance=grade if self.track == "trec" and pid in judged else None,
                    first_stage_rank=position + 1 if pid in ranked else None,
                )
            )
        return Instance(
            id=f"{self.track}-{qid}",
            input=query,
            references=tuple(references),
            split=VALID_SPLIT,
            metadata={"qid": qid, "pids": pids},
        )


def _qid_key(value: str) -> tuple[int, str]:
    return (int(value), value) if value.isdigit() else (1 << 62, value)
