"""Prompt sizes for ``--plan`` from the prompts themselves, where that is cheap.

A scenario whose class sets ``plan_builds_prompts = True`` makes its instances without
downloading anything (procedural scenarios, the user's own files). For its runs the
plan builds every request exactly as the run will (same sampling, perturbations,
in-context examples and window fitting) and counts their tokens instead of guessing
from typical lengths:

- with the ``simple`` provider, with its own tokenizer (the counts the run reports);
- otherwise with the pieces of :class:`~holistic.models.approx_tokenizer.ApproxTokenizer`,
  each digit counted on its own (SmolLM2's vocabulary, like most recent ones, splits
  numbers into digits) and the rest divided by :data:`PIECES_PER_TOKEN` (no model or
  tokenizer is loaded). On the quickstart prompts this is within 11% of SmolLM2's own
  counts on every run (arithmetic -11%, the QA file -4%, symbolic reasoning +7..10%).

A scored continuation counts toward the prompt, as the providers report it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from holistic.core.types import ModelDeployment, RunSpec

PIECES_PER_TOKEN = 1.18
"""ApproxTokenizer pieces (digits apart) per token of SmolLM2's 49k-vocabulary BPE
tokenizer, measured on the quickstart prompts."""

_DIGIT = re.compile(r"\d")


def plan_prompt_tokens(run: RunSpec, deployment: ModelDeployment) -> int | None:
    """Prompt tokens of every request of ``run`` (``None`` when its instances are not cheap to make)."""
    from holistic.adaptation import adapt
    from holistic.core.errors import HolisticError
    from holistic.execution.options import RunOptions
    from holistic.execution.pipeline import _load_instances
    from holistic.scenarios.registry import SCENARIOS, create_scenario

    if not SCENARIOS.get(run.scenario.name).plan_builds_prompts:
        return None
    try:
        train, evaluation = _load_instances(run, create_scenario(run.scenario), RunOptions(offline=True))
    except (HolisticError, OSError, TypeError, ValueError):
        return None
    tokenizer, count = _counter(deployment)
    total = 0.0
    for state in adapt(train, evaluation, run.adapter, deployment, tokenizer, seed=run.adapter.seed):
        request = state.request
        text = tokenizer.render_chat(request.messages) if request.messages else request.prompt
        total += count(text)
        if request.kind == "loglikelihood":
            total += count(request.continuation)
    return round(total)


def _counter(deployment: ModelDeployment) -> tuple[Any, Callable[[str], float]]:
    """A tokenizer for adaptation (window fitting) and the token count the plan reports."""
    if deployment.provider == "simple":
        from holistic.models.simple import SimpleTokenizer

        simple = SimpleTokenizer()
        return simple, simple.count
    from holistic.models.approx_tokenizer import ApproxTokenizer

    approx = ApproxTokenizer()

    def count(text: str) -> float:
        digits = 0
        other = 0
        for piece in approx.pieces(text):
            n = len(_DIGIT.findall(piece))
            digits += n
            other += 0 if n else 1
        return digits + other / PIECES_PER_TOKEN

    return approx, count
