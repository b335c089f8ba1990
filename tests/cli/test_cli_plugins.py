"""``helm-run --plugins``: the CONTRIBUTING guides' examples, loaded without installing anything,
run end to end on each guide's own spec; and the errors a wrong ``--plugins`` item gives."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pytest
import yaml

from holistic.results import SuiteReader
from tests.cli.helm_run_helpers import REPO, cli_env

EXAMPLES = REPO / "docs" / "examples"


def _helm_run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holistic.cli.run", *args],
        cwd=cwd,
        env=cli_env(cwd / "calls.log"),
        capture_output=True,
        text=True,
        timeout=600,
    )


def _spec(folder: Path, body: str) -> Path:
    path = folder / "spec.yaml"
    path.write_text(f"suite: guide\nseed: 0\n{body}", encoding="utf-8")
    return path


def _guide_spec(folder: Path, guide: str) -> Path:
    """The spec in the YAML block of CONTRIBUTING's ``### <guide>``, written in ``folder`` as
    suite ``guide`` (on ``simple/echo`` unless it names its models)."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index(f"### {guide}\n") :]
    section = section[: section.find("\n### ")] if "\n### " in section else section
    block = section[section.index("```yaml\n") + len("```yaml\n") :]
    spec = {"models": ["simple/echo"], **yaml.safe_load(block[: block.index("```")]), "suite": "guide", "seed": 0}
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def _means(suite_dir: Path, metric: str) -> dict[tuple[str, str | None], float]:
    """(scenario, perturbation) -> mean of ``metric`` on the test split, over every run."""
    out: dict[tuple[str, str | None], float] = {}
    for run in SuiteReader(suite_dir).runs:
        stats = run.table("stats")
        rows = stats.filter(pc.and_(pc.equal(stats["metric"], metric), pc.equal(stats["split"], "test"))).to_pylist()
        for row in rows:
            if row["sub_split"] is None:
                out[(row["scenario"], row["perturbation"])] = row["mean"]
    return out


def test_scenario_guide_example_runs_on_the_simple_model(tmp_path: Path) -> None:
    spec = _guide_spec(tmp_path, "Add a scenario")
    plugin = str(EXAMPLES / "scenario_reverse_words.py")
    plan = _helm_run(tmp_path, str(spec), "--plugins", plugin, "--plan")
    assert plan.returncode == 0, plan.stderr
    assert "reverse_words" in plan.stdout
    done = _helm_run(tmp_path, str(spec), "--plugins", plugin, "--output-dir", "out", "--quiet")
    assert done.returncode == 0, done.stderr
    reader = SuiteReader(tmp_path / "out" / "guide")
    (run,) = reader.runs
    instances = run.table("instances").to_pylist()
    assert sum(1 for i in instances if i["split"] == "test") == 6
    assert all(i["references"][0]["output"] == i["input"][::-1] for i in instances)
    assert ("reverse_words", None) in _means(tmp_path / "out" / "guide", "exact_match")
    # The scenario's own argument check is a spec error at the argument (exit 2).
    bad = _spec(tmp_path, "models: [simple/echo]\nruns:\n  - scenario: reverse_words\n    args: {num_test: 12}\n")
    refused = _helm_run(tmp_path, str(bad), "--plugins", plugin, "--plan")
    assert refused.returncode == 2 and "num_train + num_test must be at most 12" in refused.stderr


def test_metric_guide_example_scores_every_instance(tmp_path: Path) -> None:
    (tmp_path / "qa.jsonl").write_text(
        '{"id": "1", "question": "Capital of France? Paris", "answer": "Paris", "split": "test"}\n'
        '{"id": "2", "question": "Capital of Italy? Rome", "answer": "Rome", "split": "test"}\n'
        '{"id": "3", "question": "Capital of Spain?", "answer": "Madrid", "split": "test"}\n',
        encoding="utf-8",
    )
    spec = _guide_spec(tmp_path, "Add a metric")
    done = _helm_run(
        tmp_path, str(spec), "--plugins", str(EXAMPLES / "metric_contains_answer.py"), "--output-dir", "out", "--quiet"
    )
    assert done.returncode == 0, done.stderr
    (run,) = SuiteReader(tmp_path / "out" / "guide").runs
    per_instance = run.table("per_instance_stats").to_pylist()
    values = {r["instance_id"]: r["value"] for r in per_instance if r["metric"] == "contains_answer"}
    completions = {r["instance_id"]: r["completion"] for r in run.table("requests").to_pylist()}
    assert set(values) == {"1", "2", "3"}
    for iid, value in values.items():
        answer = {"1": "paris", "2": "rome", "3": "madrid"}[iid]
        assert value == (1.0 if answer in completions[iid].lower() else 0.0)


