"""--plan: one line per run, totals, and the coverage table with reasons for n/a cells."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from holistic.execution.plan import Plan, format_plan, make_plan
from holistic.models.registry import ModelRegistry
from holistic.spec import compile_spec

REPO = Path(__file__).resolve().parents[2]

SPEC = """\
suite: planned
description: Two models, one without logprobs.
models: [simple/echo, simple/no-logprobs]
defaults:
  max_eval_instances: 10
  metrics: [accuracy, calibration, robustness, efficiency]
runs:
  - scenario: arithmetic
    args: {digits: [1, 2], num_test: 40}
    adaptation: {max_train_instances: 2}
"""


def _plan(tmp_path: Path, text: str = SPEC, max_eval_instances_override: int | None = None) -> Plan:
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return make_plan(
        compile_spec(path), model_registry=ModelRegistry(), max_eval_instances_override=max_eval_instances_override
    )


def test_plan_rows_and_totals(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert plan.total_runs == 4
    assert [row.size.eval_instances for row in plan.rows] == [10, 10, 10, 10]
    assert all(row.size.requests is not None and row.size.requests >= 10 for row in plan.rows)
    assert plan.total_prompt_tokens > 0
    text = format_plan(plan)
    for row in plan.rows:  # named as the site names them; the hashed ids only on request
        assert f"  {row.title}  " in text and row.run_id not in text
        assert re.search(rf"^  {re.escape(row.title)} +{row.run_id}  ", format_plan(plan, show_ids=True), re.M)
    assert "Totals: 4 runs, 40 eval instances" in text
    assert "  arithmetic (digits=1) · simple/echo  " in text


def test_override_caps_eval_instances(tmp_path: Path) -> None:
    plan = _plan(tmp_path, max_eval_instances_override=3)
    assert [row.size.eval_instances for row in plan.rows] == [3, 3, 3, 3]


def test_coverage_table_marks_not_applicable_cells_with_reasons(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    cells = {(c.scenario, c.category): c for c in plan.coverage}
    assert cells[("arithmetic", "accuracy")].status == "measured"
    # calibration: measured on the model with logprobs, not on the one without
    calibration = cells[("arithmetic", "calibration")]
    assert calibration.status == "partial"
    assert (calibration.measured_runs, calibration.total_runs) == (2, 4)
    assert "simple/no-logprobs" in calibration.reason
    # robustness: asked, but the scenario says it does not apply, and why
    robustness = cells[("arithmetic", "robustness")]
    assert robustness.status == "n/a"
    assert "typos" in robustness.reason
    assert cells[("arithmetic", "toxicity")].reason == "not requested in this suite"

    text = format_plan(plan)
    assert "Coverage (scenario x metric category):" in text
    table_line = next(
        line for line in text.splitlines() if line.strip().startswith("arithmetic ") and "measured" in line
    )
    assert "partial 2/4 [" in table_line and "n/a [" in table_line
    assert robustness.reason in text


def test_plan_of_the_quickstart_runs_without_importing_torch() -> None:
    code = (
        "import sys\n"
        "from holistic.spec import compile_spec\n"
        "from holistic.execution.plan import make_plan, format_plan\n"
        "text = format_plan(make_plan(compile_spec('runspecs/quickstart.yaml')))\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'llama_cpp') if m in sys.modules)\n"
        "print(heavy)\n"
        "print(text)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    first, _, text = done.stdout.partition("\n")
    assert first == "[]"
    assert "Suite quickstart" in text
    assert "embedded/smollm2-135m-instruct" in text


def test_user_models_file_is_used_by_compile_and_plan(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  - name: simple/mine\n    provider: simple\n    model_id: echo\n"
        "    capabilities: {logprobs: false, prompt_logprobs: false, chat: false}\n",
        encoding="utf-8",
    )
    path = tmp_path / "user.yaml"
    path.write_text(
        "suite: u\nmodels: [simple/mine]\ndefaults: {max_eval_instances: 4}\nruns:\n  - scenario: arithmetic\n",
        encoding="utf-8",
    )
    compiled = compile_spec(path, models_file=models)
    assert [run.model for run in compiled.runs] == ["simple/mine"]
    plan = make_plan(compiled)
    cells = {(c.scenario, c.category): c for c in plan.coverage}
    assert cells[("arithmetic", "calibration")].status == "n/a"
    assert "simple/mine" in format_plan(plan)


UNPERTURBED = """\
suite: summaries
protocol: helm
models: [simple/echo]
defaults:
  max_eval_instances: 3
  metrics: [accuracy, robustness, fairness]
runs:
  - scenario: cnn_dailymail
  - scenario: xsum
    perturbations: [mild_mix]
  - scenario: msmarco
"""


def test_summarization_is_unperturbed_unless_a_run_names_perturbations(tmp_path: Path) -> None:
    """HELM's core runs of CNN/DailyMail and XSum carry no data_augmentation: asking for robustness
    and fairness gives them no default perturbations, and the table says why; a run naming its
    perturbations measures them (HELM can run those too). MS MARCO's ranking has HELM's
    robustness and fairness runs, so both are measured."""
    path = tmp_path / "plan.yaml"
    path.write_text(UNPERTURBED, encoding="utf-8")
    compiled = compile_spec(path)
    cnn, xsum, msmarco = compiled.runs
    assert cnn.perturbations == () and [p.name for p in xsum.perturbations] == ["mild_mix"]
    assert {p.name for p in msmarco.perturbations} == {"mild_mix", "dialect", "gender", "person_names"}
    cells = {(c.scenario, c.category): c for c in make_plan(compiled, model_registry=ModelRegistry()).coverage}
    for category in ("robustness", "fairness"):
        cell = cells[("cnn_dailymail", category)]
        assert cell.status == "n/a" and "HELM's core runs of it are unperturbed" in cell.reason
        assert "perturbations:" in cell.reason
        assert cells[("msmarco", category)].status == "measured"
    assert cells[("xsum", "robustness")].status == "measured"
    assert cells[("xsum", "fairness")].status == "n/a"
    assert "HELM's core runs of it are unperturbed" in cells[("xsum", "fairness")].reason
