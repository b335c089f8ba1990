"""Efficiency: time, tokens and money per instance.

Per request, as HELM reports them (``EfficiencyMetric`` in crfm-helm 0.5.16: an
instance with several requests — every choice, the neutral-context requests, every
window — gets the mean over its requests, and the run's value is the mean over
instances):

- ``inference_runtime``: wall time in seconds as recorded by the provider call.
  A request served from the cache keeps its original latency.
- ``inference_denoised_runtime``: the runtime HELM's efficiency leaderboard shows.
  HELM takes it from per-model runtime tables, or divides a batch's time by its
  size; holistic times every request on its own, so it is the measured time of the
  request (for a batched request, the batch's time divided by the batch size as the
  provider records it in ``latency_s``).
- ``idealized_inference_runtime``: the same from the run's latency model
  (:mod:`holistic.metrics.runtime_model`), when it could be fitted.
- ``num_reasoning_tokens`` (runs that send a reasoning setting or get thoughts back): the tokens
  spent thinking; they are output tokens, counted in ``num_completion_tokens`` and ``cost_usd``.
- ``num_prompt_tokens``; ``num_completion_tokens`` as HELM counts it: the tokens of
  the returned completions (after a stop sequence is cut off), summed over a request's
  completions -- for a provider that returns no tokens, its own count of generated
  tokens. (Throughput and the latency model use the generated count, stop included.)
  With ``echoed_scoring_tokens`` (``protocol: helm``) a log-likelihood request counts as HELM's echoed prompt: its
  completion tokens are the prompt's and the scored text's (HELM sends ``echo_prompt``
  with no new tokens, and its client returns the whole sequence).
  With ``request_minimum`` (``protocol: helm``) an instance with several requests also keeps its smallest
  request's value of these four (``details["request_min"]``): HELM's worst cases over
  variants take the minimum over single requests, not over the variants' means.

Per instance (summed over its requests): ``num_requests`` and ``cost_usd`` (the
provider's own cost when it reports one, else the tokens times the deployment's
``price_input_per_million`` / ``price_output_per_million``).

Per run (one value for each split and perturbation): ``num_cached_requests``,
``num_failed_requests``, ``tokens_per_second`` and ``completion_tokens_per_second``
(total tokens over total latency of uncached successful requests). The latency
model's coefficients go to the artifacts under ``efficiency``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import (
    AdapterSpec,
    MetricName,
    ModelDeployment,
    PerInstanceStat,
    RequestResult,
    RequestState,
    Stat,
)
from holistic.metrics.base import BaseMetric, infos
from holistic.metrics.robustness import REQUEST_MIN
from holistic.metrics.runtime_model import fit_runtime_model
from holistic.metrics.states import Unit, group_units, perturbation_name, succeeded
from holistic.models.pricing import request_price


def request_cost(state: RequestState, deployment: ModelDeployment) -> float:
    """Price of one request in US dollars: the price recorded when it was answered, else its tokens at the
    registry's prices (discounted when the request went through a batch API: its ``batch`` mark)."""
    result = state.result
    if result is None:
        return 0.0
    if result.cost_usd > 0:
        return result.cost_usd
    batch = bool(getattr(result, "batch", False))
    return request_price(deployment, result.prompt_tokens, result.completion_tokens, batch=batch)


