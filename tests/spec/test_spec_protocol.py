"""Run protocols: HELM's scenarios default to HELM's protocol, departures are compile-time errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from holistic.adaptation.adapter import uses_chat
from holistic.core.errors import SpecError
from holistic.execution.plan import format_plan, make_plan
from holistic.models.registry import ModelRegistry
from holistic.spec import compile_spec
from holistic.spec.compiler import CompiledSuite

REPO = Path(__file__).resolve().parents[2]


def _compile(tmp_path: Path, text: str) -> CompiledSuite:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return compile_spec(path)


def test_helm_scenarios_default_to_helms_protocol_and_others_to_holistics(tmp_path: Path) -> None:
    suite = _compile(
        tmp_path,
        """\
suite: p
runs:
  - scenario: boolq
  - scenario: arithmetic
""",
    )
    boolq, arithmetic = suite.runs
    assert (boolq.adapter.protocol, boolq.adapter.eval_sampling, boolq.adapter.answer_parsing) == (
        "helm",
        "helm",
        "helm",
    )
    assert (arithmetic.adapter.protocol, arithmetic.adapter.eval_sampling, arithmetic.adapter.answer_parsing) == (
        "holistic",
        "stable",
        "lenient",
    )


@pytest.mark.parametrize(
    ("adaptation", "field", "line"),
    [
        ("{selection: mmr}", "selection", 6),
        ("{answer_parsing: lenient}", "answer_parsing", 6),
        ("{prompt_format: chat}", "prompt_format", 6),
        ("{instructions: 'Answer Yes or No.'}", "instructions", 6),
        ("{max_tokens: 20}", "max_tokens", 6),
    ],
)
def test_an_option_departing_from_helm_is_an_error_naming_field_and_line(
    tmp_path: Path, adaptation: str, field: str, line: int
) -> None:
    text = f"""\
suite: p
protocol: helm
runs:
  - scenario: boolq
    max_eval_instances: 5
    adaptation: {adaptation}
"""
    with pytest.raises(SpecError) as caught:
        _compile(tmp_path, text)
    err = caught.value
    assert err.line == line and err.path == f"runs[0].adaptation.{field}"
    assert "departs from HELM" in err.message and "line 2" in err.message and "protocol: holistic" in err.message
    # the same option under holistic's protocol is fine
    _compile(tmp_path, text.replace("protocol: helm", "protocol: holistic"))


def test_sizes_helm_lets_users_choose_are_free(tmp_path: Path) -> None:
    suite = _compile(
        tmp_path,
        """\
suite: p
runs:
  - scenario: mmlu
    args: {subject: anatomy}
    num_train_trials: 1
    adaptation: {max_train_instances: 3, method: multiple_choice_separate_original}
""",
    )
    assert suite.runs[0].adapter.protocol == "helm"


def test_temperature_is_free_where_helms_run_spec_takes_it(tmp_path: Path) -> None:
    """HELM's summarization run specs take ``temperature`` (``summarization_xsum:temperature=0.5``);
    BoolQ's does not."""
    text = """\
suite: p
runs:
  - scenario: {scenario}
    adaptation: {{temperature: 0.5}}
"""
    for scenario in ("cnn_dailymail", "xsum"):
        (run,) = _compile(tmp_path, text.format(scenario=scenario)).runs
        assert (run.adapter.protocol, run.adapter.temperature) == ("helm", 0.5)
    with pytest.raises(SpecError, match=r"temperature 0\.5 departs from HELM's run spec"):
        _compile(tmp_path, text.format(scenario="boolq"))


def test_a_defaults_level_departure_points_at_the_defaults(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        _compile(
            tmp_path,
            """\
suite: p
defaults:
  adaptation: {eval_sampling: stable}
runs:
  - scenario: imdb
""",
        )
    assert caught.value.line == 3 and caught.value.path == "defaults.adaptation.eval_sampling"
    assert "default for HELM's scenario 'imdb'" in caught.value.message


def test_core_spec_is_helms_protocol_plain_prompts_no_extra_instructions_and_plan_says_so() -> None:
    suite = compile_spec(REPO / "runspecs" / "core.yaml")
    assert {run.adapter.protocol for run in suite.runs} == {"helm"}
    registry = ModelRegistry()
    for run in suite.runs:
        assert not uses_chat(run.adapter, registry.get(run.model)), run.name
        if run.scenario.name in ("boolq", "imdb"):
            assert run.adapter.instructions == ""
        if run.scenario.name == "mmlu":
            assert (run.adapter.max_tokens, run.adapter.stop_sequences) == (1, ())
    text = format_plan(make_plan(suite, model_registry=registry))
    header = next(line for line in text.splitlines() if line.startswith("  run  "))
    assert "protocol" in header
    assert sum(" helm " in line for line in text.splitlines()) == len(suite.runs)


def test_plan_from_the_command_line_shows_the_protocol(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("suite: p\nruns:\n  - scenario: boolq\n  - scenario: arithmetic\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "holistic.cli.run", str(spec), "--plan"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    rows = [line for line in out.splitlines() if line.strip().startswith(("boolq", "arithmetic"))]
    assert any(" helm " in r for r in rows if r.strip().startswith("boolq"))
    assert any(" holistic " in r for r in rows if r.strip().startswith("arithmetic"))


def test_helms_ranking_needs_no_prompt_logprobs_where_holistics_scoring_does(tmp_path: Path) -> None:
    """Under HELM's protocol MS MARCO asks for a generated yes/no answer per passage, which an
    API model without prompt log-probabilities gives; holistic's own ranking scores " Yes" and
    " No" by log-likelihood, which such a model cannot, and says so at the model's line."""
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  - name: simple/chatty\n    provider: simple\n    model_id: echo\n"
        "    capabilities: {logprobs: false, prompt_logprobs: false}\n",
        encoding="utf-8",
    )
    spec = tmp_path / "spec.yaml"
    text = "suite: r\nmodels: [simple/chatty]\nruns:\n  - scenario: msmarco\n    args: {track: regular}\n"
    spec.write_text(text, encoding="utf-8")
    (run,) = compile_spec(spec, models_file=models).runs
    assert (run.adapter.protocol, run.adapter.method) == ("helm", "ranking_binary")
    cells = {c.category: c for c in make_plan(compile_spec(spec, models_file=models)).coverage}
    assert cells["accuracy"].status == "measured"
    spec.write_text(text + "    protocol: holistic\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"ranking_binary.*simple/chatty.*no prompt log-probabilities"):
        compile_spec(spec, models_file=models)
