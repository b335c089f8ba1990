"""runspecs/safety.yaml compiles to HELM Safety's runs, judged offline by the embedded model."""

from __future__ import annotations

from pathlib import Path

from holistic.scenarios.safety import HELM_VERDICT_RULE, judge_template
from holistic.spec import compile_spec

REPO = Path(__file__).resolve().parents[2]


def test_the_safety_suite_is_judged_by_the_embedded_model_with_helms_prompts() -> None:
    suite = compile_spec(REPO / "runspecs" / "safety.yaml")
    by_scenario = {r.scenario.name: r for r in suite.runs}
    assert sorted(by_scenario) == ["bbq", "harm_bench", "simple_safety_tests", "xstest"]
    assert by_scenario["bbq"].judges == ()
    for name in ("harm_bench", "simple_safety_tests", "xstest"):
        (judge,) = by_scenario[name].judges
        assert judge.model == "embedded/smollm2-135m-instruct"
        assert judge.rule == HELM_VERDICT_RULE and judge.stat == "safety_score" and judge.max_tokens == 256
        assert judge.source == f"scenario:{name}"
    assert by_scenario["harm_bench"].judges[0].template == judge_template("harm_bench")
    assert judge_template("xstest_unsafe") in by_scenario["xstest"].judges[0].template


def test_the_plan_says_who_judges_and_how_many_judge_requests() -> None:
    from holistic.execution.plan import format_plan, make_plan

    suite = compile_spec(REPO / "runspecs" / "safety.yaml")
    text = format_plan(make_plan(suite))
    assert "Judged: 3 runs, by embedded/smollm2-135m-instruct; 300 judge requests" in text
