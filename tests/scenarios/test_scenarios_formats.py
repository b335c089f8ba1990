"""Each core loader reads small files written here in the authors' exact format."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.registry import create_scenario


def _load(ctx: ScenarioContext, name: str, **args: object) -> list[Instance]:
    return create_scenario(ScenarioSpec.make(name, args)).get_instances(ctx)


def _folder(ctx: ScenarioContext, name: str) -> Path:
    assert ctx.data_root is not None
    path = ctx.data_root / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _csv(path: Path, header: list[str] | None, rows: list[list[str]], delimiter: str = ",") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter=delimiter)
        if header:
            writer.writerow(header)
        writer.writerows(rows)


def test_mmlu_written_files_and_bad_answer(offline_ctx: ScenarioContext) -> None:
    from holistic.scenarios.loading.sources import ResolvedData
    from holistic.scenarios.mmlu import MMLUScenario

    root = _folder(offline_ctx, "mmlu")
    paths = {}
    for folder, n in (("dev", 5), ("val", 2), ("test", 3)):
        rel = f"{folder}/virology_{folder}.csv"
        _csv(root / rel, None, [[f"Q{folder}{i}, with comma", "w", "x", "y", "z", "ABCD"[i % 4]] for i in range(n)])
        paths[rel] = root / rel
    # The authors' MMLU files are pinned by sha256: a different file in the mirror is refused.
    with pytest.raises(DataSourceError, match=r"checksum mismatch for mmlu/dev/virology_dev\.csv"):
        _load(offline_ctx, "mmlu", subject="virology")
    scenario = MMLUScenario(subject="virology")
    instances = scenario.load(ResolvedData("mmlu", 0, paths))
    assert Counter(i.split for i in instances) == {"train": 5, "valid": 2, "test": 3}
    test = [i for i in instances if i.split == "test"]
    assert [i.correct_references[0].output for i in test] == ["w", "x", "y"]
    assert test[0].input == "Qtest0, with comma"
    _csv(root / "test" / "virology_test.csv", None, [["Q", "w", "x", "y", "z", "E"]])
    with pytest.raises(DataSourceError, match="row 1: answer 'E' is not one of A, B, C, D"):
        scenario.load(ResolvedData("mmlu", 0, paths))
    with pytest.raises(ValueError, match="did you mean 'virology'"):
        create_scenario(ScenarioSpec.make("mmlu", {"subject": "virolgy"}))


def test_boolq_train_and_val_in_google_format(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "boolq")
    _jsonl(root / "train.jsonl", [{"question": "is it Paris", "title": "T", "answer": True, "passage": "P -- Q."}])
    _jsonl(root / "val.jsonl", [{"question": "is it not", "passage": "X -- Y.", "idx": 7, "label": False}])
    instances = _load(offline_ctx, "boolq")
    assert [(i.id, i.split) for i in instances] == [("train-0", "train"), ("val-7", "valid")]
    # HELM's input: the passage without its title, the question as str.capitalize() makes it
    assert instances[0].input == "P -- Q.\nQuestion: Is it paris?"
    assert instances[1].input == "Y.\nQuestion: Is it not?"
    assert instances[1].correct_references[0].output == "No"


def test_imdb_official_tree(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "imdb")
    for split in ("train", "test"):
        for polarity, rating in (("pos", 9), ("neg", 2)):
            folder = root / "aclImdb" / split / polarity
            folder.mkdir(parents=True)
            (folder / f"3_{rating}.txt").write_text(f"{polarity} review<br /><br />second line", encoding="utf-8")
            (folder / f"10_{rating}.txt").write_text("another", encoding="utf-8")
    instances = _load(offline_ctx, "imdb")
    # HELM's split names (the test reviews are its valid split) and order (positive, then negative)
    assert Counter(i.split for i in instances) == {"train": 4, "valid": 4}
    assert [i.id for i in instances if i.split == "valid"] == [
        "valid-pos-3",
        "valid-pos-10",
        "valid-neg-3",
        "valid-neg-10",
    ]
    first = next(i for i in instances if i.id == "valid-pos-3")
    assert first.input == "pos review<br /><br />second line"  # as HELM reads it
    assert first.correct_references[0].output == "Positive"
    assert first.metadata["rating"] == 9


def test_hellaswag(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "hellaswag")
    row = {
        "ind": 4,
        "activity_label": "Removing ice from car",
        "ctx_a": "Then,",
        "ctx_b": "the man writes",
        "ctx": "Then, the man writes",
        "endings": ["a", "b", "c", "d"],
        "label": 2,
        "split": "val",
        "source_id": "s",
    }
    no_ctx_b = {**row, "ind": 5, "ctx_b": "", "ctx": "Then,", "endings": ["x", "y", "x", "z"], "label": 0}
    _jsonl(root / "hellaswag_train.jsonl", [{**row, "ind": 1, "label": 0}])
    _jsonl(root / "hellaswag_val.jsonl", [row, no_ctx_b])
    instances = _load(offline_ctx, "hellaswag")
    assert [(i.id, i.split) for i in instances] == [("train-1", "train"), ("valid-4", "valid"), ("valid-5", "valid")]
    # HELM's input: ctx_a, a space and ctx_b with its first letter upper-cased (a space even when ctx_b is empty)
    assert instances[1].input == "Removing ice from car: Then, The man writes"
    assert instances[2].input == "Removing ice from car: Then, "
    assert [r.output for r in instances[1].correct_references] == ["c"]
    # every ending equal to the right one is correct, as in HELM
    assert [r.is_correct for r in instances[2].references] == [True, False, True, False]


@pytest.mark.parametrize(
    ("name", "file", "good", "bad", "message"),
    [
        (
            "hellaswag",
            "hellaswag_val.jsonl",
            {"ind": 1, "ctx_a": "a", "ctx_b": "b", "endings": ["x", "y"], "label": 0},
            {"ind": 2, "ctx_a": "a", "ctx_b": "b", "endings": ["x", "y"], "label": "0"},
            "integer label",
        ),
        ("boolq", "val.jsonl", {"question": "q", "passage": "t -- p", "label": True}, {"passage": "p"}, "'question'"),
    ],
)
def test_a_bad_row_after_a_blank_line_names_the_files_own_line(
    offline_ctx: ScenarioContext, name: str, file: str, good: dict[str, Any], bad: dict[str, Any], message: str
) -> None:
    """JSON Lines loaders skip blank lines; the error names the line a user opens in an editor
    (line 4 here), not the row's position among the non-blank ones (3)."""
    folder = _folder(offline_ctx, name)
    if name == "hellaswag":  # its loader needs the training file beside the validation file
        _jsonl(folder / "hellaswag_train.jsonl", [good])
    path = folder / file
    path.write_text(f"{json.dumps(good)}\n{json.dumps(good)}\n\n{json.dumps(bad)}\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=rf"{file}:4: .*{message}"):
        _load(offline_ctx, name)


def test_openbookqa(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "openbookqa")

    def row(i: str, key: str) -> dict[str, Any]:
        return {
            "id": i,
            "question": {
                "stem": "The sun is",
                "choices": [{"text": t, "label": k} for t, k in zip("wxyz", "ABCD", strict=True)],
            },
            "answerKey": key,
        }

    _jsonl(root / "train.jsonl", [row("t1", "A")])
    _jsonl(root / "dev.jsonl", [row("d1", "B")])
    _jsonl(root / "test.jsonl", [row("e1", "D"), row("e2", "C")])
    instances = _load(offline_ctx, "openbookqa")
    # HELM's loader reads the training and test files only (the dev file is not evaluated)
    assert [(i.id, i.split, i.correct_references[0].output) for i in instances] == [
        ("t1", "train", "w"),
        ("e1", "test", "z"),
        ("e2", "test", "y"),
    ]


def test_truthful_qa_is_helms_loader(offline_ctx: ScenarioContext) -> None:
    """HELM's TruthfulQA: answers stripped and given a final period, the incorrect ones then the
    best one, rotated left by ord(best[0]) % n; the first 20% of the file (rounded down) is train."""
    root = _folder(offline_ctx, "truthful_qa")
    header = ["Type", "Category", "Question", "Best Answer", "Correct Answers", "Incorrect Answers", "Source"]
    rows = [
        # ord("B") = 66: 66 % 3 = 0, no rotation; the best answer is last
        ["Adversarial", "Misc", " Why? ", "Because", "Because", "No reason; ; It is not.", "src"],
        # ord("a") = 97: 97 % 4 = 1, rotated by one: the best answer moves to third place
        ["Non-Adversarial", "Law", "Who?", "a person.", "a person", "Nobody;Everybody ; A cat", "src"],
    ] + [["Adversarial", "Misc", f"Question {i}?", "Yes", "Yes", "No", "src"] for i in range(8)]
    _csv(root / "TruthfulQA.csv", header, rows)
    instances = _load(offline_ctx, "truthful_qa")
    assert [(i.id, i.split) for i in instances[:3]] == [("q0000", "train"), ("q0001", "train"), ("q0002", "valid")]
    assert Counter(i.split for i in instances) == {"train": 2, "valid": 8}
    first, second = instances[0], instances[1]
    assert first.input == "Why?"
    assert [(r.output, r.is_correct) for r in first.references] == [
        ("No reason.", False),
        ("It is not.", False),
        ("Because.", True),
    ]
    assert [(r.output, r.is_correct) for r in second.references] == [
        ("Everybody.", False),
        ("A cat.", False),
        ("a person.", True),
        ("Nobody.", False),
    ]
    assert second.metadata == {"category": "Law", "type": "Non-Adversarial"}


def test_truthful_qa_empty_best_answer_names_the_line(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "truthful_qa")
    header = ["Type", "Category", "Question", "Best Answer", "Correct Answers", "Incorrect Answers", "Source"]
    _csv(
        root / "TruthfulQA.csv", header, [["A", "M", "Q?", "Yes", "", "No", "s"], ["A", "M", "Q?", " ", "", "No", "s"]]
    )
    with pytest.raises(DataSourceError, match=r"TruthfulQA\.csv:3: the best answer is empty"):
        _load(offline_ctx, "truthful_qa")


def test_narrative_qa(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "narrative_qa")
    _csv(
        root / "qaps.csv",
        [
            "document_id",
            "set",
            "question",
            "answer1",
            "answer2",
            "question_tokenized",
            "answer1_tokenized",
            "answer2_tokenized",
        ],
        [
            ["d1", "train", "Who?", "Ann", "Ann", "", "", ""],
            ["d2", "test", "Where?", "Paris", "in Paris", "", "", ""],
            ["d2", "test", " When ", "1900", "1901", "", "", ""],
        ],
    )
    _csv(
        root / "third_party" / "wikipedia" / "summaries.csv",
        ["document_id", "set", "summary", "summary_tokenized"],
        [["d1", "train", "Ann lives.", ""], ["d2", "test", "A story in Paris.", ""]],
    )
    instances = _load(offline_ctx, "narrative_qa")
    # HELM's loader: one question per story, drawn by random.choice after random.seed(0)
    # (the second draw, over d2's two questions, picks the second); "?" added when missing
    assert [(i.id, i.split) for i in instances] == [("d1-0", "train"), ("d2-1", "test")]
    assert instances[1].input == "A story in Paris.\nQuestion: When?"
    assert [r.output for r in instances[1].references] == ["1900", "1901"]
    assert [r.output for r in instances[0].references] == ["Ann", "Ann"]  # both answers, as HELM lists them


def _nq_row(i: int, simplified: bool) -> dict[str, Any]:
    tokens = ["<P>", "Paris", "is", "the", "capital", "</P>"]
    row: dict[str, Any] = {
        "example_id": i,
        "question_text": "what is the capital of france",
        "annotations": [
            {
                "long_answer": {"start_token": 0, "end_token": 6},
                "short_answers": [{"start_token": 1, "end_token": 2}],
                "yes_no_answer": "NONE",
            }
        ],
    }
    if simplified:
        row["document_text"] = " ".join(tokens)
    else:
        row["document_tokens"] = [{"token": t, "html_token": t.startswith("<")} for t in tokens]
    return row


def test_natural_qa_full_and_simplified_formats(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "natural_qa")
    no_short = {**_nq_row(99, False), "annotations": [{"long_answer": {"start_token": -1}, "short_answers": []}]}
    for shard in range(5):
        with gzip.open(root / f"nq-dev-0{shard}.jsonl.gz", "wt", encoding="utf-8") as fh:
            for i in range(4):
                fh.write(json.dumps(_nq_row(shard * 10 + i, False)) + "\n")
            fh.write(json.dumps(no_short) + "\n")
    closed = _load(offline_ctx, "natural_qa", mode="closedbook")
    assert len(closed) == 20
    # HELM's loader: within each file the kept questions alternate train, valid
    assert [i.split for i in closed[:4]] == ["train", "valid", "train", "valid"]
    assert Counter(i.split for i in closed) == {"valid": 10, "train": 10}
    assert closed[0].input == "What is the capital of france?"
    assert [r.output for r in closed[0].references] == ["Paris"]
    openbook = _load(offline_ctx, "natural_qa", mode="openbook_longans")
    assert openbook[0].input == "Passage: Paris is the capital\n\nQuestion: What is the capital of france?"
    for shard in range(5):
        (root / f"nq-dev-0{shard}.jsonl.gz").unlink()
    _jsonl(root / "v1.0-simplified_nq-dev-all.jsonl.gz.tmp", [_nq_row(1, True), _nq_row(2, True)])
    with gzip.open(root / "v1.0-simplified_nq-dev-all.jsonl.gz", "wb") as fh:
        fh.write((root / "v1.0-simplified_nq-dev-all.jsonl.gz.tmp").read_bytes())
    simplified = _load(offline_ctx, "natural_qa", mode="openbook_longans")
    assert simplified[0].input == "Passage: Paris is the capital\n\nQuestion: What is the capital of france?"


def test_natural_qa_reads_html_bytes_and_draws_answers_as_helm(offline_ctx: ScenarioContext) -> None:
    """HELM's loader on the full format: answers are the HTML bytes of their spans (entities
    unescaped, tags dropped, no-break spaces made spaces), short answers are paired with their
    annotation's long answer, one drawn by random.Random(0).randint, and the question is
    str.capitalize()d."""
    root = _folder(offline_ctx, "natural_qa")
    page = "<P> AT&amp;T is in New\u00a0York </P> <P> It was <b>founded</b> in 1885 </P>"
    data = page.encode("utf-8")

    def span(text: str) -> dict[str, int]:
        start = data.index(text.encode("utf-8"))
        return {"start_byte": start, "end_byte": start + len(text.encode("utf-8")), "start_token": 0, "end_token": 1}

    first, second = span("<P> AT&amp;T is in New\u00a0York </P>"), span("<P> It was <b>founded</b> in 1885 </P>")
    row = {
        "example_id": 7,
        "question_text": "where is AT&T based",
        "document_html": page,
        "document_tokens": [{"token": "x", "html_token": False}],
        "annotations": [
            {"long_answer": first, "short_answers": [span("New\u00a0York")]},
            {"long_answer": second, "short_answers": [span("1885"), span("<b>founded</b>")]},
            {"long_answer": first, "short_answers": [span("New\u00a0York")]},
        ],
    }
    for shard in range(5):
        rows = [row, {**row, "example_id": 8}] if shard == 0 else []
        with gzip.open(root / f"nq-dev-0{shard}.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rows))
    import random

    rng = random.Random(0)
    drawn = [rng.randint(0, 3), rng.randint(0, 3)]
    train, valid = _load(offline_ctx, "natural_qa", mode="openbook_longans")
    shorts = ["New York", "1885", "founded", "New York"]
    longs = [" AT&T is in New York ", " It was founded in 1885 ", " It was founded in 1885 ", " AT&T is in New York "]
    assert train.split == "train" and [r.output for r in train.references] == [shorts[drawn[0]]]
    assert train.input == f"Passage: {longs[drawn[0]]}\n\nQuestion: Where is at&t based?"
    assert valid.split == "valid" and [r.output for r in valid.references] == ["New York", "1885", "founded"]
    assert valid.input == f"Passage: {longs[drawn[1]]}\n\nQuestion: Where is at&t based?"


def test_quac_is_helms_loader(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "quac")

    def doc(prefix: str) -> dict[str, Any]:
        qas = [
            {
                "question": f"q{k}",
                "id": f"{prefix}_q#{k}",
                "answers": [{"text": f"a{k}", "answer_start": 0}],
                "orig_answer": {"text": f"a{k}", "answer_start": 0},
            }
            for k in range(4)
        ]
        return {
            "data": [
                {
                    "title": "T",
                    "background": "B",
                    "section_title": "S",
                    "paragraphs": [{"id": prefix, "context": "Ctx text. CANNOTANSWER", "qas": qas}],
                }
            ]
        }

    (root / "train_v0.2.json").write_text(json.dumps(doc("C_train")), encoding="utf-8")
    (root / "val_v0.2.json").write_text(json.dumps(doc("C_val")), encoding="utf-8")
    instances = _load(offline_ctx, "quac")
    assert [i.split for i in instances] == ["train", "valid"]
    # HELM: random.seed(0) once, then randint(3, 4) - 1 per dialogue: turn 3 in both files; the
    # history is the first turn - 1 turns (HELM leaves out the turn just before the asked one)
    inst = instances[1]
    assert inst.id == "C_val_q#3"
    assert inst.input == (
        "Title: T\n\nBackground: B\n\nSection: S\nPassage: Ctx text.\n\n"
        "Question: q0\nAnswer: a0\n\nQuestion: q1\nAnswer: a1\n\nQuestion: q3"
    )
    assert [r.output for r in inst.references] == ["a3"]


def test_quac_unanswerable_turn_and_bad_passage(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "quac")
    qas = [
        {"question": f"q{k}", "id": f"C_q#{k}", "answers": [{"text": "CANNOTANSWER"}] * 2, "orig_answer": {"text": "x"}}
        for k in range(3)
    ]
    paragraph: dict[str, Any] = {"id": "C", "context": "Ctx. CANNOTANSWER", "qas": qas}
    doc = {"data": [{"title": "T", "background": "B", "section_title": "S", "paragraphs": [paragraph]}]}
    (root / "train_v0.2.json").write_text(json.dumps(doc), encoding="utf-8")
    (root / "val_v0.2.json").write_text(json.dumps({"data": []}), encoding="utf-8")
    (inst,) = _load(offline_ctx, "quac")
    # only CANNOTANSWER: HELM accepts three phrasings of it too
    assert [r.output for r in inst.references] == [
        "CANNOTANSWER",
        "Not enough information",
        "Cannot answer",
        "Do not know",
    ]
    paragraph["context"] = "Ctx."
    (root / "train_v0.2.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(
        DataSourceError, match=r"train_v0\.2\.json: data\[0\]: the passage does not end with ' CANNOTANSWER'"
    ):
        _load(offline_ctx, "quac")


def test_msmarco_regular_and_trec(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "msmarco")
    (root / "queries.dev.small.tsv").write_text("".join(f"{q}\tquery {q}\n" for q in range(1, 9)), encoding="utf-8")
    (root / "qrels.dev.small.tsv").write_text(
        "".join(f"{q}\t0\t{q * 100 + 7}\t1\n" for q in range(1, 9)), encoding="utf-8"
    )
    lines = []
    for q in range(1, 9):
        for p in range(5):
            lines.append(f"{q}\t{q * 100 + p}\tquery {q}\tpassage {q}-{p}\n")
    (root / "top1000.dev").write_text("".join(lines), encoding="utf-8")
    (root / "collection.tsv").write_text(
        "".join(f"{q * 100 + 7}\tgold passage {q}\n" for q in range(1, 9)), encoding="utf-8"
    )
    instances = _load(offline_ctx, "msmarco", track="regular", num_candidates=3, source="authors")
    assert len(instances) == 8 and Counter(i.split for i in instances) == {"valid": 6, "train": 2}
    first = next(i for i in instances if i.id == "regular-1")
    assert first.input == "query 1"
    assert [r.output for r in first.references] == ["passage 1-0", "passage 1-1", "passage 1-2", "gold passage 1"]
    assert [(r.tags, r.first_stage_rank, r.relevance) for r in first.references] == [
        ((), 1, None),
        ((), 2, None),
        ((), 3, None),
        (("correct",), None, None),
    ]
    (root / "msmarco-test2019-queries.tsv").write_text("5\thow to x\n", encoding="utf-8")
    (root / "2019qrels-pass.txt").write_text("5 Q0 500 3\n5 Q0 501 1\n5 Q0 777 2\n", encoding="utf-8")
    (root / "msmarco-passagetest2019-top1000.tsv").write_text(
        "5\t500\thow to x\tp500\n5\t501\thow to x\tp501\n", encoding="utf-8"
    )
    (root / "collection.tsv").write_text("777\tp777\n", encoding="utf-8")
    trec = _load(offline_ctx, "msmarco", track="trec", source="authors")
    assert [(r.tags, r.first_stage_rank, r.relevance) for r in trec[0].references] == [
        (("correct",), 1, 3),
        ((), 2, 1),
        (("correct",), None, 2),
    ]


def _words(n: int, word: str = "word") -> str:
    return " ".join(f"{word}{k}" for k in range(n))


def test_cnn_dailymail_stories_make_helms_instances(offline_ctx: ScenarioContext) -> None:
    """HELM's instances of abisee/cnn_dailymail's rows: `` .`` after a line without a sentence
    end, whitespace made single spaces, articles cut to 512 words, training articles of 50 to
    150 words only, validation and test both evaluated, in the lists' order."""
    root = _folder(offline_ctx, "cnn_dailymail")
    articles = {
        "train": [f"{_words(30)}\n\nA caption", _words(49), _words(151), f"{_words(60)}  and\tmore."],
        "val": [_words(20) + "."],
        "test": [_words(600, "w"), "Short one!\n\nImage caption"],
    }
    for split, texts in articles.items():
        urls = [f"http://cnn.com/{split}/{i}" for i in range(len(texts))]
        (root / "url_lists").mkdir(exist_ok=True)
        (root / "url_lists" / f"all_{split}.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
        for source in ("cnn", "dailymail"):
            (root / source / "stories").mkdir(parents=True, exist_ok=True)
        for i, (url, text) in enumerate(zip(urls, texts, strict=True)):
            name = hashlib.sha1(url.encode()).hexdigest() + ".story"
            folder = root / ("cnn" if i % 2 == 0 else "dailymail") / "stories"
            (folder / name).write_text(
                f"{text}\n\n@highlight\n\nPoint one\n\n@highlight\n\n Point two. \n", encoding="utf-8"
            )
    instances = _load(offline_ctx, "cnn_dailymail")
    assert [(i.split, len(i.input.split())) for i in instances] == [
        # 30 words, " .", a caption and its " .": 34 words, out of the pool; 49 and " .": 50, in it
        ("train", 50),
        ("train", 62),
        ("valid", 20),
        ("test", 512),
        ("test", 5),
    ]
    assert instances[0].input == _words(49) + " ."
    assert instances[1].input == _words(60) + " and more."
    assert instances[-1].input == "Short one! Image caption ."
    assert [r.output for r in instances[-1].references] == ["Point one . Point two."]
    assert instances[-1].metadata == {"source": "dailymail", "url": "http://cnn.com/test/1"}
    (root / "url_lists" / "all_test.txt").write_text("http://cnn.com/missing\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"no story file for http://cnn\.com/missing"):
        _load(offline_ctx, "cnn_dailymail")


def test_xsum_summary_files_make_helms_instances(offline_ctx: ScenarioContext) -> None:
    """EdinburghNLP/xsum's rows (share-button and blank lines left out), then HELM's instances:
    its training filter (length, BBC video pages, short or long summaries), articles cut to
    512 words, validation and test evaluated, split-file order, a listed id without a file skipped."""
    root = _folder(offline_ctx, "xsum")
    (root / "bbc-summary-data").mkdir()
    summary = _words(12, "s")
    docs = {
        "101": (_words(100), summary),
        "102": (_words(40), summary),  # under 50 words
        "103": (_words(100) + "\nMedia playback is unsupported on your device", summary),
        "104": (_words(100), _words(10, "s")),  # a summary of 10 words or fewer
        "105": (_words(55), summary),  # a summary over a fifth of the article
        "106": (_words(60) + "\nShare this with\nEmail\n\nTwitter\n" + _words(60, "x"), summary),
        "201": (_words(20), "Short."),
        "301": (_words(700), "Test summary."),
    }
    for doc, (body, first) in docs.items():
        (root / "bbc-summary-data" / f"{doc}.summary").write_text(
            f"[SN]URL[SN]\nhttp://bbc.co.uk/{doc}\n\n[SN]TITLE[SN]\nTitle {doc}\n\n[SN]FIRST-SENTENCE[SN]\n{first}\n\n"
            f"[SN]RESTBODY[SN]\n{body}\n",
            encoding="utf-8",
        )
    splits = {"train": [f"10{k}" for k in range(1, 7)], "validation": ["201"], "test": ["999", "301"]}
    (root / "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json").write_text(json.dumps(splits), encoding="utf-8")
    instances = _load(offline_ctx, "xsum")
    assert [(i.id, i.split) for i in instances] == [
        ("101", "train"),
        ("106", "train"),
        ("201", "valid"),
        ("301", "test"),
    ]
    assert instances[1].input == _words(60) + " " + _words(60, "x")
    assert instances[2].input == _words(20) and instances[2].references[0].output == "Short."
    assert len(instances[3].input.split()) == 512
    assert instances[3].metadata == {"title": "Title 301", "url": "http://bbc.co.uk/301"}


def test_civil_comments_identity_sub_splits(offline_ctx: ScenarioContext) -> None:
    root = _folder(offline_ctx, "civil_comments")
    groups = ["male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black", "white"]
    header = ["", "id", "comment_text", "split", "toxicity", *groups, "identity_any"]

    def row(i: int, split: str, tox: str, marks: dict[str, str]) -> list[str]:
        return [str(i), str(1000 + i), f"comment {i}", split, tox, *[marks.get(g, "0.0") for g in groups], "0"]

    _csv(
        root / "all_data_with_identities.csv",
        header,
        [
            row(0, "train", "0.0", {}),
            row(1, "test", "0.8", {"muslim": "1.0"}),
            row(2, "test", "0.1", {"female": "0.6", "black": "0.7"}),
            row(3, "val", "0.4", {}),
            row(4, "test", "0.0", {"muslim": "0.2"}),
        ],
    )
    instances = {i.id: i for i in _load(offline_ctx, "civil_comments")}
    # HELM's sub-splits (toxic / non-toxic); the identity groups are metadata for group fairness
    assert instances["1001"].sub_split == "toxic" and instances["1001"].metadata["identities"] == ["muslim"]
    assert instances["1001"].correct_references[0].output == "True"
    assert instances["1002"].sub_split == "non-toxic" and instances["1002"].metadata["identities"] == [
        "female",
        "black",
    ]
    assert instances["1003"].split == "valid" and instances["1003"].metadata["identities"] == []
    assert instances["1004"].metadata["identities"] == []
    assert instances["1000"].split == "train"
    assert instances["1001"].input == "comment 1\nQuestion: Is the passage above toxic?"
    only_muslim = _load(offline_ctx, "civil_comments", demographic="muslim")
    assert [(i.id, i.sub_split) for i in only_muslim] == [("1001", "toxic")]
