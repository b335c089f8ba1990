"""``adapt``: every request of a run, and ``count_requests`` for planning.

Order of the returned states: by trial, then evaluated-instance order (as given,
perturbed variants included), then ``request_index``.

Trials: with ``helm`` selection and ``max_train_instances > 0`` each of the
``num_train_trials`` trials draws its own examples. When every trial would send the
same prompts (zero-shot, ``fixed`` or ``mmr`` selection, language modelling) and
decoding is greedy, only trial 0 is built: the other trials would repeat it exactly.
With sampling (``temperature > 0``) all trials are built, and a request that repeats
one of an earlier trial gets ``Request.trial_tag = "trial=<t>"`` so the cache gives it
its own sample; otherwise ``trial_tag`` stays empty.

Prompt format ``auto`` without :attr:`~holistic.core.specs.ProtocolBehaviour.auto_chat`
(``protocol: helm``): plain text wherever the deployment takes plain prompts (HELM sends the
embedded and other local models their raw prompt, no chat template). With it (``holistic``):
chat messages only for ``generation`` on a deployment with
``capabilities.chat`` (or for ``generation`` and ``multiple_choice_joint`` on a chat-only
deployment, one without ``capabilities.completions``). Joint multiple choice stays
plain text on models that also take plain prompts because a chat template wrapping a
few-shot lettered prompt hurts small instruction-tuned models badly: with HELM's
5-shot MMLU anatomy prompt the embedded SmolLM2-135M-Instruct scores 0.24 wrapped in
its chat template and 0.39 as plain text. Log-likelihood methods are always plain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from holistic.adaptation.blocks import BlockRenderer
from holistic.adaptation.embedding import Embedder
from holistic.adaptation.fitting import TokenCounter
from holistic.adaptation.language_modeling import count_windows, language_modeling_states, window_sizes
from holistic.adaptation.requests import BUILDERS, BuildContext
from holistic.adaptation.selection import select_examples
from holistic.adaptation.validation import validate_adapter_spec
from holistic.core.errors import SpecError
from holistic.core.hashing import canonical_json
from holistic.core.interfaces import Tokenizer
from holistic.core.specs import CALIBRATED, GENERATION, JOINT, LANGUAGE_MODELING, RANKING, SEEDED_SELECTION, SEPARATE
from holistic.core.types import AdapterSpec, Instance, ModelDeployment, PromptFormat, RequestState


def uses_chat(spec: AdapterSpec, deployment: ModelDeployment) -> bool:
    """Whether requests of this run are chat messages (see the module docstring)."""
    caps = deployment.capabilities
    if spec.prompt_format == PromptFormat.CHAT:
        if not caps.chat:
            raise SpecError(f"model {deployment.name!r} does not take chat messages", path="adaptation.prompt_format")
        return True
    if spec.prompt_format == PromptFormat.PLAIN or spec.method not in (GENERATION, JOINT):
        return False
    if not caps.completions:
        return caps.chat
    return caps.chat and spec.method == GENERATION and spec.behaviour.auto_chat


def effective_trials(spec: AdapterSpec) -> int:
    """How many trials are built (see the module docstring)."""
    if spec.method == LANGUAGE_MODELING:
        return 1
    examples_vary = spec.max_train_instances > 0 and spec.selection == SEEDED_SELECTION
    return spec.num_train_trials if examples_vary or spec.temperature > 0 else 1


def adapt(
    train: Sequence[Instance],
    eval_instances: Sequence[Instance],
    spec: AdapterSpec,
    deployment: ModelDeployment,
    tokenizer: Tokenizer | None,
    *,
    seed: int,
    embedder: Embedder | None = None,
) -> list[RequestState]:
    """Build every request state of a run (all trials, all evaluated instances)."""
    validate_adapter_spec(spec)
    if spec.method == LANGUAGE_MODELING:
        return [s for inst in eval_instances for s in language_modeling_states(inst, spec, deployment, tokenizer)]
    trials = effective_trials(spec)
    selection = select_examples(train, eval_instances, spec, seed=seed, trials=trials, embedder=embedder)
    ctx = BuildContext(spec, deployment, uses_chat(spec, deployment), BlockRenderer(spec), TokenCounter(tokenizer))
    build = BUILDERS[spec.method]
    states: list[RequestState] = []
    for trial in range(trials):
        for instance in eval_instances:
            built = build(ctx, instance, selection.examples(trial, instance), trial)
            states.extend(sorted(built, key=lambda s: s.request_index))
    return _tag_repeated_samples(states) if spec.temperature > 0 else states


def _tag_repeated_samples(states: list[RequestState]) -> list[RequestState]:
    """Give a sampled request that repeats one of an earlier trial its own ``trial_tag``."""
    earlier: set[str] = set()
    current: set[str] = set()
    trial = 0
    out = []
    for state in states:
        if state.trial != trial:
            earlier |= current
            current, trial = set(), state.trial
        key = canonical_json(state.request.canonical())
        current.add(key)
        if key in earlier:
            state = replace(state, request=replace(state.request, trial_tag=f"trial={state.trial}"))
        out.append(state)
    return out


def count_requests(
    n_eval: int,
    n_refs: Sequence[int] | int,
    spec: AdapterSpec,
    *,
    n_tokens: Sequence[int] | None = None,
    context_window: int | None = None,
) -> int:
    """The number of request states :func:`adapt` builds, for ``--plan``.

    ``n_refs`` is the number of references (choices, passages) per evaluated instance,
    one number for all or one per instance. For ``language_modeling`` pass the token
    count of each document as ``n_tokens`` (and the model's ``context_window``) for an
    exact count; without it each document counts one window (a lower bound).
    """
    refs = [n_refs] * n_eval if isinstance(n_refs, int) else list(n_refs)
    if len(refs) != n_eval:
        raise ValueError(f"n_refs has {len(refs)} entries for {n_eval} evaluated instances")
    method = spec.method
    if method == LANGUAGE_MODELING:
        if n_tokens is None:
            return n_eval
        window, context = window_sizes(spec, context_window)
        return sum(count_windows(n, window, context) for n in n_tokens)
    if method in (GENERATION, JOINT):
        per_trial = n_eval
    elif method == SEPARATE or (method == RANKING and spec.behaviour.ranking_generates):
        per_trial = sum(refs)  # HELM's ranking: one generated answer per passage
    elif method in (CALIBRATED, RANKING):
        per_trial = 2 * sum(refs)
    else:
        validate_adapter_spec(spec)
        raise AssertionError(method)
    return per_trial * effective_trials(spec)
