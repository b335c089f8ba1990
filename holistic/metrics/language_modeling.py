"""Language modelling: how well the model predicts a text, over the ``window`` states.

Each window state scores a span of the document: the request's ``continuation``
for ``loglikelihood`` windows (the earlier context only conditions), the whole
``prompt`` for ``rolling_loglikelihood`` windows. As in HELM
(``compute_language_modeling_metrics`` / ``compute_perplexity_metrics``):

- per instance (summed over its windows in a trial): ``logprob``,
  ``num_perplexity_tokens`` (the model's tokens) and ``num_bytes`` (UTF-8 bytes of
  the scored text);
- per run, for each split, sub-split and perturbation, **pooled** over its
  instances (a ratio of sums, not a mean of per-document ratios):
  ``bits_per_byte`` = -sum logprob / sum bytes / ln 2 (tokenizer-independent; Gao
  et al., 2021), ``perplexity`` = exp(-sum logprob / sum tokens) and
  ``logprob_per_byte`` = sum logprob / sum bytes; and the same per group of each
  breakdown key the scenario declares (TwitterAAE's ``demographic=aa``, ICE's
  ``region=ind``), pooled within the group.

An instance with a failed window gets no values (a partial sum would look better
than the truth).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, Instance, MetricName, ModelDeployment, RequestRole, RequestState, Stat
from holistic.metrics.base import EVERY_TASK, BaseMetric, infos, scoring_problem
from holistic.metrics.breakdown import breakdown_sub_split
from holistic.metrics.states import group_units, metric_name, succeeded


def scored_text(state: RequestState) -> str:
    """The text whose logprob a window state reports."""
    if state.request.kind == "loglikelihood":
        return state.request.continuation
    return state.request.prompt


def window_totals(state: RequestState) -> tuple[float, int, int]:
    """(sum logprob, tokens, UTF-8 bytes) of one successful window."""
    assert state.result is not None and state.result.completions
    completion = state.result.completions[0]
    if completion.tokens:
        logprob = sum(t.logprob for t in completion.tokens)
        tokens = len(completion.tokens)
    else:
        logprob = completion.logprob
        tokens = state.result.prompt_tokens
    text = scored_text(state) or completion.text
    return logprob, tokens, len(text.encode("utf-8"))


def pooled_groups(instance: Instance, breakdowns: Sequence[str]) -> list[MetricName]:
    """The pools a document counts in: its own split/sub-split/perturbation, and (when it has
    no sub-split of its own) one ``key=value`` group per breakdown key in its metadata."""
    own = metric_name(instance, "")
    groups = [own]
    if own.sub_split is None:
        for key in breakdowns:
            value = instance.metadata.get(key)
            if value is not None:
                groups.append(replace(own, sub_split=breakdown_sub_split(key, value)))
    return groups


class LanguageModelingMetric(BaseMetric):
    """Bits per byte, perplexity and logprob per byte, pooled over a run's documents (as HELM)."""

    name = "language_modeling"
    category = "accuracy"
    accuracy_tasks = EVERY_TASK
    INFOS = infos(
        "accuracy",
        {
            "bits_per_byte": "Negative log2-likelihood per UTF-8 byte, pooled: -sum logprob / sum bytes / ln 2 over the run's documents.",
            "perplexity": "exp(-sum logprob / sum model tokens) over the run's documents.",
        },
        higher_is_better=False,
        needs_logprobs=True,
        needs_references=False,
    ) + infos(
        "accuracy",
        {
            "logprob_per_byte": "sum logprob / sum UTF-8 bytes over the run's documents.",
            "logprob": "Log-likelihood of the document (sum over its windows).",
            "num_perplexity_tokens": "Model tokens scored in the document.",
            "num_bytes": "UTF-8 bytes scored in the document.",
        },
        needs_logprobs=True,
        needs_references=False,
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        return scoring_problem(adapter, deployment, "language_modeling", "likelihood of a text needs", "text")

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        pooled: dict[MetricName, dict[int, list[float]]] = {}
        for unit in group_units(states):
            windows = unit.with_role(RequestRole.WINDOW)
            if not windows or not all(succeeded(w) for w in windows):
                continue
            totals = [window_totals(w) for w in windows]
            sums = [sum(t[0] for t in totals), sum(t[1] for t in totals), sum(t[2] for t in totals)]
            result.per_instance.append(unit.stat("logprob", sums[0]))
            result.per_instance.append(unit.stat("num_perplexity_tokens", sums[1]))
            result.per_instance.append(unit.stat("num_bytes", sums[2]))
            for group in pooled_groups(unit.instance, ctx.scenario_info.breakdowns):
                trial = pooled.setdefault(group, {}).setdefault(unit.key.trial, [0.0, 0.0, 0.0])
                for i, value in enumerate(sums):
                    trial[i] += value
        for group in sorted(pooled, key=lambda n: (n.split, n.sub_split or "", n.perturbation or "")):
            values: dict[str, list[float]] = {}
            for logprob, n_tokens, n_bytes in pooled[group].values():
                if n_tokens > 0:
                    values.setdefault("perplexity", []).append(math.e ** min(-logprob / n_tokens, 700.0))
                if n_bytes > 0:
                    values.setdefault("bits_per_byte", []).append(-logprob / n_bytes / math.log(2))
                    values.setdefault("logprob_per_byte", []).append(logprob / n_bytes)
            for value_name, trial_values in values.items():
                result.run_stats.append(Stat.of(replace(group, name=value_name), trial_values))
        return result
