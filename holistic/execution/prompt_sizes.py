"""Prompt sizes for ``--plan`` from the prompts themselves, where that is cheap.

A scenario whose :class:`~holistic.scenarios.base.PlanFacts` say ``builds_prompts`` makes
its instances without downloading anything (procedural scenarios, the user's own files). For its runs the
plan builds every request exactly as the run will (same sampling, perturbations,
in-context examples and window fitting) and counts their tokens instead of guessing
from typical lengths. A scenario with small data files says ``samples_prompts``: when its files are on this machine (``--data-root``, ``$HOLISTIC_DATA_ROOT``
or the data cache; a plan never downloads), the plan reads them, builds the requests
of the first :data:`SAMPLE_INSTANCES` eval instances of the run's sample and of their
perturbed variants (in-context examples drawn as the run draws them; a perturbation
whose data is not here is taken to make one variant as long as its original) and
scales their tokens to the run's eval instances. The count is:

- **exact** for models whose tokenizer is on this machine
  (:func:`~holistic.models.counting.local_tokenizer`: ``simple``, ``embedded``,
  ``llama_cpp``, local or cached ``huggingface``, a plugin provider that declares its
  tokens): chat messages are rendered through the model's own chat template (its
  default system prompt and role markers included), and tokens are counted as the
  provider reports ``prompt_tokens`` (:func:`~holistic.models.local_client.prompt_token_count`
  for local engines, as their ``TokenCounting.engine_accounting`` says);
  only the tokenizer files are read, never the weights (and neither transformers nor
  torch is imported). The embedded model's tokenizer folder is saved by its first
  run; before that its count is approximate;
- **approximate** otherwise (API models): the pieces of
  :class:`~holistic.models.approx_tokenizer.ApproxTokenizer`, each digit counted on
  its own (most recent vocabularies split numbers into digits) and the rest divided
  by :data:`PIECES_PER_TOKEN`; chat messages add a few pieces per message for the role
  markers.

A scored continuation counts toward the prompt, as the providers report it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from holistic.core.interfaces import ScenarioContext, Tokenizer
from holistic.core.types import Instance, ModelDeployment, Request, RunSpec

if TYPE_CHECKING:
    from holistic.models.approx_tokenizer import ApproxTokenizer

PIECES_PER_TOKEN = 1.18
"""ApproxTokenizer pieces (digits apart) per token of SmolLM2's 49k-vocabulary BPE
tokenizer, measured on the quickstart prompts."""

_DIGIT = re.compile(r"\d")


SAMPLE_INSTANCES = 32
"""Eval instances whose prompts are built for a scenario that reads data files."""


@dataclass(frozen=True)
class PromptCount:
    """Prompt tokens of every request of a run, as ``--plan`` shows them."""

    tokens: int
    exact: bool
    """Counted with the model's own tokenizer and chat template (else approximated)."""
    sampled: bool = False
    """Built for a sample of the eval instances and scaled to all of them."""
    reference_tokens: int | None = None
    """Approximate tokens of every request's first correct reference, as many as ``tokens`` counts
    (``None``: the instances have none): the expected completion length of ``--plan``'s cost forecast."""


