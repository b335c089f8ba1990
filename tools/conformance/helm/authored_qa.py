"""Files the harness writes in the authors' formats for the question-answering and classification
scenarios whose data is not here (NarrativeQA, QuAC, HellaSwag, OpenBookQA, CivilComments,
Natural Questions, MS MARCO)."""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def write_narrative_qa(folder: Path) -> None:
    """deepmind/narrativeqa's ``qaps.csv`` and ``third_party/wikipedia/summaries.csv`` (their
    columns, CSV with a header), for 8 train, 3 valid and 14 test stories of 1 to 4 questions;
    some questions lack the final ``?``, some fields carry spaces around them."""
    counts = {"train": 8, "valid": 3, "test": 14}
    summaries, qaps = [], []
    for split, n in counts.items():
        for d in range(n):
            doc = f"{split[:2]}{d:03d}{'abcdef'[d % 6]}"
            hero, place = NAMES[(d * 7 + len(split)) % len(NAMES)], PLACES[(d * 3 + len(split)) % len(PLACES)]
            summary = (
                f" {hero} grows up in {place}. After a long winter, {hero} leaves home to find the lost "
                f"{OBJECTS[d % len(OBJECTS)]}, meets a stranger on the road and returns in spring. "
            )
            summaries.append([doc, split, summary, summary.lower().strip()])
            for q in range(1 + (d * 5 + len(split)) % 4):
                question = [f"Where does {hero} grow up", f"What does {hero} look for?", "When does the hero return?"]
                text = question[q % 3] + (" " if q == 3 else "")
                answers = [place, f"in {place}"] if q % 3 == 0 else [OBJECTS[d % len(OBJECTS)], "in spring "]
                qaps.append([doc, split, text, answers[0], answers[1], text.lower(), answers[0].lower(), answers[1]])
    columns = ["document_id", "set", "question", "answer1", "answer2"]
    _write_csv(folder / "qaps.csv", columns + [f"{c}_tokenized" for c in columns[2:]], qaps)
    _write_csv(
        folder / "third_party" / "wikipedia" / "summaries.csv",
        ["document_id", "set", "summary", "summary_tokenized"],
        summaries,
    )


NAMES = ("Ann", "Boris", "Chen", "Dalia", "Emeka", "Freya", "Goran")
PLACES = ("Lisbon", "a small fishing village", "the mountains", "Kyoto", "an old castle")
OBJECTS = ("ring", "map", "letter", "brother", "violin")


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def write_hellaswag(folder: Path) -> None:
    """rowanz/hellaswag's ``hellaswag_{train,val}.jsonl`` (its fields), 12 and 20 rows: ``ctx_b``
    lower-case, upper-case or empty, and one row whose right ending appears twice."""
    for split, n in (("train", 12), ("val", 20)):
        rows = []
        for i in range(n):
            hero = NAMES[i % len(NAMES)]
            ctx_a = f"{hero} stands in front of a {OBJECTS[i % len(OBJECTS)]} shop in {PLACES[i % len(PLACES)]}."
            ctx_b = ["he", "She then", ""][i % 3]
            endings = [
                f"walks inside and buys a {OBJECTS[(i + k) % len(OBJECTS)]}." if k != 2 else "waves at the camera."
                for k in range(4)
            ]
            if i == 7:
                endings[3] = endings[1]
            rows.append(
                {
                    "ind": 100 * (split == "val") + i,
                    "activity_label": ["Shopping", "Walking the dog", "Playing violin"][i % 3],
                    "ctx_a": ctx_a,
                    "ctx_b": ctx_b,
                    "ctx": f"{ctx_a} {ctx_b}",
                    "split": split,
                    "split_type": "indomain" if i % 2 else "zeroshot",
                    "label": 1 if i == 7 else i % 4,
                    "endings": endings,
                    "source_id": f"activitynet~v_{split}{i:03d}",
                }
            )
        _write_jsonl(folder / f"hellaswag_{split}.jsonl", rows)


