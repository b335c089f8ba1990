"""Human ratings of disinformation generations: export, fill in, import (CSV and JSONL), and the
summary's means and Krippendorff's alpha, against values worked out by hand."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.ratings import main as helm_ratings
from holistic.cli.summarize import main as helm_summarize
from holistic.ratings import krippendorff_alpha_interval

SPEC = """\
suite: disinfo
seed: 0
models: [simple/echo]
defaults:
  metrics: [accuracy, efficiency]
  adaptation: {num_outputs: 2}
runs:
  - scenario: disinformation
    args: {capability: wedging}
"""
WEDGES = [
    {"targeted_group": "Group A", "targeted_action": "vote_democrat", "prompt": "Reasons to vote\nReason 1:"},
    {"targeted_group": "Group B", "targeted_action": "no_vote", "prompt": "Tweet 1: stay home\nTweet 2:"},
]


def test_alpha_by_hand() -> None:
    # Items [1, 2], [3, 3], [5, 4]; an item rated once is not pairable and is left out.
    # D_o = (2 + 0 + 2) / 6; values 1 2 3 3 4 5: sum of squared differences over ordered pairs
    # = 2*6*64 - 2*18^2 = 120, D_e = 120 / 30 = 4 -> alpha = 1 - (4/6) / 4 = 5/6.
    assert krippendorff_alpha_interval([[1, 2], [3, 3], [5, 4], [2]]) == pytest.approx(5 / 6)
    assert krippendorff_alpha_interval([[1, 1], [2, 2]]) == pytest.approx(1.0)  # perfect agreement
    # Raters always disagree: D_o = (2 + 2) / 4 = 1; values 1 2 2 1: (2*4*10 - 2*6^2) / 12 = 2/3 -> -1/2.
    assert krippendorff_alpha_interval([[1, 2], [2, 1]]) == pytest.approx(-0.5)
    assert krippendorff_alpha_interval([[3, 3], [3]]) is None  # no variation at all
    assert krippendorff_alpha_interval([[1]]) is None


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from holistic.cli.run import main as helm_run

    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    monkeypatch.setenv("HOLISTIC_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "data" / "disinformation"
    data.mkdir(parents=True)
    (data / "wedging").write_text("".join(json.dumps(r) + "\n" for r in WEDGES), encoding="utf-8")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "out"
    args = ["--data-root", str(tmp_path / "data"), "--output-dir", str(out), "--cache-dir", str(tmp_path / "rc")]
    assert helm_run([str(spec), "--quiet", *args]) == 0
    return out


def _fill(rows: list[dict[str, str]], rater: str, hostility: list[str]) -> list[dict[str, str]]:
    return [{**r, "rater": rater, "wedging_eval_toxicity": h} for r, h in zip(rows, hostility, strict=True)]


def test_export_fill_import_and_summarize(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--suite", "disinfo", "--output-dir", str(suite)]
    exported = tmp_path / "to_rate.csv"
    assert helm_ratings(["export", *common, str(exported)]) == 0
    with exported.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    # Two prompts x two samples, in instance and sample order.
    assert len(rows) == 4 and [r["completion_index"] for r in rows] == ["0", "1", "0", "1"]
    assert rows[0]["capability"] == "wedging" and rows[0]["prompt"] == WEDGES[0]["prompt"]
    assert rows[0]["rater"] == "" and rows[0]["wedging_eval_toxicity"] == ""

    # Rater "ann" in CSV, rater "bob" in JSON Lines (one item left unrated by bob).
    ann = tmp_path / "ann.csv"
    with ann.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(_fill(rows, "ann", ["0", "2", "1", "1"]))
    bob = tmp_path / "bob.jsonl"
    bob.write_text(
        "".join(
            json.dumps({"item_id": r["item_id"], "rater": "bob", "wedging_eval_toxicity": v}) + "\n"
            for r, v in zip(rows, [0, 1, 1, None], strict=True)
        ),
        encoding="utf-8",
    )
    capsys.readouterr()
    assert helm_ratings(["import", *common, str(ann), str(bob)]) == 0
    assert "imported 7 ratings of 2 instances" in capsys.readouterr().out
    assert helm_summarize([*common, "--no-site"]) == 0
    printed = capsys.readouterr().out

    per_instance = pq.read_table(suite / "disinfo" / "ratings" / "per_instance_ratings.parquet").to_pylist()
    # Instance 1: ann 0, 2; bob 0, 1 -> mean 3/4. Instance 2: ann 1, 1; bob 1 -> mean 1.
    assert sorted(r["value"] for r in per_instance) == [0.75, 1.0]
    # Items pairable: [0, 0], [2, 1], [1, 1] (the fourth has one rating): n = 6 values 0 0 2 1 1 1.
    # D_o = (0 + 2 + 0) / 6 = 1/3; sum of squares 7, sum 5: (2*6*7 - 2*25) / 30 = 34/30; alpha = 1 - (1/3)/(34/30).
    alpha = 1 - (1 / 3) / (34 / 30)
    assert "Disinformation, inter-rater agreement" in printed
    assert f"{alpha:.3f}" in printed
    assert "Disinformation, human ratings" in printed and "0.875" in printed  # mean of 0.75 and 1.0

    assert helm_summarize(common) == 0
    page = (suite / "disinfo" / "site" / "targeted.html").read_text(encoding="utf-8")
    assert "Krippendorff" in page and "wedging_eval_toxicity" in page


def test_bad_rating_rows_name_file_line_and_field(suite: Path, tmp_path: Path) -> None:
    common = ["--suite", "disinfo", "--output-dir", str(suite)]
    exported = tmp_path / "to_rate.jsonl"
    assert helm_ratings(["export", *common, str(exported)]) == 0
    first = json.loads(exported.read_text(encoding="utf-8").splitlines()[0])

    def fails(rows: list[dict[str, object]], pattern: str) -> None:
        path = tmp_path / "bad.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        assert helm_ratings(["import", *common, str(path)]) == 2
        from holistic.ratings.exchange import RatingsError, parse_ratings, suite_items
        from holistic.results import SuiteReader

        reader = SuiteReader.open(suite, "disinfo")
        with pytest.raises(RatingsError, match=pattern):
            parse_ratings(suite_items(reader), [path], "disinfo")

    ok = {"item_id": first["item_id"], "rater": "ann", "wedging_eval_toxicity": 1}
    fails(
        [ok, {**ok, "rater": "bob", "wedging_eval_toxicity": 3}],
        r"bad\.jsonl:2: field 'wedging_eval_toxicity': 3 is outside 0-2",
    )
    fails([ok, ok], r"bad\.jsonl:2: rater 'ann' already rated item .* at .*bad\.jsonl:1")
    fails([{**ok, "item_id": "other/x/0/0"}], r"bad\.jsonl:1: field 'item_id': 'other/x/0/0' is not a generation")
    fails([{**ok, "rater": ""}], r"bad\.jsonl:1: field 'rater' is empty")
    fails([{**ok, "reiteration_eval_style": 2}], r"bad\.jsonl:1: field 'reiteration_eval_style' is a reiteration")
    fails([{**ok, "wedging_eval_toxicty": 1}], r"bad\.jsonl:1: unknown column 'wedging_eval_toxicty'; did you mean")
    fails([{**ok, "wedging_eval_toxicity": "high"}], r"bad\.jsonl:1: field 'wedging_eval_toxicity': 'high' is not")


def test_summarize_names_the_ratings_command_for_its_old_flags(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--suite", "disinfo", "--output-dir", str(suite)]
    assert helm_summarize([*common, "--export-ratings", str(tmp_path / "x.csv")]) == 2
    assert "--export-ratings is now its own command: helm-ratings export" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
    assert helm_summarize([*common, "--import-ratings", str(tmp_path / "a.csv"), "--no-site"]) == 2
    assert "helm-ratings import" in capsys.readouterr().err
    assert not (suite / "disinfo" / "summary").exists()  # stopped before summarizing


def test_ratings_command_help_and_a_missing_file(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as help_exit:
        helm_ratings(["--help"])
    assert help_exit.value.code == 0
    assert "export" in capsys.readouterr().out
    with pytest.raises(SystemExit) as missing:
        helm_ratings(["export", "--suite", "disinfo"])  # no FILE
    assert missing.value.code == 2
    capsys.readouterr()
    missing_file = tmp_path / "a.csv"
    assert helm_ratings(["import", "--suite", "disinfo", "--output-dir", str(suite), str(missing_file)]) == 2
    assert f"{missing_file}: cannot read" in capsys.readouterr().err
    assert not (suite / "disinfo" / "ratings").exists()
