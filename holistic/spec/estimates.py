"""Cheap size estimates for ``--plan``: eval instances, requests and prompt tokens.

Nothing here loads a data set or a model.

The scenario says what it knows in one hook, ``plan_facts(data_root, max_eval_instances)
-> PlanFacts`` on the scenario constructed from the run's arguments (no data loaded):

- **Eval instances**: its ``num_instances`` (a scenario that can count its
  test set without reading it, e.g. a procedural one or one with a known size),
  capped by ``max_eval_instances``. Without an estimate the cap is shown as an
  upper bound (``<=N``); without either, ``?``. Perturbed variants are counted on
  top: each perturbation adds one variant per instance.
- **Requests**: ``holistic.adaptation.count_requests(n_eval, n_refs, spec)`` with
  ``n_refs`` from its ``num_references``, else
  :data:`DEFAULT_NUM_REFERENCES` (only the multiple-choice scoring methods depend on it).
- **Prompt tokens** (a heuristic, shown with ``~``): characters of a typical prompt
  divided by :data:`CHARS_PER_TOKEN`, times the number of requests. A typical
  prompt is the instructions and global prefix/suffix plus ``k + 1`` instance
  blocks (``k`` in-context examples and the eval input), each block being the
  input (its ``input_chars``, else
  :data:`INPUT_CHARS_BY_TASK`), the input/output prefixes and suffixes, the
  lettered choices for joint multiple choice (each ``choice_chars``
  long, else :data:`CHOICE_CHARS`), and for examples an answer of
  :data:`ANSWER_CHARS`. The ``file`` scenario reads its files for all of these, so
  its counts are real. ``language_modeling`` requests are one window each. The
  result is capped at the model's context window.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import HolisticError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment
from holistic.scenarios.base import BaseScenario, PlanFacts

CHARS_PER_TOKEN = 4.0
"""English text averages about four characters per BPE token."""

ANSWER_CHARS = 20
"""Typical length of an in-context example's answer."""

CHOICE_CHARS = 40
"""Typical length of one multiple-choice option."""

DEFAULT_NUM_REFERENCES = 4
"""Choices per instance assumed when a scenario does not say."""

INPUT_CHARS_BY_TASK: Mapping[str, int] = {
    "classification": 400,
    "multiple_choice": 300,
    "qa": 1200,
    "generation": 300,
    "summarization": 3000,
    "reasoning": 250,
    "ranking": 600,
    "language_modeling": 2000,
    "long_context": 20000,
}
"""Typical input length by :attr:`ScenarioInfo.task`, used without a scenario estimate."""

_FALLBACK_INPUT_CHARS = 500


@dataclass(frozen=True)
class RunSize:
    """Estimated size of one run."""

    eval_instances: int | None
    """Eval instances after down-sampling (originals only); ``None`` if unknown."""
    eval_instances_is_bound: bool
    """True when only the ``max_eval_instances`` cap is known (the real count may be lower)."""
    variants: int | None
    """Eval instances including perturbed variants."""
    requests: int | None
    """Model requests (all trials); ``None`` if unknown."""
    prompt_tokens: int | None
    """Estimated prompt tokens over all requests; ``None`` if unknown."""
    prompt_tokens_source: str = "typical"
    """How ``prompt_tokens`` was had: ``typical`` (the heuristic here), ``prompts`` (the
    run's prompts built, tokens approximated), ``sampled`` (the prompts of a sample of
    its real instances, scaled) or ``exact`` (built and tokenised by the model's own
    tokenizer and chat template)."""


def plan_facts(
    scenario_cls: type[BaseScenario], args: Mapping[str, Any], data_root: Path | None, max_eval_instances: int | None
) -> PlanFacts:
    """The scenario's :class:`PlanFacts` for these arguments (none known when they are
    arguments the run will reject)."""
    try:
        scenario = scenario_cls(**args)
    except (HolisticError, TypeError, ValueError):
        return PlanFacts()
    return scenario.plan_facts(data_root, max_eval_instances)


def estimate_run(
    facts: PlanFacts,
    info: ScenarioInfo,
    adapter: AdapterSpec,
    deployment: ModelDeployment,
    num_perturbations: int,
    *,
    count_requests: Callable[..., int] | None,
    max_eval_instances_override: int | None = None,
) -> RunSize:
    """Estimate one run's size (see the module docstring for the method)."""
    cap = max_eval_instances_override if max_eval_instances_override is not None else adapter.max_eval_instances
    available = facts.num_instances
    if available is not None:
        n_eval: int | None = min(available, cap) if cap is not None else available
        is_bound = False
    else:
        n_eval, is_bound = cap, cap is not None
    variants = None if n_eval is None else n_eval * (1 + num_perturbations)
    n_refs = facts.num_references or DEFAULT_NUM_REFERENCES
    requests: int | None = None
    if variants is not None and count_requests is not None:
        requests = int(count_requests(variants, n_refs, adapter))
    tokens = None
    if requests is not None:
        input_chars = facts.input_chars
        if input_chars is None:
            input_chars = INPUT_CHARS_BY_TASK.get(info.task, _FALLBACK_INPUT_CHARS)
        choice_chars = facts.choice_chars
        per_request = prompt_tokens_per_request(
            adapter,
            input_chars,
            n_refs,
            deployment.context_window,
            choice_chars=choice_chars if choice_chars is not None else CHOICE_CHARS,
        )
        tokens = requests * per_request
    return RunSize(
        eval_instances=n_eval,
        eval_instances_is_bound=is_bound,
        variants=variants,
        requests=requests,
        prompt_tokens=tokens,
    )


def prompt_tokens_per_request(
    adapter: AdapterSpec, input_chars: int, n_refs: int, context_window: int, *, choice_chars: int = CHOICE_CHARS
) -> int:
    """The heuristic token count of one typical prompt (see the module docstring)."""
    if adapter.method == "language_modeling":
        return min(adapter.language_modeling_window, context_window)
    block = (
        input_chars
        + len(adapter.input_prefix)
        + len(adapter.input_suffix)
        + len(adapter.output_prefix)
        + len(adapter.instance_prefix)
    )
    if adapter.method == "multiple_choice_joint":
        block += n_refs * (len(adapter.reference_prefix) + choice_chars + len(adapter.reference_suffix))
    examples = adapter.max_train_instances
    chars = (
        len(adapter.instructions)
        + len(adapter.global_prefix)
        + len(adapter.global_suffix)
        + (examples + 1) * block
        + examples * (ANSWER_CHARS + len(adapter.output_suffix))
    )
    if adapter.method in ("multiple_choice_separate_original", "multiple_choice_separate_calibrated"):
        chars += choice_chars  # the scored continuation
    return min(math.ceil(chars / CHARS_PER_TOKEN), context_window)
