"""A suite swept over reasoning efforts, end to end: the spec's ``effort: [low, high]`` makes two
systems, the loopback reasoning model (:mod:`tests.support.reasoning_server`, through the real
``openai`` SDK and the Responses API) thinks as asked, the answer alone is scored, a thought cut
by ``max_tokens`` is unfinished and never a wrong answer with text, a provider that ignores the
setting is flagged, and the site plots accuracy against reasoning tokens and cost (Chromium)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main as run_main
from holistic.cli.summarize import main as summarize_main
from tests.support.reasoning_server import ReasoningServer

pytestmark = pytest.mark.browser

ROWS = [{"id": f"q{a}", "q": f"What is {a}+{a + 2}?", "a": str(2 * a + 2)} for a in range(8)]
"""The model is right at effort low where a % 4 is 0 or 1 (half), always at high."""


def models_file(thinker: str, ignorer: str) -> str:
    entry = """\
  - name: loop/{name}
    provider: openai
    model_id: {name}
    args: {{base_url: "{url}", api: responses, max_attempts: 1}}
    capabilities: {{chat: true, completions: false}}
    reasoning: {{style: openai_effort}}
    price: {{input_per_million: 1.0, output_per_million: 10.0}}
    api_key_env: LOOP_KEY
"""
    return "models:\n" + entry.format(name="thinker", url=thinker) + entry.format(name="ignorer", url=ignorer)


SPEC = """\
suite: thinking
models: [loop/thinker, loop/ignorer]
runs:
  - scenario: file
    args: {{path: {data}, fields: {{input: q, output: a, id: id}}}}
    adaptation: {{method: generation, max_train_instances: 0, max_tokens: 60, reasoning: {{effort: [low, high]}}}}
    metrics: [accuracy, efficiency]
  - scenario: file
    args: {{path: {data}, fields: {{input: q, output: a, id: id}}}}
    adaptation: {{method: generation, max_train_instances: 0, max_tokens: 20, reasoning: {{effort: high}}}}
    metrics: [accuracy, efficiency]
    models: [loop/thinker]
"""


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("reasoning")
    data = folder / "sums.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv("LOOP_KEY", "sk-loopback")
    with ReasoningServer(deadline_s=600) as thinker, ReasoningServer(ignore=True, deadline_s=600) as ignorer:
        (folder / "models.yaml").write_text(models_file(thinker.url, ignorer.url), encoding="utf-8")
        spec = folder / "spec.yaml"
        spec.write_text(SPEC.format(data=data), encoding="utf-8")
        out = folder / "out"
        args = [str(spec), "--output-dir", str(out), "--quiet", "--models-file", str(folder / "models.yaml")]
        assert run_main(args) == 0
        assert {b["reasoning"]["effort"] for _, b in thinker.bodies} == {"low", "high"}
    mp.undo()
    assert summarize_main(["--suite", "thinking", "--output-dir", str(out)]) == 0
    yield out / "thinking"


def _runs(suite: Path) -> dict[tuple[str, str, int], Path]:
    """(model, effort, max_tokens) -> the run's folder."""
    out = {}
    for folder in (suite / "runs").iterdir():
        spec = json.loads((folder / "run_spec.json").read_text(encoding="utf-8"))
        adapter = spec["adapter"]
        out[(spec["model"], adapter["reasoning"]["effort"], adapter["max_tokens"])] = folder
    return out


def _stat(folder: Path, metric: str) -> float:
    rows = [r for r in pq.read_table(folder / "stats.parquet").to_pylist() if r["metric"] == metric]
    rows = [r for r in rows if not r.get("perturbation")]
    assert rows, metric
    return float(rows[0]["mean"])


def test_an_effort_sweep_is_two_systems_and_the_answer_alone_is_scored(suite: Path, tmp_path: Path) -> None:
    runs = _runs(suite)
    assert len(runs) == 5
    low, high = runs[("loop/thinker", "low", 60)], runs[("loop/thinker", "high", 60)]
    assert _stat(low, "exact_match") == pytest.approx(0.5) and _stat(high, "exact_match") == pytest.approx(1.0)
    assert _stat(low, "num_reasoning_tokens") == pytest.approx(8) and _stat(high, "num_reasoning_tokens") == 48
    assert _stat(high, "reasoning_unfinished_rate") == 0.0
    rows = pq.read_table(high / "requests.parquet").to_pylist()
    assert all(r["completion"] in {row["a"] for row in ROWS} for r in rows)  # the answer, never the thought
    assert all("maybe" in r["reasoning"] and r["reasoning_effort"] == "high" for r in rows)
    assert all(r["reasoning_reported"] == "effort=high" for r in rows)
    systems = json.loads((suite / "summary" / "summary.json").read_text(encoding="utf-8"))["models"]
    assert sum("loop/thinker" in s for s in systems) == 3  # low, high, and the short run's high


def test_a_thought_cut_by_max_tokens_is_not_answered(suite: Path) -> None:
    cut = _runs(suite)[("loop/thinker", "high", 20)]
    assert _stat(cut, "reasoning_unfinished_rate") == 1.0
    assert _stat(cut, "exact_match") == 0.0
    rows = pq.read_table(cut / "requests.parquet").to_pylist()
    assert all(r["completion"] == "" and r["reasoning_unfinished"] and r["reasoning"] for r in rows)
    page = (suite / "site" / "runs" / f"{cut.name}.html").read_text(encoding="utf-8")
    assert "Instances whose thought did not finish (8)" in page and "q3" in page


def test_a_provider_that_ignored_the_setting_is_flagged(suite: Path) -> None:
    runs = _runs(suite)
    ignored = (suite / "site" / "runs" / f"{runs[('loop/ignorer', 'high', 60)].name}.html").read_text(encoding="utf-8")
    assert 'class="warning reasoning-flag"' in ignored and "effort=medium" in ignored
    honest = (suite / "site" / "runs" / f"{runs[('loop/thinker', 'high', 60)].name}.html").read_text(encoding="utf-8")
    assert "reasoning-flag" not in honest


def test_the_budget_curve_plots_accuracy_against_tokens_and_cost(page: Any, suite: Path) -> None:
    plots = sorted((suite / "site" / "plots").glob("budget_*.svg"))
    assert len(plots) == 1
    page.goto(plots[0].resolve().as_uri())
    for axis in ("num_reasoning_tokens", "cost_usd"):
        lines = page.locator(f"[id^='budget_{axis}_']")
        assert lines.count() == 2  # one line per model
    text = page.locator("svg").text_content() or ""
    assert "mean reasoning tokens per request" in text and "mean cost per instance" in text
    assert "low" in text and "high" in text
    listed = (suite / "site" / "plots.html").read_text(encoding="utf-8")
    assert plots[0].name in listed and "95% intervals" in listed
    assert not page.console_errors


def test_the_instance_browser_folds_the_reasoning_under_the_answer(page: Any, suite: Path) -> None:
    high = _runs(suite)[("loop/thinker", "high", 60)]
    page.goto((suite / "site" / "runs" / "browse" / f"{high.name}.html").resolve().as_uri())
    fold = page.locator("details.reasoning").first
    fold.wait_for(state="attached", timeout=20_000)
    assert not fold.evaluate("d => d.open")  # folded
    assert "48 tokens" in fold.locator("summary").inner_text()
    fold.locator("summary").click()
    assert "maybe" in fold.locator("pre").inner_text()
    assert not page.console_errors
