"""Systems (a model under one adaptation) and chance / majority reference rows on leaderboards."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from holistic.summarize.baselines import score_references
from holistic.summarize.build import summarize_suite
from holistic.summarize.load import eval_references
from holistic.summarize.tables import to_markdown
from tests.support.fake_suite import FakeRun, write_fake_suite

MODEL = "simple/echo"


def test_multiple_choice_chance_is_one_over_the_choices_and_majority_the_commonest_position() -> None:
    def mc(correct: int, k: int = 4) -> list[tuple[str, bool]]:
        return [(f"choice {i}", i == correct) for i in range(k)]

    scores = score_references([mc(0), mc(0), mc(1), mc(2)], multiple_choice=True)
    assert scores is not None
    assert scores.chance == pytest.approx(0.25)
    assert scores.majority == pytest.approx(0.5) and scores.majority_label == "choice A"
    # Two choices on one question, four on the other: chance averages 1/2 and 1/4.
    assert score_references([mc(0, 2), mc(3)], multiple_choice=True).chance == pytest.approx(0.375)  # type: ignore[union-attr]


def test_classification_labels_come_from_every_reference_and_majority_ignores_case() -> None:
    rows = [[("Yes", True), ("No", False)], [("yes", True), ("no", False)], [("no", True), ("yes", False)]]
    scores = score_references(rows, multiple_choice=False)
    assert scores is not None
    assert scores.labels == 2 and scores.chance == pytest.approx(0.5)
    assert scores.majority == pytest.approx(2 / 3) and scores.majority_label == "yes"
    # Only the correct label listed per instance: the label set is their union.
    only_correct = [[("positive", True)], [("negative", True)], [("neutral", True)], [("positive", True)]]
    scores = score_references(only_correct, multiple_choice=False)
    assert scores is not None and scores.chance == pytest.approx(1 / 3) and scores.majority == pytest.approx(0.5)


@pytest.fixture
def two_systems(tmp_path: Path) -> Path:
    labels = ("yes", "no")
    runs = [
        FakeRun(
            "boolq",
            MODEL,
            adapter={"prompt_format": "plain"},
            skill=0.8,
            num_instances=60,
            labels=labels,
            with_requests=True,
            main_metric="quasi_exact_match",
        ),
        FakeRun(
            "boolq",
            MODEL,
            adapter={"prompt_format": "chat"},
            skill=0.4,
            num_instances=60,
            labels=labels,
            with_requests=True,
            main_metric="quasi_exact_match",
        ),
        FakeRun(
            "narrative_qa", MODEL, adapter={"prompt_format": "plain"}, skill=0.6, num_instances=40, with_requests=True
        ),
        FakeRun(
            "narrative_qa", MODEL, adapter={"prompt_format": "chat"}, skill=0.3, num_instances=40, with_requests=True
        ),
    ]
    return write_fake_suite(tmp_path, "two", runs)


def test_one_model_under_two_prompt_formats_is_two_ranked_systems(two_systems: Path) -> None:
    summary = summarize_suite(two_systems, num_bootstrap=50)
    plain, chat = f"{MODEL} [prompt_format=plain]", f"{MODEL} [prompt_format=chat]"
    assert summary.models == sorted([plain, chat])
    assert summary.system_model == {plain: MODEL, chat: MODEL}
    board = summary.leaderboards["accuracy"]
    rates = dict(zip(board.models, board.win_rate, strict=True))
    assert rates[plain] == 1.0 and rates[chat] == 0.0  # better in both columns, not averaged into one row


def test_accuracy_leaderboard_has_unranked_chance_and_majority_rows_where_labels_are_finite(two_systems: Path) -> None:
    summary = summarize_suite(two_systems, num_bootstrap=50)
    table = next(t for t in summary.tables if t.id == "group_accuracy")
    names = [row[1].value for row in table.rows]
    assert names[-2:] == ["chance (baseline)", "majority (baseline)"]
    assert list(table.row_roles) == ["", "", "baseline", "baseline"]
    assert "chance (baseline)" not in summary.leaderboards["accuracy"].models  # not ranked
    columns = [c.name for c in table.columns]
    boolq, nqa = columns.index("boolq"), columns.index("narrative_qa")
    chance, majority = table.rows[-2], table.rows[-1]
    refs = eval_references(
        two_systems / "runs" / FakeRun("boolq", MODEL, adapter={"prompt_format": "plain"}, labels=("yes", "no")).run_id
    )["test"]
    yes = sum(1 for r in refs if ("yes", True) in r) / len(refs)
    assert chance[boolq].value == pytest.approx(0.5)
    assert majority[boolq].value == pytest.approx(max(yes, 1 - yes))
    assert chance[nqa].value is None and majority[nqa].value is None  # free text: no label set
    assert chance[2].value is None and chance[3].text() == "not ranked"
    md = to_markdown(table)
    assert "| chance (baseline) |" in md and "majority (baseline)" in md
    assert {(b["kind"], b["column"]) for b in summary.baselines if b["group"] == "accuracy"} == {
        ("chance", "boolq"),
        ("majority", "boolq"),
    }
    # Lower-is-better groups (efficiency) get no baseline rows.
    eff = next(t for t in summary.tables if t.id == "group_efficiency")
    assert not any(role == "baseline" for role in eff.row_roles)


def test_a_suite_without_label_sets_has_no_baseline_rows(tmp_path: Path) -> None:
    suite = write_fake_suite(
        tmp_path,
        "free",
        [
            FakeRun("narrative_qa", "simple/echo", skill=0.6, num_instances=20, with_requests=True),
            FakeRun("narrative_qa", "simple/no-logprobs", skill=0.4, num_instances=20, with_requests=True),
        ],
    )
    summary = summarize_suite(suite, num_bootstrap=20)
    table = next(t for t in summary.tables if t.id == "group_accuracy")
    assert len(table.rows) == 2 and not summary.baselines
    assert all(not math.isnan(w) for w in summary.leaderboards["accuracy"].win_rate)