def test_perturbation_guide_example_makes_shouted_variants(tmp_path: Path) -> None:
    (tmp_path / "runspecs" / "data").mkdir(parents=True)
    shutil.copy(REPO / "runspecs" / "data" / "capitals.jsonl", tmp_path / "runspecs" / "data")
    spec = _guide_spec(tmp_path, "Add a perturbation")
    done = _helm_run(
        tmp_path, str(spec), "--plugins", str(EXAMPLES / "perturbation_shout.py"), "--output-dir", "out", "--quiet"
    )
    assert done.returncode == 0, done.stderr
    (run,) = SuiteReader(tmp_path / "out" / "guide").runs
    instances = run.table("instances").to_pylist()
    originals = {i["instance_id"]: i["input"] for i in instances if i["perturbation"] is None and i["split"] == "test"}
    shouted = {i["instance_id"]: i["input"] for i in instances if i["perturbation"] == "shout"}
    assert len(originals) == 7 and set(shouted) == set(originals)
    assert all(shouted[k] == originals[k].upper() for k in shouted)
    stats = run.table("stats").to_pylist()
    assert any(r["metric"] == "exact_match" and r["perturbation"] == "shout" for r in stats)


def test_model_guide_example_serves_a_suite(tmp_path: Path) -> None:
    spec = _guide_spec(tmp_path, "Add a model")
    done = _helm_run(
        tmp_path,
        str(spec),
        "--plugins",
        str(EXAMPLES / "model_last_word.py"),
        "--models-file",
        str(EXAMPLES / "models_last_word.yaml"),
        "--output-dir",
        "out",
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    (run,) = SuiteReader(tmp_path / "out" / "guide").runs
    requests = run.table("requests").to_pylist()
    assert requests and all(r["success"] and r["model"] == "example/last-word" for r in requests)
    assert all(r["completion"] == " " + r["prompt"].split()[-1] for r in requests)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("missing_plugin.py", "--plugins missing_plugin.py: no such file or folder"),
        ("no_such_plugin_module", "no module named 'no_such_plugin_module'"),
        ("broken.py", "--plugins broken.py: importing it failed: RuntimeError: broken on purpose"),
        ("loose.py", "must be a subclass of holistic.scenarios.base.BaseScenario"),
        ("named.py", "@register_scenario takes the class itself, not 'named': the name is the one the class declares"),
    ],
)
def test_a_bad_plugins_item_is_a_clear_exit_2(tmp_path: Path, item: str, message: str) -> None:
    (tmp_path / "broken.py").write_text('raise RuntimeError("broken on purpose")\n', encoding="utf-8")
    (tmp_path / "loose.py").write_text(
        "from holistic.plugin import register_scenario\n\n\n@register_scenario\nclass Loose:\n    pass\n",
        encoding="utf-8",
    )
    # The earlier form, a name given to the decorator (now read from the class's info.name).
    (tmp_path / "named.py").write_text(
        'from holistic.plugin import register_scenario\n\n\n@register_scenario("named")\nclass Named:\n    pass\n',
        encoding="utf-8",
    )
    spec = _spec(tmp_path, "models: [simple/echo]\nruns:\n  - scenario: arithmetic\n")
    done = _helm_run(tmp_path, str(spec), "--plugins", item, "--plan")
    assert done.returncode == 2, done.stderr
    assert message in done.stderr


def test_an_unknown_scenario_without_its_plugin_names_the_nearest(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "models: [simple/echo]\nruns:\n  - scenario: reverse_word\n")
    done = _helm_run(tmp_path, str(spec), "--plugins", str(EXAMPLES / "scenario_reverse_words.py"), "--plan")
    assert done.returncode == 2 and "did you mean 'reverse_words'" in done.stderr