def write_openbookqa(folder: Path) -> None:
    """OpenBookQA-V1-Sep2018's ``Data/Main/{train,dev,test}.jsonl`` (its fields), 8, 3 and 12 rows
    (HELM reads train and test only)."""
    for split, n in (("train", 8), ("dev", 3), ("test", 12)):
        rows = []
        for i in range(n):
            thing = OBJECTS[i % len(OBJECTS)]
            texts = [f"a {thing} made of {m}" for m in ("wood", "glass", "paper", "steel")]
            rows.append(
                {
                    "id": f"{split}-{700 + i}",
                    "question": {
                        "stem": f"Which {thing} would float on water in {PLACES[i % len(PLACES)]}",
                        "choices": [{"text": t, "label": k} for t, k in zip(texts, "ABCD", strict=True)],
                    },
                    "answerKey": "ABCD"[i % 4],
                }
            )
        _write_jsonl(folder / f"{split}.jsonl", rows)


def write_quac(folder: Path) -> None:
    """QuAC's ``{train,val}_v0.2.json`` (SQuAD-like, its fields), 8 and 14 dialogues of 3 to 7
    turns; some turns unanswerable (``CANNOTANSWER``), some with repeated answers."""
    for split, n in (("train", 8), ("val", 14)):
        data = []
        for d in range(n):
            hero, place = NAMES[d % len(NAMES)], PLACES[(d + len(split)) % len(PLACES)]
            context = f"{hero} was born in {place}. {hero} later played the {OBJECTS[d % len(OBJECTS)]} on tour."
            qas = []
            for q in range(3 + (d * 3 + len(split)) % 5):
                answer = [f"{hero} was born in {place}.", "CANNOTANSWER", f"{hero} later played"][q % 3]
                answers = [answer, answer] if q % 2 else [answer, answer.split(".")[0]]
                qas.append(
                    {
                        "id": f"C_{split}{d:03d}_q#{q}",
                        "question": ["Where was he born?", "Did he marry?", "What did he play?"][q % 3],
                        "answers": [{"text": a, "answer_start": 0} for a in answers],
                        "orig_answer": {"text": answer, "answer_start": 0},
                        "followup": "y",
                        "yesno": "x",
                    }
                )
            paragraph = {"id": f"C_{split}{d:03d}", "context": context + " CANNOTANSWER", "qas": qas}
            data.append(
                {
                    "title": hero,
                    "background": f"{hero} is a musician from {place}.",
                    "section_title": "Early life",
                    "paragraphs": [paragraph],
                }
            )
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{split}_v0.2.json").write_text(json.dumps({"data": data}), encoding="utf-8")


_CIVIL_GROUPS = ("male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black", "white")


def write_civil_comments(folder: Path) -> None:
    """WILDS's ``all_data_with_identities.csv`` (civilcomments_v1.0: an unnamed index column,
    ``id``, ``comment_text``, ``split``, the toxicity fractions, the eight identity groups and
    ``identity_any``), 24 train, 6 val and 14 test comments: toxicity on both sides of 0.5 and
    at it, comments with commas, quotes, a line break and spaces around them, identity marks
    above, at and below 0.5."""
    header = ["", "id", "comment_text", "split", "created_date", "toxicity", "severe_toxicity", *_CIVIL_GROUPS]
    rows = []
    counts = {"train": 24, "val": 6, "test": 14}
    number = 0
    for split, n in counts.items():
        for i in range(n):
            hero, thing = NAMES[(i + number) % len(NAMES)], OBJECTS[i % len(OBJECTS)]
            text = [
                f"{hero} is right about the {thing}.",
                f'"{hero}" said the {thing}, again, was stupid and so is everyone here',
                f"  What a {thing}!\nNobody asked, {hero}. ",
                f"I agree with {hero}; the {thing} is fine",
            ][i % 4]
            toxicity = ["0.0", "0.8", "0.5", "0.166667", "0.6"][(i + number) % 5]
            marks = ["0.0"] * len(_CIVIL_GROUPS)
            marks[i % len(_CIVIL_GROUPS)] = ["1.0", "0.5", "0.3"][i % 3]
            rows.append(
                [str(number), str(239000 + number), text, split, "2016-01-01 00:00:00+00", toxicity, "0.0", *marks]
            )
            number += 1
    _write_csv(folder / "all_data_with_identities.csv", header, rows)


