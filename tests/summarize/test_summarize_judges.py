"""Judge governance: agreement between judges, with human ratings, and the threshold flag.

The suite has two deterministic judges of four generations: ``simple/echo`` scores
1, 0, 1, 0 (the candidate said yes, no, yes, no) and ``simple/no-logprobs`` always 1.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from holistic.cli.ratings import main as helm_ratings
from holistic.cli.run import main as run_main
from holistic.cli.summarize import main as summarize_main
from holistic.ratings.agreement import cohen_kappa
from tests.execution.judge_fixture import EXPECTED, judge_entry, write_suite

# Units [1,1], [0,1], [1,1], [0,1]: n = 8 values (six 1s); D_o = (2 + 2) / 8 = 0.5;
# D_e = (2*8*6 - 2*36) / 56 = 24/56; alpha = 1 - 0.5 / (24/56).
ALPHA_BETWEEN_JUDGES = 1 - 0.5 / (24 / 56)


def test_cohen_kappa_by_hand() -> None:
    # 50 items: both yes 20, yes/no 5, no/yes 10, both no 15: p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5 -> 0.4.
    pairs = [(1, 1)] * 20 + [(1, 0)] * 5 + [(0, 1)] * 10 + [(0, 0)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([(1, 1), (0, 0)]) == pytest.approx(1.0)
    assert cohen_kappa([(1, 1), (1, 1)]) is None  # chance agreement is certain
    assert cohen_kappa([]) is None


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOLISTIC_SIMPLE_CALL_LOG", str(tmp_path / "calls.log"))
    spec = write_suite(tmp_path, [judge_entry("simple/echo"), judge_entry("simple/no-logprobs", template="Verdict: 1")])
    out = tmp_path / "out"
    models = ["--models-file", str(tmp_path / "models.yaml")]
    assert run_main([str(spec), "--output-dir", str(out), "--quiet", *models]) == 0
    return out


def _summary(out: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((out / "judged" / "summary" / "summary.json").read_text(encoding="utf-8"))
    return data


def _table(summary: dict[str, object], table_id: str) -> list[list[object]]:
    tables = summary["tables"]
    assert isinstance(tables, list)
    (table,) = [t for t in tables if t["id"] == table_id]
    return [[c.get("value") for c in row] for row in table["rows"]]


def test_two_judges_report_alpha_and_kappa_and_a_threshold_flags_both(suite: Path) -> None:
    assert summarize_main(["--suite", "judged", "--output-dir", str(suite), "--judge-threshold", "0.5"]) == 0
    summary = _summary(suite)
    ((_column, judges, items, alpha, kappa, flag),) = _table(summary, "judge_agreement")
    assert judges == "simple/echo, simple/no-logprobs" and items == 4
    assert alpha == pytest.approx(ALPHA_BETWEEN_JUDGES)
    assert kappa == pytest.approx(0.0)  # p_o = 0.5 = p_e
    assert flag == "below threshold"
    flags = summary["judge_flags"]
    assert isinstance(flags, dict) and sorted(flags) == ["simple/echo", "simple/no-logprobs"]
    site = suite / "judged" / "site"
    scenario_pages = list(site.glob("scenario_*.html"))
    assert len(scenario_pages) == 1
    page = scenario_pages[0].read_text(encoding="utf-8")
    assert page.count('class="warning judge-flag"') == 2  # each flagged judge, on the page with its scores
    assert "Judges: agreement with each other" in page and "judge_score" in page
    run_page = next((site / "runs").glob("*.html")).read_text(encoding="utf-8")
    assert run_page.count('class="warning judge-flag"') == 2
    assert "judge-flag" not in (site / "coverage.html").read_text(encoding="utf-8")  # shows no scores


def test_without_a_threshold_nothing_is_flagged(suite: Path) -> None:
    assert summarize_main(["--suite", "judged", "--output-dir", str(suite), "--no-site"]) == 0
    assert _summary(suite)["judge_flags"] == {}


def test_human_ratings_of_judged_generations_measure_each_judge(suite: Path, tmp_path: Path) -> None:
    common = ["--suite", "judged", "--output-dir", str(suite)]
    exported = tmp_path / "to_rate.csv"
    assert helm_ratings(["export", *common, str(exported)]) == 0
    with exported.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 and {r["capability"] for r in rows} == {"judge:judge_score"}
    assert "judge_score" in rows[0]
    # The rater agrees with simple/echo exactly.
    for row in rows:
        row["rater"] = "ann"
        row["judge_score"] = str(EXPECTED[row["instance_id"]])
    filled = tmp_path / "ann.csv"
    with filled.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert helm_ratings(["import", *common, str(filled)]) == 0
    assert summarize_main([*common, "--judge-threshold", "0.5"]) == 0
    summary = _summary(suite)
    by_judge = {r[1]: r for r in _table(summary, "judge_human_agreement")}
    assert by_judge["simple/echo"][3] == pytest.approx(1.0)
    # simple/no-logprobs vs the rater: the same units as between the judges.
    assert by_judge["simple/no-logprobs"][3] == pytest.approx(ALPHA_BETWEEN_JUDGES)
    flags = summary["judge_flags"]
    assert isinstance(flags, dict)
    # Agreement with humans is the better evidence: echo agrees with them and is not flagged.
    assert sorted(flags) == ["simple/no-logprobs"] and "human ratings" in flags["simple/no-logprobs"]


def test_a_rating_off_the_judges_scale_is_refused_naming_file_and_line(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--suite", "judged", "--output-dir", str(suite)]
    exported = tmp_path / "to_rate.csv"
    assert helm_ratings(["export", *common, str(exported)]) == 0
    first = next(csv.DictReader(exported.open(encoding="utf-8", newline="")))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"item_id": first["item_id"], "rater": "ann", "judge_score": "abc"}) + "\n")
    capsys.readouterr()
    assert helm_ratings(["import", *common, str(bad)]) == 2
    assert f"{bad}:1: field 'judge_score'" in capsys.readouterr().err
