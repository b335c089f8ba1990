from __future__ import annotations

import pytest

from holistic.metrics.efficiency import EfficiencyMetric
from holistic.metrics.runtime_model import fit_runtime_model
from tests.metrics.metrics_testkit import DEPLOYMENT, ctx, gen_state, instance


def test_runtime_model_recovers_known_costs_and_keeps_coefficients_non_negative() -> None:
    samples = [(p, c, 0.05 + 0.001 * p + 0.02 * c) for p, c in [(10, 1), (100, 5), (50, 20), (300, 2), (20, 40)]]
    model = fit_runtime_model(samples)
    assert model is not None
    assert model.overhead_s == pytest.approx(0.05)
    assert model.s_per_prompt_token == pytest.approx(0.001)
    assert model.s_per_completion_token == pytest.approx(0.02)
    assert model.r_squared == pytest.approx(1.0)
    # latency falling with prompt size would need a negative slope: the fit drops that term
    odd = fit_runtime_model([(10, 1, 1.0), (100, 1, 0.5), (200, 1, 0.1)])
    assert odd is not None and odd.s_per_prompt_token == 0.0
    assert fit_runtime_model([(1, 1, 1.0), (2, 2, 2.0)]) is None


def test_efficiency_per_instance_cost_and_cache_flags() -> None:
    a, b, c = instance("a", ["x"]), instance("b", ["x"]), instance("c", ["x"])
    states = [
        gen_state(a, "x", latency=1.0, prompt_tokens=100, completion_tokens=10),
        gen_state(b, "x", latency=2.0, prompt_tokens=200, completion_tokens=20, cached=True),
        gen_state(c, "x", success=False),
    ]
    result = EfficiencyMetric().evaluate(states, ctx())
    per = {(s.instance_id, s.name.name): s.value for s in result.per_instance}
    assert per[("a", "inference_runtime")] == 1.0
    assert per[("b", "inference_runtime")] == 2.0  # cached request keeps its original latency
    assert per[("a", "cost_usd")] == pytest.approx((100 * 2.0 + 10 * 10.0) / 1e6)
    assert per[("b", "num_prompt_tokens")] == 200
    run = {s.name.name: s.sum for s in result.run_stats}
    assert run["num_cached_requests"] == 1
    assert run["num_failed_requests"] == 1
    assert run["tokens_per_second"] == pytest.approx(110.0)
    assert result.artifacts["efficiency"]["runtime_model"] is None  # one uncached request: no fit
    assert DEPLOYMENT.price_input_per_million == 2.0


def test_idealized_runtime_is_reported_when_the_fit_exists() -> None:
    states = [
        gen_state(instance(f"i{k}", ["x"]), "x", latency=0.1 + 0.01 * p + 0.1 * c, prompt_tokens=p, completion_tokens=c)
        for k, (p, c) in enumerate([(10, 1), (20, 3), (40, 2), (80, 6)])
    ]
    result = EfficiencyMetric().evaluate(states, ctx())
    ideal = {s.instance_id: s.value for s in result.per_instance if s.name.name == "idealized_inference_runtime"}
    assert ideal["i3"] == pytest.approx(0.1 + 0.8 + 0.6)
    assert result.artifacts["efficiency"]["runtime_model"]["num_requests"] == 4
