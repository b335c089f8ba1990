"""``adaptation.reasoning`` in a run spec: lists multiply, and a setting the model cannot take, a
budget over ``max_tokens`` or a negative one are errors at the spec's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.core.errors import SpecError
from holistic.core.specs import ReasoningSetting, RunSpec
from holistic.spec import compile_spec

MODELS = """\
models:
  - name: loop/effort
    provider: openai
    args: {base_url: "http://127.0.0.1:9/v1"}
    capabilities: {chat: true, completions: false}
    reasoning: {style: openai_effort}
  - name: loop/claude
    provider: anthropic
    args: {base_url: "http://127.0.0.1:9"}
    capabilities: {chat: true}
    reasoning: {style: anthropic_thinking}
  - name: loop/plain
    provider: openai
    args: {base_url: "http://127.0.0.1:9/v1"}
    capabilities: {chat: true, completions: false}
"""


def compile_text(tmp_path: Path, runs: str, models: str = "[loop/effort]") -> list[RunSpec]:
    (tmp_path / "models.yaml").write_text(MODELS, encoding="utf-8")
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"suite: demo\nmodels: {models}\nruns:\n{runs}", encoding="utf-8")
    return list(compile_spec(spec, models_file=tmp_path / "models.yaml").runs)


def error(tmp_path: Path, runs: str, models: str = "[loop/effort]") -> SpecError:
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, runs, models)
    return info.value


RUN = "  - scenario: arithmetic\n    adaptation:\n"


def test_a_list_of_efforts_multiplies_the_run_and_defaults_layer_under_it(tmp_path: Path) -> None:
    runs = compile_text(
        tmp_path,
        RUN + "      reasoning: {effort: [low, high]}\n",
        models="[loop/effort]\ndefaults:\n  adaptation: {max_tokens: 300}",
    )
    assert [r.adapter.reasoning for r in runs] == [ReasoningSetting("low"), ReasoningSetting("high")]
    assert len({r.run_id for r in runs}) == 2 and all(r.adapter.max_tokens == 300 for r in runs)
    assert "reasoning.effort=low" in runs[0].name and "reasoning.effort=high" in runs[1].name
    assert runs[0].canonical()["adapter"]["reasoning"] == {"effort": "low"}


def test_defaults_give_a_budget_the_run_does_not_override(tmp_path: Path) -> None:
    runs = compile_text(
        tmp_path,
        RUN + "      max_tokens: 500\n      reasoning: {budget_tokens: [100, 400]}\n",
        models="[loop/claude]\ndefaults:\n  adaptation: {reasoning: {budget_tokens: 50}}",
    )
    assert [r.adapter.reasoning for r in runs] == [ReasoningSetting(None, 100), ReasoningSetting(None, 400)]


def test_a_budget_over_max_tokens_is_an_error_at_its_line_with_both_numbers(tmp_path: Path) -> None:
    err = error(
        tmp_path, RUN + "      max_tokens: 200\n      reasoning: {budget_tokens: [100, 300]}\n", "[loop/claude]"
    )
    assert err.line == 7 and "300" in str(err) and "max_tokens 200" in str(err)
    negative = error(tmp_path, RUN + "      reasoning: {budget_tokens: -5}\n", "[loop/claude]")
    assert negative.line == 6 and "-5" in str(negative) and "max_tokens is 16" in str(negative)  # the scenario's own


def test_a_setting_the_model_cannot_take_is_an_error_at_compile_time(tmp_path: Path) -> None:
    plain = error(tmp_path, RUN + "      reasoning: {effort: high}\n", "[loop/plain]")
    assert plain.line == 6 and "takes no reasoning setting" in str(plain)
    budget = error(tmp_path, RUN + "      reasoning: {budget_tokens: 10}\n", "[loop/effort]")
    assert "openai_effort" in str(budget) and "anthropic_thinking" in str(budget)
    effort = error(tmp_path, RUN + "      reasoning: {effort: high}\n", "[loop/claude]")
    assert "budget_tokens" in str(effort)
    typo = error(tmp_path, RUN + "      reasoning: {efort: high}\n")
    assert "did you mean 'effort'" in str(typo)
    bad = error(tmp_path, RUN + "      reasoning: {effort: hihg}\n")
    assert "did you mean 'high'" in str(bad)


def test_protocol_helm_sends_no_reasoning_setting(tmp_path: Path) -> None:
    err = error(tmp_path, "  - scenario: arithmetic\n    protocol: helm\n    adaptation: {reasoning: {effort: low}}\n")
    assert "departs from HELM's protocol" in str(err) and "protocol: holistic" in str(err)