def plan_prompt_tokens(
    run: RunSpec, deployment: ModelDeployment, *, data_root: Path | None = None, whole: bool = True
) -> PromptCount | None:
    """Prompt tokens of every request of ``run`` (``whole``: its instances are made from its
    arguments, so all are built; else a sample of the real instances, scaled); ``None`` when
    they are not on this machine (see the module docstring)."""
    from holistic.adaptation import adapt
    from holistic.core.errors import HolisticError
    from holistic.execution.options import RunOptions
    from holistic.execution.pipeline import _load_instances
    from holistic.execution.sampling import run_sample, split_instances
    from holistic.scenarios.registry import create_scenario

    options = RunOptions(offline=True, data_root=data_root)
    try:
        scenario = create_scenario(run.scenario)
        if whole:
            train, evaluation = _load_instances(run, scenario, options)
            scale = 1.0
        else:
            ctx = ScenarioContext(data_root=data_root, offline=True, seed=run.adapter.seed, model=run.model)
            train, originals = split_instances(scenario.get_instances(ctx))
            originals = run_sample(originals, run)
            # A sample (the downsampled order is already seeded), perturbed as the run perturbs
            # it — HELM's perturbations drop the variants they leave unchanged, except where
            # HELM keeps them (keep_unchanged_variants) — and scaled.
            sample = originals[:SAMPLE_INSTANCES]
            if not sample:
                return None
            evaluation, scale = _perturbed_sample(run, sample, data_root)
            scale *= len(originals) / len(sample)
    except (HolisticError, OSError, TypeError, ValueError):
        return None  # data not here (never downloaded for a plan), or arguments the run will reject
    tokenizer, count, exact = counter_for(deployment)
    states = adapt(train, evaluation, run.adapter, deployment, tokenizer, seed=run.adapter.seed)
    total = sum(count(state.request) for state in states) * scale
    answers = [next((r.output for r in s.instance.references if r.is_correct), None) for s in states]
    known = [approx_text_tokens(a) for a in answers if a is not None]
    reference = round(sum(known) / len(known) * len(states) * scale) if known else None
    return PromptCount(round(total), exact, sampled=not whole, reference_tokens=reference)


def _perturbed_sample(run: RunSpec, sample: list[Instance], data_root: Path | None) -> tuple[list[Instance], float]:
    """``sample`` with its variants, as the run makes them, and the factor left to scale by.

    When a perturbation cannot be applied offline (its data is not here), variants are
    taken to be as many and about as long as their originals."""
    from holistic.core.errors import HolisticError
    from holistic.execution.pipeline import _seed
    from holistic.perturbations import apply_perturbations

    if not run.perturbations:
        return sample, 1.0
    try:
        variants = apply_perturbations(
            sample,
            run.perturbations,
            seed=_seed(run, "perturbations"),
            helm=run.adapter.behaviour.helm_perturbations,
            data_root=data_root,
            offline=True,
            keep_unchanged=run.adapter.behaviour.keep_unchanged_variants,
        )
    except (HolisticError, OSError, ValueError):
        return sample, 1.0 + len(run.perturbations)
    return variants, 1.0


RequestCounter = Callable[[Request], float]


def counter_for(deployment: ModelDeployment) -> tuple[Tokenizer, RequestCounter, bool]:
    """A tokenizer for adaptation (window fitting), the prompt tokens of one request as the
    provider reports them, and whether that count is exact (see the module docstring)."""
    from holistic.models.counting import local_tokenizer
    from holistic.models.registry import token_counting

    own = local_tokenizer(deployment)
    if own is not None:
        tokenizer = own

        def render(request: Request) -> str:
            return tokenizer.render_chat(request.messages) if request.messages else request.prompt

        if token_counting(deployment.provider).engine_accounting:
            from holistic.models.local_client import prompt_token_count

            return tokenizer, lambda request: prompt_token_count(tokenizer, request, render(request)), True

        def provider_count(request: Request) -> float:
            scored = tokenizer.count(request.continuation) if request.kind == "loglikelihood" else 0
            return tokenizer.count(render(request)) + scored

        return tokenizer, provider_count, True

    from holistic.models.approx_tokenizer import ApproxTokenizer

    approx = ApproxTokenizer()

    def approx_count(request: Request) -> float:
        text = approx.render_chat(request.messages) if request.messages else request.prompt
        scored = approx_text_tokens(request.continuation, approx) if request.kind == "loglikelihood" else 0.0
        return approx_text_tokens(text, approx) + scored

    return approx, approx_count, False


def approx_text_tokens(text: str, approx: ApproxTokenizer | None = None) -> float:
    """Tokens of ``text`` as an API provider would count them, approximately (see the module docstring)."""
    from holistic.models.approx_tokenizer import ApproxTokenizer

    digits = 0
    other = 0
    for piece in (approx or ApproxTokenizer()).pieces(text):
        n = len(_DIGIT.findall(piece))
        digits += n
        other += 0 if n else 1
    return digits + other / PIECES_PER_TOKEN
