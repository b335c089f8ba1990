"""runspecs/quickstart.yaml: small, offline, on the embedded model."""

from __future__ import annotations

from pathlib import Path

from holistic.execution.plan import make_plan
from holistic.spec import compile_spec

QUICKSTART = Path(__file__).resolve().parents[2] / "runspecs" / "quickstart.yaml"


def test_quickstart_compiles_to_a_small_offline_suite() -> None:
    compiled = compile_spec(QUICKSTART)
    assert compiled.suite == "quickstart"
    assert {run.model for run in compiled.runs} == {"embedded/smollm2-135m-instruct"}
    modes = [run.scenario.args_dict.get("mode") for run in compiled.runs if run.scenario.name == "synthetic_reasoning"]
    assert sorted({str(m) for m in modes}) == ["induction", "pattern_match", "variable_substitution"]
    assert len(modes) == 6  # two systems: the chat template and plain prompts
    assert {run.adapter.prompt_format for run in compiled.runs} == {"chat", "plain"}
    assert any(run.scenario.name == "arithmetic" for run in compiled.runs)
    for run in compiled.runs:
        assert run.adapter.max_eval_instances is not None and run.adapter.max_eval_instances <= 20
        assert {"accuracy", "calibration", "efficiency"} <= set(run.metrics)
        if run.scenario.name in ("synthetic_reasoning", "arithmetic"):
            assert run.perturbations == ()  # robustness is n/a for symbolic tasks: nothing extra is run
        elif "capitals" in run.groups:  # the question-answering file measures robustness and fairness
            assert {p.name for p in run.perturbations} >= {"mild_mix", "dialect", "gender", "person_names"}
        else:  # sentiment: accuracy against its chance and majority baselines, no perturbed variants
            assert "sentiment" in run.groups and run.perturbations == ()
    plan = make_plan(compiled)
    assert plan.total_eval_instances <= 300  # variants included: a couple of minutes on a CPU
