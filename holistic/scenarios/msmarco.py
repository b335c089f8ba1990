"""MS MARCO passage ranking (Nguyen et al., 2016), HELM's two tracks.

Each instance is one query; its references are passages, marked for
:mod:`holistic.metrics.ranking` and the ``ranking_binary`` adapter: the tag ``correct``
on relevant passages, ``Reference.relevance`` with the judged grade and
``Reference.first_stage_rank`` on the passages of the first-stage (BM25) top
``num_candidates``.

``source: helm`` (the default) reads the files HELM 0.5.16 downloads and builds its
instances as HELM's ``MSMARCOScenario`` does. The files, tab-separated, read as Python's
``csv`` reads them by default (a field that starts with a double quote is a quoted field)
with integer ids:

- ``documents.tsv`` (docid, passage: the cleaned collection of MacAvaney et al., 2021);
- ``train_queries.tsv`` (qid, query), ``train_qrels.tsv`` (qid, 0, docid, relevance),
  ``train_topk.tsv`` (qid, docid, rank; the BM25 top 20);
- per track ``<track>_queries.tsv``, ``<track>_qrels.tsv`` and ``<track>_topk.tsv``:
  the dev (small) queries and their judgements for ``regular``, TREC DL 2019's for
  ``trec`` (qrels separated by spaces; relevant means grade >= 2).

One ``random.Random(1885)`` shuffles the docids (in the collection's order), then the
training qids, then the track's qids. The training pool is the first 1,000 training
queries that have a relevant judgement and at least 20 ranked passages, each with two
passages: its best-judged one and the first passage of its ranked list (in the file's
order) ranked 11 to 20 that is not relevant. Every track query with a relevant judgement
and at least ``num_candidates`` ranked passages is evaluated, with its judged passages
and its top ``num_candidates`` ones. Passages are in the shuffled docid order; a grade
of 0 carries no ``relevance`` (HELM tags only non-zero grades).

``source: authors`` is holistic's own loader of the official MS MARCO files:

- ``regular`` (dev, small): ``queries.dev.small.tsv`` (qid, query),
  ``qrels.dev.small.tsv`` (qid, 0, pid, 1), ``top1000.dev`` (qid, pid, query,
  passage; first-stage order as listed);
- ``trec`` (TREC DL 2019): ``msmarco-test2019-queries.tsv``, ``2019qrels-pass.txt``
  (qid, Q0, pid, grade 0-3; relevant means grade >= 2), ``msmarco-passagetest2019-top1000.tsv``.

There the top ``num_candidates`` passages come first in first-stage order and the judged
passages missing from it are appended (no first-stage rank), from ``collection.tsv``
(pid, passage) when present; a fixed seeded set of 50 queries is the in-context pool.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, VALID_SPLIT, AdapterDefaults, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import RANKING
from holistic.scenarios.loading.common import FileScenario, check_choice, with_train_pool
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


HELM_SOURCE = "helm"
AUTHORS_SOURCE = "authors"
SOURCES = (HELM_SOURCE, AUTHORS_SOURCE)
HELM_TRAIN_QUERIES = 2
"""HELM's in-context examples: two training queries, each shown with its two passages."""
_HELM_SEED = 1885
_HELM_POOL = 1000
_HELM_MIN_TOPK = 11
_HELM_TRAIN_TOPK = 20
_CODALAB = "https://worksheets.codalab.org/rest/bundles/{}/contents/blob/"
_BLOB = "https://msmarco.blob.core.windows.net/msmarcoranking/"
_HELM_URLS = {
    "documents": _CODALAB.format("0x50d32fc56ad04dd89510bf86f9c1c9d3"),
    "train_queries": _BLOB + "queries.train.tsv",
    "train_qrels": _BLOB + "qrels.train.tsv",
    "train_topk": _CODALAB.format("0x8c43d4ec02ea48d6a727683a9676b77b"),
    "regular_queries": _CODALAB.format("0xf5ccf54707b548f9a4c43502c6f15719"),
    "regular_qrels": _BLOB + "qrels.dev.small.tsv",
    "regular_topk": _CODALAB.format("0xbc3dfacb2b7746809e582ee01fa5fe70"),
    "trec_queries": _BLOB + "msmarco-test2019-queries.tsv.gz",
    "trec_qrels": "https://trec.nist.gov/data/deep/2019qrels-pass.txt",
    "trec_topk": _CODALAB.format("0x2e80572f93b748d594b817249013bdac"),
}
"""Where HELM 0.5.16 downloads each of its files (saved as ``<name>.tsv``)."""


def ranking_metadata(num_candidates: int, graded: bool) -> dict[str, Any]:
    """What :mod:`holistic.metrics.ranking` reads from a query's metadata: the first-stage depth
    (HELM names its first-stage stats ``... (topk=N)``) and whether the grades are graded
    (HELM's NDCG and binarised RR, recall and success on TREC)."""
    return {"first_stage_topk": num_candidates, "graded": graded}


