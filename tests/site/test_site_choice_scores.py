"""The instance browser shows, for choices scored apart, each choice's log-likelihood and
its length-normalised scores, the pick under each normalisation, the chosen and the gold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main as helm_run
from holistic.cli.summarize import main as helm_summarize
from tests.scenarios.arc_fixture import ARC_SPEC as SPEC

pytestmark = pytest.mark.browser


def test_browser_shows_every_choice_score_with_the_chosen_and_the_gold_marked(
    tmp_path: Path, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "arc.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "out"
    assert helm_run([str(spec), "--output-dir", str(out), "--quiet", "--limit", "6"]) == 0
    (run_dir,) = (out / "arc" / "runs").iterdir()
    rows = pq.read_table(run_dir / "per_instance_stats.parquet").to_pylist()
    details = {r["instance_id"]: json.loads(r["details"]) for r in rows if r["metric"] == "exact_match"}
    references = {r["instance_id"]: r["references"] for r in pq.read_table(run_dir / "instances.parquet").to_pylist()}
    capsys.readouterr()
    assert helm_summarize(["--suite", "arc", "--output-dir", str(out), "--num-bootstrap", "20"]) == 0
    browse = out / "arc" / "site" / "runs" / "browse" / f"{run_dir.name}.html"
    assert browse.is_file()

    page.goto(browse.resolve().as_uri())
    page.wait_for_selector("article.record table.scores")
    records = page.locator("article.record")
    assert records.count() == 6
    differing = 0
    for k in range(records.count()):
        record = records.nth(k)
        iid = record.get_attribute("data-id")
        d, refs = details[iid], references[iid]
        table = record.locator("table.scores").first
        assert table.locator("thead th").all_inner_texts() == [
            "Choice",
            "Text",
            "Log-likelihood (sum)",
            "per char",
            "per token",
            "per byte",
        ]
        body = table.locator("tbody tr")
        assert body.count() == len(refs) == 4
        for i in range(4):
            row = body.nth(i)
            cells = row.locator("td").all_inner_texts()
            label = row.locator("th").inner_text()
            text = refs[i]["output"]
            assert cells[0] == text
            lp = d["choice_logprobs"][i]
            # lm-eval's acc_norm: the summed log-likelihood over len(choice text), no leading space
            assert float(cells[1].rstrip(" ★")) == pytest.approx(lp, rel=5e-3)
            assert float(cells[2].rstrip(" ★")) == pytest.approx(lp / len(text), rel=5e-3)
            assert float(cells[3].rstrip(" ★")) == pytest.approx(lp / d["choice_tokens"][i], rel=5e-3)
            assert float(cells[4].rstrip(" ★")) == pytest.approx(lp / len(text.encode("utf-8")), rel=5e-3)
            assert ("✓ gold" in label) == ("correct" in refs[i]["tags"])
            assert ("◀ chosen" in label) == (i == d["chosen_index"]["char"])  # the run's headline: per char
            picked = [n for n, cell in zip(("none", "char", "token", "byte"), cells[1:], strict=True) if "★" in cell]
            assert picked == [n for n in ("none", "char", "token", "byte") if d["chosen_index"][n] == i]
        # the prediction shown is the chosen (per-char) pick, not the raw argmax
        chosen = d["chosen_index"]["char"]
        assert f"{chr(65 + chosen)}." in record.locator(".completion").first.inner_text()
        differing += d["chosen_index"]["none"] != d["chosen_index"]["char"]
    assert differing  # the sample shows a case where the normalisations disagree
    assert page.console_errors == []
