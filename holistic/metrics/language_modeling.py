"""Language modelling: how well the model predicts a text, over the ``window`` states.

Each window state scores a span of the document: the request's ``continuation``
for ``loglikelihood`` windows (the earlier context only conditions), the whole
``prompt`` for ``rolling_loglikelihood`` windows. Summing over an instance's
windows in a trial:

- ``bits_per_byte`` = -sum logprob / ln 2 / UTF-8 bytes of the scored text
  (tokenizer-independent; Gao et al., 2021), lower is better;
- ``perplexity`` = exp(-sum logprob / tokens), per the model's own tokens;
- ``logprob_per_token`` = sum logprob / tokens.

Values are per instance (document); the run-level number is their mean. An
instance with a failed window gets no values (a partial sum would look better
than the truth).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.registry import METRICS
from holistic.metrics.states import WINDOW_ROLE, group_units, succeeded


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


@METRICS.register("language_modeling")
class LanguageModelingMetric(BaseMetric):
    """Bits per byte, perplexity and logprob per token over rolling windows."""

    name = "language_modeling"
    category = "accuracy"
    INFOS = (
        info("bits_per_byte", "accuracy", "Negative log2-likelihood per UTF-8 byte of the text.",
             higher_is_better=False, needs_logprobs=True, needs_references=False),
        info("perplexity", "accuracy", "exp of the mean negative logprob per model token.",
             higher_is_better=False, needs_logprobs=True, needs_references=False),
        info("logprob_per_token", "accuracy", "Mean logprob per model token.",
             needs_logprobs=True, needs_references=False),
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method != "language_modeling":
            return f"likelihood of a text needs the language_modeling method, not {adapter.method}"
        if not deployment.capabilities.prompt_logprobs:
            return f"model {deployment.name} cannot score text (no prompt logprobs)"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit in group_units(states):
            windows = unit.with_role(WINDOW_ROLE)
            if not windows or not all(succeeded(w) for w in windows):
                continue
            totals = [window_totals(w) for w in windows]
            logprob = sum(t[0] for t in totals)
            tokens = sum(t[1] for t in totals)
            n_bytes = sum(t[2] for t in totals)
            if n_bytes > 0:
                result.per_instance.append(unit.stat("bits_per_byte", -logprob / math.log(2) / n_bytes))
            if tokens > 0:
                result.per_instance.append(unit.stat("perplexity", math.exp(min(-logprob / tokens, 700.0))))
                result.per_instance.append(unit.stat("logprob_per_token", logprob / tokens))
        return result