def _helm_rows(path: Path, shape: tuple[str, ...], spaces: bool = False) -> Iterator[list[str]]:
    """The rows of one of HELM's files as HELM reads them: ``csv.reader`` with its default
    quoting over the tab-separated text (spaces first made tabs: TREC's qrels); the fields
    ``shape`` names ``id`` must be integers."""
    with path.open(encoding="utf-8") as fh:
        text: Iterable[str] = fh
        if spaces:
            text = fh.read().replace(" ", "\t").splitlines(keepends=True)
        for number, row in enumerate(csv.reader(text, delimiter="\t"), start=1):
            if len(row) != len(shape) or not all(
                _is_int(v) for v, kind in zip(row, shape, strict=True) if kind == "id"
            ):
                raise DataSourceError(f"{path}: row {number}: expected {len(shape)} fields {shape}, got {row!r:.80}")
            yield row


def _is_int(value: str) -> bool:
    try:
        int(value)
    except ValueError:
        return False
    return True


_ID_TEXT = ("id", "text")
_QRELS = ("id", "0", "id", "id")
_TOPK = ("id", "id", "id")


def _id_items(path: Path) -> dict[int, str]:
    out: dict[int, str] = {}
    for row in _helm_rows(path, _ID_TEXT):
        out[int(row[0])] = row[1]
    return out


def _helm_qrels(path: Path, spaces: bool) -> dict[int, dict[int, int]]:
    out: dict[int, dict[int, int]] = {}
    for qid, _, docid, grade in _helm_rows(path, _QRELS, spaces):
        out.setdefault(int(qid), {})[int(docid)] = int(grade)
    return out


def _helm_topk(path: Path) -> dict[int, dict[int, int]]:
    out: dict[int, dict[int, int]] = {}
    for qid, docid, rank in _helm_rows(path, _TOPK):
        out.setdefault(int(qid), {})[int(docid)] = int(rank)
    return out


class _HelmFiles:
    """HELM's files of one track, read and shuffled as HELM's ``MSMARCOScenario`` does."""

    def __init__(self, data: ResolvedData, track: str) -> None:
        self.data, self.track = data, track
        # The collection's docids in file order (a repeated id keeps its first place), then the
        # one generator shuffles them, the training qids and the track's qids, in that order.
        self.docids = list(dict.fromkeys(int(row[0]) for row in _helm_rows(data["documents.tsv"], _ID_TEXT)))
        self.queries = {
            split: _id_items(data[f"{prefix}_queries.tsv"]) for split, prefix in (("train", "train"), ("valid", track))
        }
        self.qrels = {
            "train": _helm_qrels(data["train_qrels.tsv"], spaces=False),
            "valid": _helm_qrels(data[f"{track}_qrels.tsv"], spaces=track == "trec"),
        }
        self.topk = {"train": _helm_topk(data["train_topk.tsv"]), "valid": _helm_topk(data[f"{track}_topk.tsv"])}
        self.gold = {"train": {1}, "valid": {_TREC_RELEVANT, 3} if track == "trec" else {1}}
        generator = random.Random(_HELM_SEED)
        generator.shuffle(self.docids)
        self.order = {docid: i for i, docid in enumerate(self.docids)}
        self.qids = {}
        for split in ("train", "valid"):
            qids = list(self.queries[split])
            generator.shuffle(qids)
            self.qids[split] = qids

    def _kept(self, split: str, depth: int | None) -> list[int]:
        """The qids with a relevant judgement (and, with ``depth``, that many ranked passages)."""
        qrels, topk, gold = self.qrels[split], self.topk[split], self.gold[split]
        kept = [q for q in self.qids[split] if q in qrels and gold & set(qrels[q].values())]
        if depth is not None:
            kept = [q for q in kept if q in topk and len(topk[q]) >= depth]
        return kept

    def instances(self, depth: int) -> list[Instance]:
        plans: list[tuple[str, int, list[int], int]] = []
        for qid in self._kept("train", _HELM_TRAIN_TOPK)[:_HELM_POOL]:
            judged, ranked = self.qrels["train"][qid], self.topk["train"][qid]
            best = sorted(judged, key=lambda d: judged[d], reverse=True)[0]
            wrong = [
                d
                for d, k in ranked.items()
                if _HELM_MIN_TOPK <= k <= _HELM_TRAIN_TOPK and judged.get(d) not in self.gold["train"]
            ]
            if not wrong:
                raise DataSourceError(
                    f"{self.data['train_topk.tsv']}: training query {qid} has no non-relevant passage ranked "
                    f"{_HELM_MIN_TOPK} to {_HELM_TRAIN_TOPK}"
                )
            plans.append((TRAIN_SPLIT, qid, [best, wrong[0]], _HELM_TRAIN_TOPK))
        for qid in self._kept("valid", depth):
            top = [d for d, k in self.topk["valid"][qid].items() if k <= depth]
            plans.append((VALID_SPLIT, qid, [*self.qrels["valid"][qid], *top], depth))
        needed = {d for _, _, docids, _ in plans for d in docids}
        texts: dict[int, str] = {}
        for row in _helm_rows(self.data["documents.tsv"], _ID_TEXT):
            if int(row[0]) in needed:
                texts[int(row[0])] = row[1]
        missing = sorted(needed - set(texts))
        if missing:
            raise DataSourceError(f"{self.data['documents.tsv']}: no passage for docid {missing[0]}")
        return [self._instance(split, qid, docids, depth, texts) for split, qid, docids, depth in plans]

    def _instance(self, split: str, qid: int, docids: list[int], depth: int, texts: dict[int, str]) -> Instance:
        judged, ranked, gold = self.qrels[split].get(qid, {}), self.topk[split].get(qid, {}), self.gold[split]
        references = []
        ordered = sorted(set(docids), key=self.order.__getitem__)
        for docid in ordered:
            grade = judged.get(docid)
            rank = ranked.get(docid)
            references.append(
                Reference(
                    texts[docid],
                    (CORRECT_TAG,) if grade in gold else (),
                    relevance=grade or None,
                    first_stage_rank=rank if rank and rank <= depth else None,
                )
            )
        return Instance(
            id=f"{'train' if split == TRAIN_SPLIT else self.track}-{qid}",
            input=self.queries[split][qid],
            references=tuple(references),
            split=split,
            metadata={
                "qid": str(qid),
                "docids": [str(d) for d in ordered],
                **ranking_metadata(depth, self.track == "trec"),
            },
        )


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    WITH_COLLECTION = 0
    """The ranked lists with ``collection.tsv``."""
    WITHOUT_COLLECTION = 1
    """The ranked lists alone."""


