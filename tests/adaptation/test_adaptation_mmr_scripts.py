"""MMR example selection on any script: a lexical embedder where MiniLM (English) would not do."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq

from holistic.adaptation.embedding import CharNgramEmbedder, embedder_choice
from holistic.cli.run import main

TRAIN = [
    ("t1", "الطعام لذيذ جدا والخدمة سريعة", "positive"),
    ("t2", "الفندق نظيف والغرف واسعة", "positive"),
    ("t3", "الطلب لم يصل بعد ساعتين", "negative"),
    ("t4", "الشاشة مكسورة والبطارية ضعيفة", "negative"),
]
TEST = [
    ("e1", "الطعام في هذا المطعم لذيذ جدا", "positive"),
    ("e2", "البطارية ضعيفة جدا والشاشة مكسورة", "negative"),
]


def test_the_embedder_is_chosen_by_the_script_of_the_pool() -> None:
    assert embedder_choice([text for _, text, _ in TRAIN]).startswith("char-trigram TF-IDF (0% of the pool's letters")
    assert embedder_choice(["The food was great", "Room was clean"]).startswith("all-MiniLM-L6-v2 (100%")


def test_char_trigrams_rank_the_lexically_closest_arabic_text_first() -> None:
    embedder = CharNgramEmbedder([text for _, text, _ in TRAIN])
    train = embedder.encode([text for _, text, _ in TRAIN])
    query = embedder.encode([TEST[1][1]])[0]
    scores = train @ query
    assert int(scores.argmax()) == 3 and scores[3] > 2 * sorted(scores)[-2]


def test_an_arabic_classification_file_gets_its_nearest_examples_and_the_choice_is_recorded(tmp_path: Path) -> None:
    data = tmp_path / "reviews_ar.csv"
    with data.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "text", "label", "split"])
        writer.writerows(
            [(i, t, label, "train") for i, t, label in TRAIN] + [(i, t, label, "test") for i, t, label in TEST]
        )
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: mmr_ar\nmodels: [simple/echo]\nruns:\n  - scenario: file\n    args:\n"
        f"      path: {data}\n      fields: {{id: id, input: text, label: label, split: split}}\n"
        "    adaptation: {selection: mmr, max_train_instances: 2}\n    metrics: [accuracy]\n",
        encoding="utf-8",
    )
    assert main([str(spec), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0
    (run_dir,) = (tmp_path / "out" / "mmr_ar" / "runs").iterdir()
    requests = {r["instance_id"]: r for r in pq.read_table(run_dir / "requests.parquet").to_pylist()}
    assert requests["e1"]["train_ids"][0] == "t1"  # the food review for the food question
    assert requests["e2"]["train_ids"][0] == "t4"  # the broken screen for the broken screen
    recorded = json.loads((run_dir / "artifacts.json").read_text(encoding="utf-8"))["execution"]["mmr_embedder"]
    assert recorded.startswith("char-trigram TF-IDF")
