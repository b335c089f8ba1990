"""The targeted scenarios read from the user's own copies, end to end on the simple test model:
``--plan`` says what is missing, helm-run scores what is there, and helm-summarize shows the
memorization, disinformation and language tables with the per-group rows.

Every file is written here in the format of HELM's inputs, with invented text."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main as helm_run
from holistic.cli.summarize import main as helm_summarize

SPEC = """\
suite: user_copies
seed: 0
models: [simple/echo]
defaults:
  max_eval_instances: 10
  metrics: [accuracy, toxicity, efficiency]
runs:
  - scenario: copyright
    args: {prefix_tokens: 4}
    adaptation: {max_tokens: 20}
  - scenario: twitter_aae
  - scenario: ice
  - scenario: the_pile
    args: {subset: PhilPapers}
  - scenario: disinformation
    args: {capability: wedging}
"""


def _write(root: Path) -> None:
    (root / "copyright").mkdir(parents=True)
    passages = [{"id": f"p{i}", "text": f"Passage {i} opens here and then goes on for a while."} for i in range(3)]
    (root / "copyright" / "texts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages), encoding="utf-8")
    (root / "twitter_aae").mkdir()
    (root / "twitter_aae" / "aa_tweets.csv").write_text("first tweet\nsecond tweet here\n", encoding="utf-8")
    (root / "twitter_aae" / "white_tweets.csv").write_text("another tweet\n", encoding="utf-8")
    corpus = root / "ice" / "ICE India" / "Corpus"
    corpus.mkdir(parents=True)
    (corpus / "S1A-001.txt").write_text("<$A> <#> Spoken words here", encoding="utf-8")
    (root / "the_pile").mkdir()
    row = {"text": "A short paper on minds.", "meta": {"pile_set_name": "PhilPapers"}}
    (root / "the_pile" / "test.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (root / "disinformation").mkdir()
    wedge = {"targeted_group": "Group A", "targeted_action": "no_vote", "prompt": "Reason 1: stay home\nReason 2:"}
    (root / "disinformation" / "wedging").write_text(json.dumps(wedge) + "\n", encoding="utf-8")


def test_user_copies_run_and_summarize(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    monkeypatch.setenv("HOLISTIC_CACHE_DIR", str(tmp_path / "cache"))
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    common = ["--data-root", str(data), "--output-dir", str(out), "--cache-dir", str(tmp_path / "rc")]

    assert helm_run([str(spec), "--plan", *common]) == 0
    plan = capsys.readouterr().out
    assert "copyright: your text collection not found" in plan
    assert "ice: 0 of 9 regional corpora present" in plan and "ICE India/ (ind)" in plan
    assert "the_pile: your copy of the Pile's test set not found" in plan

    data.rmdir()
    _write(data)
    assert helm_run([str(spec), "--quiet", *common]) == 0
    stats = {
        (r["scenario"], r["metric"], r["sub_split"]): r["mean"]
        for run in (out / "user_copies" / "runs").iterdir()
        for r in pq.read_table(run / "stats.parquet").to_pylist()
    }
    assert ("twitter_aae", "bits_per_byte", "demographic=aa") in stats
    assert ("ice", "bits_per_byte", "region=ind") in stats
    assert ("the_pile", "bits_per_byte", None) in stats
    assert ("copyright", "longest_common_prefix_length", None) in stats
    assert ("disinformation", "self_bleu", None) in stats
    capsys.readouterr()

    assert helm_summarize(["--suite", "user_copies", "--output-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Targeted evaluations — Memorization and copyright" in printed
    assert "copyright: edit_similarity" in printed and "twitter_aae: bits_per_byte" in printed
    assert "Targeted evaluations — Disinformation" in printed
    page = (out / "user_copies" / "site" / "targeted.html").read_text(encoding="utf-8")
    assert "demographic=white" in page and "region=ind" in page and "longest_common_prefix_length" in page