@dataclass(frozen=True, kw_only=True)
class MSMARCOScenario(FileScenario):
    """Rerank first-stage passages by asking whether each answers the query."""

    info = ScenarioInfo(
        name="msmarco",
        description="MS MARCO passage ranking (regular dev queries or TREC DL 2019), scored by RR@10 / NDCG@10.",
        task="ranking",
        default_adapter={
            "method": "ranking_binary",
            "instructions": "",
            "max_train_instances": HELM_TRAIN_QUERIES,
            "max_tokens": 5,
            "temperature": 0.0,
            "stop_sequences": ("\n",),
        },
        main_metric="RR@10",
        **RANKING,
        tags=("information_retrieval", "ranking", "core"),
    )

    track: str = arg("regular", enum=TRACKS)
    num_candidates: int = arg(30, minimum=1, maximum=1000)
    source: str = arg(HELM_SOURCE, enum=SOURCES)

    def __post_init__(self) -> None:
        check_choice(self.track, TRACKS, "MS MARCO track")
        check_choice(self.source, SOURCES, "MS MARCO source")
        main = {"regular": "RR@10", "trec": "NDCG@10"}[self.track]
        if self.source == AUTHORS_SOURCE:
            main = main.lower()
        # HELM reports the TREC track by NDCG@10 (graded judgements), the regular one by RR@10.
        if main != type(self).info.main_metric:
            object.__setattr__(self, "info", replace(type(self).info, main_metric=main))
        num_candidates = self.num_candidates
        if isinstance(num_candidates, bool) or not isinstance(num_candidates, int) or num_candidates < 1:
            raise ValueError(f"num_candidates must be a positive integer, got {num_candidates!r}")
        if self.source == HELM_SOURCE and not _HELM_MIN_TOPK <= num_candidates <= 1000:
            raise ValueError(f"num_candidates must be {_HELM_MIN_TOPK} to 1000 with source 'helm' (HELM's valid_topk)")

    def adapter_defaults(self) -> AdapterDefaults:
        """HELM's adapter; with ``source: authors`` four examples, alternately a relevant and a
        non-relevant passage (holistic's own pool has many passages per query)."""
        adapter: AdapterDefaults = {**type(self).info.default_adapter}
        if self.source == AUTHORS_SOURCE:
            adapter["max_train_instances"] = 4
        return adapter

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        if self.track == "trec":
            return PlanFacts(num_instances=43)
        return PlanFacts(num_instances=6980 if self.source == HELM_SOURCE else 6980 - _POOL)

    def data_needs(self) -> DataNeeds:
        hint = "https://microsoft.github.io/msmarco/ (passage ranking files)"
        if self.source == HELM_SOURCE:
            kinds = ("queries", "qrels", "topk")
            names = ("documents", "train_queries", "train_qrels", "train_topk", *(f"{self.track}_{k}" for k in kinds))
            files = tuple(DataFile(f"{name}.tsv", downloads=(Download(_HELM_URLS[name]),)) for name in names)
            return DataNeeds("msmarco", layouts=(files,), hint=hint + "; HELM 0.5.16's own copies (CodaLab bundles)")
        files = tuple(_file(name) for name in _FILES[self.track])
        return DataNeeds("msmarco", layouts=((*files, _file("collection.tsv")), files), hint=hint)

    def load(self, data: ResolvedData) -> list[Instance]:
        if self.source == HELM_SOURCE:
            return _HelmFiles(data, self.track).instances(self.num_candidates)
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
            metadata={"qid": qid, "pids": pids, **ranking_metadata(self.num_candidates, self.track == "trec")},
        )


def _qid_key(value: str) -> tuple[int, str]:
    return (int(value), value) if value.isdigit() else (1 << 62, value)