def _nq_row(shard: int, i: int) -> dict[str, Any]:
    """One question of NaturalQuestions' full format: an HTML page (a heading and two
    paragraphs: an entity, a no-break space), its tokens with byte offsets, and five
    annotations (short answers repeated and paired with their long answer, one long answer
    without short ones, one annotation with neither); every seventh question has no short
    answer, every fifth a yes/no answer only."""
    n = shard * 7 + i
    hero, place, thing = NAMES[n % len(NAMES)], PLACES[n % len(PLACES)], OBJECTS[n % len(OBJECTS)]
    words = [
        ["<H1>", hero, "</H1>"],
        ["<P>", hero, "lives", "in", *place.split(), "&amp;", "keeps", "a", thing, ".", "</P>"],
        ["<P>", "Since", f"19{10 + n}", ",", hero, "has", "sold", "the", thing, "in", "New\u00a0York", ".", "</P>"],
    ]
    tokens: list[dict[str, Any]] = []
    page = "<html><body>"
    for paragraph in words:
        for word in paragraph:
            start = len((page + " ").encode("utf-8"))
            page += " " + word
            tokens.append(
                {
                    "token": word,
                    "start_byte": start,
                    "end_byte": len(page.encode("utf-8")),
                    "html_token": word[0] == "<",
                }
            )
    page += " </body></html>"

    def span(first: int, last: int) -> dict[str, int]:
        return {
            "start_byte": tokens[first]["start_byte"],
            "end_byte": tokens[last - 1]["end_byte"],
            "start_token": first,
            "end_token": last,
        }

    places = 4 + len(place.split())
    first_p, second_p = span(3, 3 + len(words[1])), span(3 + len(words[1]), len(tokens))
    place_span, year_span = (
        span(7, places + 3),
        span(len(words[0]) + len(words[1]) + 2, len(words[0]) + len(words[1]) + 3),
    )
    shorts = [[place_span], [place_span, span(places + 6, places + 7)], [], [], [year_span if n % 3 else place_span]]
    longs = [first_p, first_p, second_p, {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}]
    longs.append(second_p if n % 3 else first_p)
    if n % 7 == 3:
        shorts = [[] for _ in shorts]
    yes_no = "YES" if n % 5 == 4 else "NONE"
    if yes_no == "YES":
        shorts = [[] for _ in shorts]
    question = [f"where does {hero} live", f"what does {hero} Keep?", f"when did {hero} start selling the {thing}"][
        n % 3
    ]
    return {
        "example_id": 4_000_000 + n,
        "question_text": question,
        "document_title": hero,
        "document_url": f"https://en.wikipedia.org//w/index.php?title={hero}",
        "document_html": page,
        "document_tokens": tokens,
        "long_answer_candidates": [{**first_p, "top_level": True}, {**second_p, "top_level": True}],
        "annotations": [
            {
                "annotation_id": 100 * n + k,
                "long_answer": {**longs[k], "candidate_index": -1 if longs[k]["start_byte"] < 0 else k % 2},
                "short_answers": shorts[k],
                "yes_no_answer": yes_no if k == 0 else "NONE",
            }
            for k in range(5)
        ],
    }


def write_natural_qa(folder: Path) -> None:
    """NaturalQuestions' v1.0 dev shards ``nq-dev-0{0..4}.jsonl.gz`` (full format), 7 questions each."""
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    for shard in range(5):
        lines = "".join(json.dumps(_nq_row(shard, i), ensure_ascii=False) + "\n" for i in range(7))
        with gzip.GzipFile(folder / f"nq-dev-0{shard}.jsonl.gz", "wb", mtime=0) as fh:
            fh.write(lines.encode("utf-8"))


def _write_tsv(path: Path, rows: Iterable[Iterable[object]], sep: str = "\t") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(sep.join(str(v) for v in row) + "\n" for row in rows), encoding="utf-8")


