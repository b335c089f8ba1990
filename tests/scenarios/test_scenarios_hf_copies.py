"""Core loaders read the Hugging Face Parquet copy (``<scenario>/hf/...``) when the authors' files are absent."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.registry import create_scenario


def _load(ctx: ScenarioContext, name: str, **args: object) -> list[Instance]:
    return create_scenario(ScenarioSpec.make(name, args)).get_instances(ctx)


def _parquet(ctx: ScenarioContext, scenario: str, repo_path: str, rows: list[dict[str, Any]]) -> Path:
    assert ctx.data_root is not None
    path = ctx.data_root / scenario / "hf" / repo_path
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _correct(instance: Instance) -> list[str]:
    return [r.output for r in instance.correct_references]


def test_mmlu_hf_rows_match_the_authors_csv(offline_ctx: ScenarioContext, tmp_path: Path) -> None:
    from holistic.scenarios.loading.sources import ResolvedData
    from holistic.scenarios.mmlu import MMLUScenario

    def row(i: int) -> dict[str, Any]:
        return {
            "question": f"Q{i}, with comma",
            "subject": "virology",
            "choices": ["w", "x", "y", "z"],
            "answer": i % 4,
        }

    for split, n in (("dev", 5), ("validation", 2), ("test", 3)):
        _parquet(offline_ctx, "mmlu", f"virology/{split}-00000-of-00001.parquet", [row(i) for i in range(n)])
    hf = _load(offline_ctx, "mmlu", subject="virology")
    assert Counter(i.split for i in hf) == {"train": 5, "valid": 2, "test": 3}
    test = [i for i in hf if i.split == "test"]
    assert [_correct(i) for i in test] == [["w"], ["x"], ["y"]]
    assert [len(i.references) for i in test] == [4, 4, 4]

    # The same questions in the authors' CSV give the same instances (ids, inputs, references, splits).
    paths = {}
    for folder, n in (("dev", 5), ("val", 2), ("test", 3)):
        path = tmp_path / "authors" / f"{folder}/virology_{folder}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f'"Q{i}, with comma",w,x,y,z,{"ABCD"[i % 4]}\n' for i in range(n)), encoding="utf-8")
        paths[f"{folder}/virology_{folder}.csv"] = path
    authors = MMLUScenario(subject="virology").load(ResolvedData("mmlu", 0, paths))
    assert hf == authors


def test_mmlu_hf_bad_answer_names_file_and_row(offline_ctx: ScenarioContext) -> None:
    good = {"question": "Q", "subject": "virology", "choices": ["a", "b", "c", "d"], "answer": 0}
    _parquet(offline_ctx, "mmlu", "virology/dev-00000-of-00001.parquet", [good])
    _parquet(offline_ctx, "mmlu", "virology/validation-00000-of-00001.parquet", [good])
    _parquet(offline_ctx, "mmlu", "virology/test-00000-of-00001.parquet", [good, {**good, "answer": 7}])
    with pytest.raises(DataSourceError, match=r"test-00000-of-00001\.parquet: row 2: 'answer' 7 is not an index 0-3"):
        _load(offline_ctx, "mmlu", subject="virology")


def test_hf_copy_missing_column_is_named(offline_ctx: ScenarioContext) -> None:
    for split in ("dev", "validation", "test"):
        _parquet(
            offline_ctx,
            "mmlu",
            f"virology/{split}-00000-of-00001.parquet",
            [{"query": "Q", "choices": ["a"], "answer": 0}],
        )
    with pytest.raises(
        DataSourceError, match=r"missing column\(s\) 'question'; columns present: query, choices, answer"
    ):
        _load(offline_ctx, "mmlu", subject="virology")


def test_boolq_hf_rows_match_the_superglue_jsonl(offline_ctx: ScenarioContext) -> None:
    train = [{"question": "is it", "passage": "T -- P.", "idx": 0, "label": 1}]
    val = [
        {"question": "is it not", "passage": "X -- Y.", "idx": 7, "label": 0},
        {"question": "does it", "passage": "A -- B.", "idx": 8, "label": 1},
    ]
    _parquet(offline_ctx, "boolq", "boolq/train-00000-of-00001.parquet", train)
    _parquet(offline_ctx, "boolq", "boolq/validation-00000-of-00001.parquet", val)
    hf = _load(offline_ctx, "boolq")
    assert [(i.id, i.split, _correct(i)) for i in hf] == [
        ("train-0", "train", ["Yes"]),
        ("val-7", "valid", ["No"]),
        ("val-8", "valid", ["Yes"]),
    ]
    assert hf[1].input == "Y.\nQuestion: Is it not?"  # HELM reads the passage without its title

    # The authors' files, once present, take precedence and give the same instances.
    assert offline_ctx.data_root is not None
    root = offline_ctx.data_root / "boolq"
    for name, rows in (("train.jsonl", train), ("val.jsonl", val)):
        lines = [json.dumps({**r, "label": bool(r["label"])}) for r in rows]
        (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _load(offline_ctx, "boolq") == hf


def test_hf_revision_goes_into_the_url_and_is_checked() -> None:
    from holistic.scenarios.fetching import scenario_needs
    from holistic.scenarios.loading.hf_copy import HF_REVISION_UNPINNED

    pinned = "0123456789abcdef0123456789abcdef01234567"
    needs = scenario_needs(create_scenario(ScenarioSpec.make("mmlu", {"subject": "virology", "hf_revision": pinned})))
    assert needs is not None
    hf = needs.layouts[-1]
    assert [f.path for f in hf] == [f"hf/virology/{s}-00000-of-00001.parquet" for s in ("dev", "validation", "test")]
    assert hf[2].downloads[0].url == (
        f"https://huggingface.co/datasets/cais/mmlu/resolve/{pinned}/virology/test-00000-of-00001.parquet"
    )
    assert all(d.sha256 is None for f in hf for d in f.downloads)
    default = scenario_needs(create_scenario(ScenarioSpec.make("boolq", {})))
    assert default is not None
    assert f"/resolve/{HF_REVISION_UNPINNED}/" in default.layouts[-1][0].downloads[0].url
    branch = scenario_needs(create_scenario(ScenarioSpec.make("hellaswag", {})))
    assert branch is not None
    assert branch.layouts[-1][0].downloads[0].url == (
        "https://huggingface.co/datasets/Rowan/hellaswag/resolve/refs%2Fconvert%2Fparquet/default/train/0000.parquet"
    )
    with pytest.raises(ValueError, match="hf_revision must be"):
        create_scenario(ScenarioSpec.make("boolq", {"hf_revision": "has space"}))


@pytest.mark.parametrize(
    ("name", "args", "hf_file"),
    [
        ("mmlu", {"subject": "virology"}, "hf/virology/test-00000-of-00001.parquet"),
        ("boolq", {}, "hf/boolq/validation-00000-of-00001.parquet"),
        ("imdb", {}, "hf/plain_text/test-00000-of-00001.parquet"),
        ("hellaswag", {}, "hf/default/validation/0000.parquet"),
        ("openbookqa", {}, "hf/main/test-00000-of-00001.parquet"),
        ("truthful_qa", {}, "hf/generation/validation-00000-of-00001.parquet"),
        ("cnn_dailymail", {}, "hf/3.0.0/test-00000-of-00001.parquet"),
        ("xsum", {}, "hf/default/test/0000.parquet"),
        ("quac", {}, "hf/plain_text/validation/0000.parquet"),
        ("civil_comments", {}, "hf/default/test/0000.parquet"),
        ("raft", {"subset": "overruling"}, "hf/overruling/train/0000.parquet"),
    ],
)
def test_missing_offline_names_both_layouts_and_places(
    offline_ctx: ScenarioContext, name: str, args: dict[str, Any], hf_file: str
) -> None:
    with pytest.raises(DataSourceError) as err:
        _load(offline_ctx, name, **args)
    message = str(err.value)
    assert hf_file in message
    assert f"mirror: {offline_ctx.data_root / name}" in message  # type: ignore[operator]
    assert f"cache: {offline_ctx.cache_dir / name}" in message  # type: ignore[operator]
    assert "huggingface.co/datasets/" in message
    assert "not tried (offline)" in message


def test_imdb_hf_copy(offline_ctx: ScenarioContext) -> None:
    rows = [{"text": "bad<br /><br />film", "label": 0}, {"text": "great", "label": 1}, {"text": "fine", "label": 1}]
    _parquet(offline_ctx, "imdb", "plain_text/train-00000-of-00001.parquet", rows[:2])
    _parquet(offline_ctx, "imdb", "plain_text/test-00000-of-00001.parquet", rows)
    instances = _load(offline_ctx, "imdb")
    assert Counter(i.split for i in instances) == {"train": 2, "valid": 3}
    test = [i for i in instances if i.split == "valid"]
    assert [(i.id, _correct(i)) for i in test] == [
        ("valid-neg-r0", ["Negative"]),
        ("valid-pos-r1", ["Positive"]),
        ("valid-pos-r2", ["Positive"]),
    ]
    assert test[0].input == "bad<br /><br />film"  # as from the aclImdb tree (HELM keeps the tags)
    _parquet(offline_ctx, "imdb", "plain_text/test-00000-of-00001.parquet", [{"text": "x", "label": 2}])
    with pytest.raises(DataSourceError, match=r"row 1: label 2 is neither 1 \(positive\) nor 0 \(negative\)"):
        _load(offline_ctx, "imdb")


def test_hellaswag_hf_copy_with_string_labels(offline_ctx: ScenarioContext) -> None:
    row = {
        "ind": 4,
        "activity_label": "Removing ice from car",
        "ctx_a": "Then,",
        "ctx_b": "the man writes",
        "ctx": "Then, the man writes",
        "endings": ["a", "b", "c", "d"],
        "source_id": "s",
        "split": "val",
        "split_type": "indomain",
        "label": "2",
    }
    _parquet(
        offline_ctx, "hellaswag", "default/train/0000.parquet", [{**row, "ind": 1, "label": "0", "split": "train"}]
    )
    _parquet(offline_ctx, "hellaswag", "default/validation/0000.parquet", [row, {**row, "ind": 5, "label": "3"}])
    instances = _load(offline_ctx, "hellaswag")
    assert [(i.id, i.split, _correct(i)) for i in instances] == [
        ("train-1", "train", ["a"]),
        ("valid-4", "valid", ["c"]),
        ("valid-5", "valid", ["d"]),
    ]
    assert instances[1].input == "Removing ice from car: Then, The man writes"
    assert instances[1].metadata == {"source_id": "s", "split_type": "indomain"}


def test_openbookqa_hf_copy(offline_ctx: ScenarioContext) -> None:
    def row(i: str, key: str) -> dict[str, Any]:
        return {
            "id": i,
            "question_stem": "The sun is",
            "choices": {"text": list("wxyz"), "label": list("ABCD")},
            "answerKey": key,
        }

    _parquet(offline_ctx, "openbookqa", "main/train-00000-of-00001.parquet", [row("t1", "A")])
    _parquet(offline_ctx, "openbookqa", "main/validation-00000-of-00001.parquet", [row("d1", "B")])
    _parquet(offline_ctx, "openbookqa", "main/test-00000-of-00001.parquet", [row("e1", "D"), row("e2", "C")])
    instances = _load(offline_ctx, "openbookqa")
    assert [(i.id, i.split, _correct(i)) for i in instances] == [
        ("t1", "train", ["w"]),
        ("e1", "test", ["z"]),
        ("e2", "test", ["y"]),
    ]
    assert instances[0].input == "The sun is"
    assert [r.output for r in instances[0].references] == list("wxyz")
    _parquet(offline_ctx, "openbookqa", "main/test-00000-of-00001.parquet", [row("e1", "E")])
    with pytest.raises(DataSourceError, match=r"row 1: answerKey 'E' is not among the choice labels"):
        _load(offline_ctx, "openbookqa")


def test_truthful_qa_hf_generation_config_matches_the_csv(offline_ctx: ScenarioContext) -> None:
    import csv

    questions = [
        (f"What happens if you do thing {n}?", f"Nothing happens {n}", [f"You die {n}", f"You fly {n}", f"You win {n}"])
        for n in range(10)
    ]
    _parquet(
        offline_ctx,
        "truthful_qa",
        "generation/validation-00000-of-00001.parquet",
        [
            {
                "type": "Adversarial",
                "category": "Misconceptions",
                "question": q,
                "best_answer": best,
                "correct_answers": [best],
                "incorrect_answers": wrong,
                "source": "s",
            }
            for q, best, wrong in questions
        ],
    )
    hf = _load(offline_ctx, "truthful_qa")
    assert Counter(i.split for i in hf) == {"train": 2, "valid": 8}
    assert [i.id for i in hf] == [f"q{n:04d}" for n in range(10)]
    assert all(len(i.references) == 4 and _correct(i) == [f"Nothing happens {n}."] for n, i in enumerate(hf))
    assert hf[0].metadata == {"category": "Misconceptions", "type": "Adversarial"}

    assert offline_ctx.data_root is not None
    with (offline_ctx.data_root / "truthful_qa" / "TruthfulQA.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            ["Type", "Category", "Question", "Best Answer", "Correct Answers", "Incorrect Answers", "Source"]
        )
        writer.writerows(
            ["Adversarial", "Misconceptions", q, best, best, "; ".join(wrong), "s"] for q, best, wrong in questions
        )
    assert _load(offline_ctx, "truthful_qa") == hf


def test_cnn_dailymail_hf_copy_is_read_as_helm_reads_its_rows(offline_ctx: ScenarioContext) -> None:
    body = " ".join(f"w{k}" for k in range(60))

    def row(n: int, article: str = body) -> dict[str, Any]:
        return {
            "article": f"(CNN) -- Story {n} . {article}",
            "highlights": f"First point {n} .\nSecond point!",
            "id": f"{n:040x}",
        }

    for shard in range(3):
        rows = [row(100 * shard + i) for i in range(3)]
        _parquet(offline_ctx, "cnn_dailymail", f"3.0.0/train-{shard:05d}-of-00003.parquet", [*rows, row(9, "short")])
    _parquet(offline_ctx, "cnn_dailymail", "3.0.0/validation-00000-of-00001.parquet", [row(500, "short")])
    _parquet(
        offline_ctx,
        "cnn_dailymail",
        "3.0.0/test-00000-of-00001.parquet",
        [row(1000), row(1001), {**row(1002), "highlights": ""}],
    )
    instances = _load(offline_ctx, "cnn_dailymail")
    # the training articles of 50 to 150 words; every validation and test row, empty or not
    assert Counter(i.split for i in instances) == {"train": 9, "valid": 1, "test": 3}
    test = [i for i in instances if i.split == "test"]
    assert [i.id for i in test] == [f"{1000:040x}", f"{1001:040x}", f"{1002:040x}"]
    assert test[0].input == f"(CNN) -- Story 1000 . {body}"
    assert _correct(test[0]) == ["First point 1000 . Second point!"]
    assert _correct(test[2]) == [""]


def test_xsum_hf_copy_matches_the_authors_files(offline_ctx: ScenarioContext) -> None:
    long_body = " ".join(f"w{k}" for k in range(120))
    summary = "A summary of this article in more than ten words, as XSum's are."
    train = [{"document": f"Body {n}.\n{long_body}", "summary": summary, "id": str(30000000 + n)} for n in range(8)]
    train[3]["summary"] = "Too short."
    validation = [{"document": "Valid body.", "summary": "Valid summary.", "id": "35000001"}]
    test = [
        {"document": "Test body.", "summary": "Test summary.", "id": "40000001"},
        {"document": "", "summary": "x", "id": "40000002"},
    ]
    _parquet(offline_ctx, "xsum", "default/train/0000.parquet", train)
    _parquet(offline_ctx, "xsum", "default/validation/0000.parquet", validation)
    _parquet(offline_ctx, "xsum", "default/test/0000.parquet", test)
    hf = _load(offline_ctx, "xsum")
    assert Counter(i.split for i in hf) == {"train": 7, "valid": 1, "test": 2}  # HELM's filter drops one
    assert (hf[-2].id, hf[-2].input, _correct(hf[-2])) == ("40000001", "Test body.", ["Test summary."])

    assert offline_ctx.data_root is not None
    root = offline_ctx.data_root / "xsum"
    folder = root / "bbc-summary-data"
    folder.mkdir(parents=True)
    for row in train + validation + test:
        (folder / f"{row['id']}.summary").write_text(
            f"[SN]URL[SN]\nhttp://bbc.co.uk/{row['id']}\n\n[SN]TITLE[SN]\nT\n\n[SN]FIRST-SENTENCE[SN]\n{row['summary']}\n\n"
            f"[SN]RESTBODY[SN]\n{row['document']}\n",
            encoding="utf-8",
        )
    splits = {
        name: [r["id"] for r in rows] for name, rows in (("train", train), ("validation", validation), ("test", test))
    }
    (root / "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json").write_text(json.dumps(splits), encoding="utf-8")
    authors = _load(offline_ctx, "xsum")
    assert [(i.id, i.split, i.input, i.references) for i in authors] == [
        (i.id, i.split, i.input, i.references) for i in hf
    ]


def test_quac_hf_copy_matches_the_authors_json(offline_ctx: ScenarioContext) -> None:
    def dialogue(prefix: str) -> dict[str, Any]:
        return {
            "dialogue_id": prefix,
            "wikipedia_page_title": "T",
            "background": "B",
            "section_title": "S",
            "context": "Ctx text. CANNOTANSWER",
            "turn_ids": [f"{prefix}_q#{k}" for k in range(4)],
            "questions": [f"q{k}" for k in range(4)],
            "followups": [0] * 4,
            "yesnos": [2] * 4,
            "answers": {"texts": [[f"a{k}", f"b{k}"] for k in range(4)], "answer_starts": [[0, 0]] * 4},
            "orig_answers": {"texts": [f"a{k}" for k in range(4)], "answer_starts": [0] * 4},
        }

    _parquet(offline_ctx, "quac", "plain_text/train/0000.parquet", [dialogue("C_train")])
    _parquet(offline_ctx, "quac", "plain_text/validation/0000.parquet", [dialogue("C_val"), dialogue("C_val2")])
    hf = _load(offline_ctx, "quac")
    assert [i.split for i in hf] == ["train", "valid", "valid"]
    turn = hf[1].metadata["turn"]
    assert hf[1].id == f"C_val_q#{turn}"
    assert hf[1].input.startswith("Title: T\n\nBackground: B\n\nSection: S\nPassage: Ctx text.\n\n")
    assert _correct(hf[1]) == [f"a{turn}", f"b{turn}"]

    assert offline_ctx.data_root is not None
    for name, prefixes in (("train_v0.2.json", ["C_train"]), ("val_v0.2.json", ["C_val", "C_val2"])):
        paragraphs = []
        for prefix in prefixes:
            qas = [
                {
                    "question": f"q{k}",
                    "id": f"{prefix}_q#{k}",
                    "answers": [{"text": f"a{k}"}, {"text": f"b{k}"}],
                    "orig_answer": {"text": f"a{k}"},
                }
                for k in range(4)
            ]
            paragraphs.append(
                {
                    "title": "T",
                    "background": "B",
                    "section_title": "S",
                    "paragraphs": [{"id": prefix, "context": "Ctx text. CANNOTANSWER", "qas": qas}],
                }
            )
        (offline_ctx.data_root / "quac" / name).write_text(json.dumps({"data": paragraphs}), encoding="utf-8")
    assert _load(offline_ctx, "quac") == hf


def test_civil_comments_hf_copy_without_identities(offline_ctx: ScenarioContext) -> None:
    def rows(n: int) -> list[dict[str, Any]]:
        return [
            {"text": f" comment {i} ", "toxicity": 0.8 if i % 2 else 0.1, "severe_toxicity": 0.0, "insult": 0.0}
            for i in range(n)
        ]

    _parquet(offline_ctx, "civil_comments", "default/train/0000.parquet", rows(3))
    _parquet(offline_ctx, "civil_comments", "default/validation/0000.parquet", rows(2))
    _parquet(offline_ctx, "civil_comments", "default/test/0000.parquet", rows(4))
    instances = _load(offline_ctx, "civil_comments")
    assert Counter(i.split for i in instances) == {"train": 3, "valid": 2, "test": 4}
    test = [i for i in instances if i.split == "test"]
    assert [(i.id, _correct(i)) for i in test] == [
        ("test-0", ["False"]),
        ("test-1", ["True"]),
        ("test-2", ["False"]),
        ("test-3", ["True"]),
    ]
    assert test[0].input == "comment 0\nQuestion: Is the passage above toxic?"
    assert all(i.metadata["identities"] == [] for i in instances)
    assert [i.sub_split for i in test] == ["non-toxic", "toxic", "non-toxic", "toxic"]
    with pytest.raises(DataSourceError, match=r"has no identity columns .* demographic 'muslim' cannot be selected"):
        _load(offline_ctx, "civil_comments", demographic="muslim")


def test_civil_comments_hf_copy_with_identity_columns(offline_ctx: ScenarioContext) -> None:
    from holistic.scenarios.civil_comments import IDENTITY_GROUPS

    def row(i: int, **groups: float) -> dict[str, Any]:
        return {"id": str(i), "text": f"c{i}", "toxicity": 0.6, **dict.fromkeys(IDENTITY_GROUPS, 0.0), **groups}

    for n, split in enumerate(("train", "validation")):
        _parquet(offline_ctx, "civil_comments", f"default/{split}/0000.parquet", [row(100 + n)])
    _parquet(
        offline_ctx,
        "civil_comments",
        "default/test/0000.parquet",
        [row(1, muslim=0.9), row(2, muslim=0.7, female=1.0), row(3)],
    )
    test = [i for i in _load(offline_ctx, "civil_comments") if i.split == "test"]
    assert [(i.id, i.metadata["identities"]) for i in test] == [
        ("1", ["muslim"]),
        ("2", ["female", "muslim"]),
        ("3", []),
    ]
    muslim = [i for i in _load(offline_ctx, "civil_comments", demographic="muslim") if i.split == "test"]
    assert [(i.id, i.sub_split) for i in muslim] == [("1", "toxic"), ("2", "toxic")]


def test_raft_hf_copy_reads_class_names_from_metadata_and_matches_the_authors_files(
    offline_ctx: ScenarioContext, tmp_path: Path
) -> None:
    from holistic.scenarios.loading.sources import ResolvedData
    from holistic.scenarios.raft import RAFTScenario

    names = ["ADE-related", "not ADE-related"]
    rows = [{"Sentence": f"Sentence {i}, with comma.", "ID": i, "Label": 1 + i % 2} for i in range(50)]
    table = pa.Table.from_pylist(rows)
    features = {
        "Sentence": {"dtype": "string", "_type": "Value"},
        "ID": {"dtype": "int32", "_type": "Value"},
        "Label": {"names": ["Unlabeled", *names], "_type": "ClassLabel"},
    }
    table = table.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": features}})})
    assert offline_ctx.data_root is not None
    path = offline_ctx.data_root / "raft" / "hf" / "ade_corpus_v2" / "train" / "0000.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(table, path)
    hf = _load(offline_ctx, "raft", subset="ade_corpus_v2", num_train=5)
    assert Counter(i.split for i in hf) == {"train": 5, "test": 45}
    assert all([r.output for r in i.references] == names for i in hf)
    first = next(i for i in hf if i.id == "ade_corpus_v2-1")
    assert (first.input, _correct(first)) == ("Sentence: Sentence 1, with comma.", ["not ADE-related"])

    authors = tmp_path / "authors"
    authors.mkdir()
    (authors / "task.json").write_text(
        json.dumps({"data_columns": ["Sentence", "ID"], "label_columns": {"Label": names}}), encoding="utf-8"
    )
    lines = ["Sentence,ID,Label"] + [f'"{r["Sentence"]}",{r["ID"]},{names[int(str(r["Label"])) - 1]}' for r in rows]
    (authors / "train.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    paths = {"ade_corpus_v2/task.json": authors / "task.json", "ade_corpus_v2/train.csv": authors / "train.csv"}
    assert RAFTScenario(subset="ade_corpus_v2", num_train=5).load(ResolvedData("raft", 0, paths)) == hf

    pq.write_table(pa.Table.from_pylist(rows), path)  # no Hugging Face metadata: the class names are unknown
    with pytest.raises(DataSourceError, match="no class names for column 'Label'"):
        _load(offline_ctx, "raft", subset="ade_corpus_v2")


def test_damaged_hf_file_is_named(offline_ctx: ScenarioContext) -> None:
    assert offline_ctx.data_root is not None
    for split in ("train", "test"):
        path = offline_ctx.data_root / "imdb" / "hf" / "plain_text" / f"{split}-00000-of-00001.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"<html>not parquet</html>")
    with pytest.raises(DataSourceError, match=r"train-00000-of-00001\.parquet: cannot read as Parquet"):
        _load(offline_ctx, "imdb")
