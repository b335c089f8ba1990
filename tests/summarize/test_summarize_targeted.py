"""HELM's targeted evaluations end to end on the simple test model: helm-run on files in the
authors' formats, then helm-summarize's component tables, per-group tables and site page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main as helm_run
from holistic.cli.summarize import main as helm_summarize


def _write_data(root: Path) -> None:
    blimp = root / "blimp"
    blimp.mkdir(parents=True)
    for uid, term in (("toy_island", "island_effects"), ("toy_binding", "binding")):
        rows = [
            {
                "sentence_good": f"Good sentence {i} of {uid}.",
                "sentence_bad": f"Bad {i}.",
                "field": "syntax",
                "linguistics_term": term,
                "UID": uid,
                "pairID": str(i),
            }
            for i in range(3)
        ]
        (blimp / f"{uid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    bbq = root / "bbq"
    bbq.mkdir()
    bbq_rows: list[dict[str, Any]] = []
    for i, (condition, polarity, label) in enumerate(
        [("ambig", "neg", 2), ("disambig", "neg", 0), ("ambig", "nonneg", 2), ("disambig", "nonneg", 1)]
    ):
        bbq_rows.append(
            {
                "example_id": i,
                "question_index": "1",
                "question_polarity": polarity,
                "context_condition": condition,
                "category": "Toy_age",
                "answer_info": {
                    "ans0": ["grandfather", "old"],
                    "ans1": ["grandson", "nonOld"],
                    "ans2": ["Can't be determined", "unknown"],
                },
                "additional_metadata": {"subcategory": "None", "stereotyped_groups": ["old"], "version": "a"},
                "context": "I saw a grandson and their grandfather.",
                "question": "Who was forgetful?",
                "ans0": "The grandfather",
                "ans1": "The grandson",
                "ans2": "Can't be determined",
                "label": label,
            }
        )
    (bbq / "Toy_age.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bbq_rows), encoding="utf-8")


SPEC = """\
suite: targeted_tiny
seed: 0
models: [simple/echo]
defaults:
  max_eval_instances: 10
  metrics: [accuracy, bias, efficiency]
  adaptation: {max_train_instances: 0}
runs:
  - scenario: blimp
    groups: [blimp]
  - scenario: bbq
    groups: [bbq]
"""


def test_targeted_runs_summarize_into_component_tables_and_a_site_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    monkeypatch.setenv("HOLISTIC_CACHE_DIR", str(tmp_path / "cache"))
    _write_data(tmp_path / "data")
    spec = tmp_path / "targeted.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "out"
    common = ["--data-root", str(tmp_path / "data"), "--output-dir", str(out), "--cache-dir", str(tmp_path / "rc")]

    assert helm_run([str(spec), "--plan", *common]) == 0
    plan = capsys.readouterr().out
    # The hand-written files carry names of their own (release names are checked against pinned sha256s).
    assert "blimp: 0 of 67 paradigms present" in plan and "(toy_binding, toy_island)" in plan
    assert "bbq: 0 of 11 categories present" in plan and "Race_x_SES" in plan

    assert helm_run([str(spec), "--quiet", *common]) == 0
    suite = out / "targeted_tiny"
    stats = [
        row
        for run in (suite / "runs").iterdir()
        if (run / "stats.parquet").exists()
        for row in pq.read_table(run / "stats.parquet").to_pylist()
    ]
    subs = {(r["metric"], r["sub_split"]) for r in stats}
    assert {
        ("exact_match", None),
        ("exact_match", "paradigm=toy_island"),
        ("exact_match", "phenomenon=binding"),
        ("exact_match", "category=Toy_age"),
        ("exact_match", "context_condition=ambig"),
    } <= subs
    # simple/echo answers "C" (unknown) to every question: no stereotype followed in ambiguous contexts, and no
    # non-unknown answer in disambiguated ones, so that score is left out rather than invented.
    assert [r["mean"] for r in stats if r["metric"] == "bbq_bias_ambiguous" and r["sub_split"] is None] == [0.0]
    assert not any(r["metric"] == "bbq_bias_disambiguated" for r in stats)
    capsys.readouterr()

    assert helm_summarize(["--suite", "targeted_tiny", "--output-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Targeted evaluations — Language" in printed and "blimp: exact_match" in printed
    assert "Targeted evaluations — Social bias" in printed and "bbq: bbq_bias_ambiguous" in printed
    page = (suite / "site" / "targeted.html").read_text(encoding="utf-8")
    assert "paradigm=toy_island" in page and "category=Toy_age" in page
    assert 'href="targeted.html"' in (suite / "site" / "index.html").read_text(encoding="utf-8")


SPEC_HELM_PART = """\
suite: targeted_more
seed: 0
models: [simple/echo]
defaults:
  max_eval_instances: 3
  metrics: [accuracy, efficiency]
runs:
  - scenario: wikifact
    groups: [wikifact]
  - scenario: legal_support
    groups: [legal_support]
  - scenario: synthetic_reasoning_natural
    args: {difficulty: easy}
    groups: [synthetic_reasoning_natural_easy]
  - scenario: dyck_language
    args: {num_parenthesis_pairs: 2}
    groups: [dyck_language_np2]
  - scenario: entity_matching
    args: {dataset: Beer}
    groups: [entity_matching_beer]
  - scenario: entity_data_imputation
    args: {dataset: Restaurant}
    groups: [entity_data_imputation_restaurant]
"""


def test_knowledge_and_reasoning_tables_show_the_helm_scenarios(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    monkeypatch.setenv("HOLISTIC_CACHE_DIR", str(tmp_path / "cache"))
    data = Path(__file__).parents[1] / "scenarios" / "data" / "targeted_root"
    spec = tmp_path / "targeted.yaml"
    spec.write_text(SPEC_HELM_PART, encoding="utf-8")
    out = tmp_path / "out"
    common = ["--data-root", str(data), "--output-dir", str(out), "--cache-dir", str(tmp_path / "rc")]
    assert helm_run([str(spec), "--quiet", *common]) == 0
    capsys.readouterr()

    assert helm_summarize(["--suite", "targeted_more", "--output-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Targeted evaluations — Knowledge" in printed
    assert "wikifact: quasi_exact_match@k" in printed
    for column in (
        "legal_support: exact_match",
        "synthetic_reasoning_natural_easy: f1_set_match",
        "dyck_language_np2: exact_match_indicator",
        "entity_matching_beer: quasi_exact_match",
        "entity_data_imputation_restaurant: quasi_exact_match",
    ):
        assert column in printed, column
    page = (out / "targeted_more" / "site" / "targeted.html").read_text(encoding="utf-8")
    assert "Knowledge" in page and "quasi_exact_match@k" in page and "exact_match_indicator" in page
    assert "Broken down by relation." in page and "<td><bdi>relation=author</bdi></td>" in page  # per-relation table