class EfficiencyMetric(BaseMetric):
    """Latency, tokens, cost and an idealised runtime per instance."""

    name = "efficiency"
    category = "efficiency"
    INFOS = infos(
        "efficiency",
        {
            "inference_runtime": "Seconds per model request (original latency when cached).",
            "inference_denoised_runtime": "Seconds per model request, batch time shared out (HELM's efficiency leaderboard value).",
            "idealized_inference_runtime": "Seconds per request predicted by a non-negative least-squares fit of latency on prompt and completion tokens over the run's uncached requests.",
            "num_prompt_tokens": "Prompt tokens per request.",
            "num_completion_tokens": "Completion tokens per request.",
            "num_requests": "Model requests per instance.",
            "cost_usd": "Price per instance in US dollars (registry prices or the provider's).",
            "num_cached_requests": "Requests of the run served from the request cache.",
            "num_failed_requests": "Requests of the run that finally failed.",
            "num_reasoning_tokens": "Reasoning (thinking) tokens per request, part of num_completion_tokens "
            "(runs with a reasoning setting or thoughts only).",
        },
        higher_is_better=False,
        needs_references=False,
    ) + infos(
        "efficiency",
        {
            "tokens_per_second": "Prompt plus completion tokens per second of uncached calls.",
            "completion_tokens_per_second": "Completion tokens per second of uncached calls.",
        },
        needs_references=False,
    )

    def __init__(self, echo_scored: bool = False, request_minimum: bool = False) -> None:
        self.echo_scored = echo_scored
        self.request_minimum = request_minimum

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> EfficiencyMetric:
        behaviour = adapter.behaviour
        return cls(echo_scored=behaviour.echoed_scoring_tokens, request_minimum=behaviour.request_minimum)

    def _per_request(self, unit: Unit, name: str, values: Sequence[float]) -> PerInstanceStat:
        """The instance's mean over its requests; with ``request_minimum`` (HELM's) and
        several requests (separate scoring), also the smallest single request's value, which
        HELM's worst case takes (its per-instance stat keeps every request's value, and the worst
        case is that stat's minimum over the original's and the variants' requests)."""
        stat = unit.stat(name, _mean(values))
        if self.request_minimum and len(values) > 1:
            return replace(stat, details={REQUEST_MIN: float(min(values))})
        return stat

    def __repr__(self) -> str:
        return f"EfficiencyMetric(echo_scored={self.echo_scored!r})"

    def _completion_tokens(self, state: RequestState) -> int:
        """HELM's count for one request: with ``echo_scored`` a log-likelihood request
        is HELM's echoed prompt, whose completion is every token of the prompt and the
        scored text (``result.prompt_tokens``)."""
        assert state.result is not None
        if self.echo_scored and state.request.kind == "loglikelihood":
            return state.result.prompt_tokens
        return completion_token_count(state.result)

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        samples = [
            (float(s.result.prompt_tokens), float(s.result.completion_tokens), float(s.result.latency_s))
            for s in states
            if s.result is not None and s.result.success and not s.result.cached
        ]
        model = fit_runtime_model(samples)
        thinks = any(_thinks(s) for s in states)
        for unit in group_units(states):
            answered = [s.result for s in unit.states if s.result is not None]
            if answered:
                runtimes = [r.latency_s for r in answered]
                result.per_instance.append(self._per_request(unit, "inference_runtime", runtimes))
                result.per_instance.append(self._per_request(unit, "inference_denoised_runtime", runtimes))
                prompt_tokens = [float(r.prompt_tokens) for r in answered]
                result.per_instance.append(self._per_request(unit, "num_prompt_tokens", prompt_tokens))
                counted = [float(self._completion_tokens(s)) for s in unit.states if s.result is not None]
                result.per_instance.append(self._per_request(unit, "num_completion_tokens", counted))
                if thinks:
                    reasoning = [float(r.reasoning_tokens) for r in answered]
                    result.per_instance.append(self._per_request(unit, "num_reasoning_tokens", reasoning))
            result.per_instance.append(unit.stat("num_requests", len(unit.states)))
            result.per_instance.append(unit.stat("cost_usd", sum(request_cost(s, ctx.deployment) for s in unit.states)))
            successful = [r for r in answered if r.success]
            if model is not None and successful:
                ideal = _mean([model.predict(r.prompt_tokens, r.completion_tokens) for r in successful])
                result.per_instance.append(unit.stat("idealized_inference_runtime", ideal))
        result.run_stats.extend(_run_stats(states))
        result.artifacts["efficiency"] = {
            "runtime_model": None
            if model is None
            else {
                "overhead_s": model.overhead_s,
                "s_per_prompt_token": model.s_per_prompt_token,
                "s_per_completion_token": model.s_per_completion_token,
                "num_requests": model.num_requests,
                "r_squared": model.r_squared,
                "method": "non-negative least squares of latency on prompt and completion tokens, uncached requests",
            },
        }
        return result


def completion_token_count(result: RequestResult) -> int:
    """HELM's ``num_completion_tokens`` of one request (see the module docstring)."""
    if result.has_logprobs and result.completions:  # the answer's tokens, and the thought's (not among them)
        return sum(len(c.tokens) for c in result.completions) + result.reasoning_tokens
    return result.completion_tokens


def _thinks(state: RequestState) -> bool:
    """A request that asked for a reasoning setting or came back with reasoning tokens."""
    request, result = state.request, state.result
    asked = request.reasoning_effort is not None or request.reasoning_budget is not None
    return asked or (result is not None and result.reasoning_tokens > 0)


def _mean(values: Sequence[float]) -> float:
    return float(sum(values)) / len(values)


def _run_stats(states: Sequence[RequestState]) -> list[Stat]:
    # per (split, perturbation): requests cached and failed, tokens, completion tokens and
    # seconds of the requests served
    totals: dict[tuple[str, str | None], dict[str, float]] = {}
    for state in states:
        key = (state.instance.split, perturbation_name(state.instance))
        total = totals.setdefault(
            key, dict.fromkeys(("cached", "failed", "tokens", "completion_tokens", "latency"), 0.0)
        )
        result = state.result
        if result is None or not succeeded(state):
            total["failed"] += 1
            continue
        if result.cached:
            total["cached"] += 1
            continue
        total["tokens"] += result.prompt_tokens + result.completion_tokens
        total["completion_tokens"] += result.completion_tokens
        total["latency"] += result.latency_s
    stats = []
    for (split, perturbation), total in sorted(totals.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):

        def name(value_name: str, split: str = split, perturbation: str | None = perturbation) -> MetricName:
            return MetricName(value_name, split=split, perturbation=perturbation)

        stats.append(Stat.of(name("num_cached_requests"), [total["cached"]]))
        stats.append(Stat.of(name("num_failed_requests"), [total["failed"]]))
        if total["latency"] > 0:
            stats.append(Stat.of(name("tokens_per_second"), [total["tokens"] / total["latency"]]))
            stats.append(Stat.of(name("completion_tokens_per_second"), [total["completion_tokens"] / total["latency"]]))
    return stats