def write_msmarco(folder: Path) -> None:
    """The files HELM 0.5.16 downloads for MS MARCO (``documents``, ``train_*``, ``regular_*``,
    ``trec_*`` ``.tsv``: HELM's CodaLab copies and the MS MARCO and TREC files, in their
    formats), small: 150 passages (one starting with a quoted word, which Python's csv reads
    as a quoted field, and one docid listed twice), 8 training queries (one unjudged, one with
    15 ranked passages; ranked lists not in rank order), 12 dev queries (one unjudged, one with
    20 ranked passages, judged passages beyond the top 30) and 9 TREC DL queries (qrels
    separated by spaces, grades 0 to 3, one query judged 0 and 1 only, a qid written with a
    leading zero in the queries file)."""
    rng = random.Random(7)
    docids = [7_000_000 + 37 * i for i in range(150)]
    documents = []
    for i, docid in enumerate(docids):
        hero, place, thing = NAMES[i % len(NAMES)], PLACES[(i // 7) % len(PLACES)], OBJECTS[(i // 3) % len(OBJECTS)]
        text = f"{hero} keeps the {thing} in {place}; it was bought in {1900 + i}."
        if i == 17:
            text = f'"{hero}" is a nickname. The {thing} stays in {place}.'
        if i == 40:
            text = f'The "{thing}" of {hero} is old.'
        documents.append([docid, text])
    documents.insert(60, [docids[5], "An earlier copy of this passage, replaced by the later line."])
    _write_tsv(folder / "documents.tsv", documents)

    def ranked(n: int) -> list[int]:
        return rng.sample(docids, n)

    def query(i: int) -> str:
        hero, thing = NAMES[i % len(NAMES)], OBJECTS[i % len(OBJECTS)]
        return [f"where does {hero} keep the {thing}", f"when was the {thing} bought", f"who owns the {thing}"][i % 3]

    # training queries: 20 ranked passages each, the relevant one ranked 1 to 10
    train_q, train_qrels, train_topk = [], [], []
    for i in range(8):
        qid = 100 + 11 * i
        train_q.append([qid, query(i)])
        lst = ranked(15 if i == 3 else 20)
        rows = [[qid, d, r] for r, d in enumerate(lst, start=1)]
        if i % 2:
            rows.reverse()  # HELM takes the first non-relevant passage ranked 11-20 in the file's order
        train_topk.extend(rows)
        if i != 5:
            train_qrels.append([qid, 0, lst[i % 10], 1])
            if i == 2:
                train_qrels.append([qid, 0, lst[(i + 4) % 10], 1])
    _write_split(folder, "train", train_q, train_qrels, train_topk)

    # the regular track (dev small): binary judgements
    dev_q: list[list[Any]] = []
    dev_qrels: list[list[Any]] = []
    dev_topk: list[list[Any]] = []
    for i in range(12):
        qid = 1_000 + 7 * i
        dev_q.append([qid, query(i + 1)])
        lst = ranked(20 if i == 4 else 40)
        dev_topk.extend([qid, d, r] for r, d in enumerate(lst, start=1))
        if i != 7:
            dev_qrels.append([qid, 0, lst[(3 * i) % 38], 1])  # some beyond the top 30
            if i % 4 == 1:
                dev_qrels.append([qid, 0, lst[i], 1])
    _write_split(folder, "regular", dev_q, dev_qrels, dev_topk)

    # TREC DL 2019: graded judgements 0-3, separated by spaces
    trec_q: list[list[Any]] = []
    trec_qrels: list[list[Any]] = []
    trec_topk: list[list[Any]] = []
    for i in range(9):
        qid = 19_000 + 13 * i
        trec_q.append(["0" + str(qid) if i == 2 else qid, query(i + 2)])
        lst = ranked(34)
        trec_topk.extend([qid, d, r] for r, d in enumerate(lst, start=1))
        judged = [*rng.sample(range(34), 8), 40 + i]
        for k, position in enumerate(judged):
            docid = lst[position] if position < 34 else docids[position + 60]
            grade = (k + i) % 4 if i != 6 else k % 2
            trec_qrels.append([qid, "Q0", docid, grade])
    _write_split(folder, "trec", trec_q, trec_qrels, trec_topk, qrels_sep=" ")


def _write_split(
    folder: Path, name: str, queries: list[Any], qrels: list[Any], topk: list[Any], qrels_sep: str = "\t"
) -> None:
    """One split's ``<name>_queries.tsv``, ``<name>_qrels.tsv`` and ``<name>_topk.tsv``."""
    _write_tsv(folder / f"{name}_queries.tsv", queries)
    _write_tsv(folder / f"{name}_qrels.tsv", qrels, sep=qrels_sep)
    _write_tsv(folder / f"{name}_topk.tsv", topk)


MSMARCO_FILES = tuple(
    f"{name}.tsv"
    for name in (
        "documents",
        *(f"{split}_{kind}" for split in ("train", "regular", "trec") for kind in ("queries", "qrels", "topk")),
    )
)
"""The files HELM's MS MARCO loader reads under ``scenarios/msmarco/data/`` (both tracks)."""
