"""Turning one evaluated instance (and its examples) into request states, per method.

- ``generation``: one ``generate`` request; the answer is free text.
- ``multiple_choice_joint``: one ``generate`` request showing lettered choices;
  ``RequestState.output_mapping`` maps each letter to its choice text.
- ``multiple_choice_separate_original``: per choice ``j``, one ``loglikelihood`` request
  scoring the choice (``continuation``) after the prompt; ``reference_index=j``,
  ``request_index=j``.
- the same, for an instance with a ``continuation`` (partial scoring, lm-evaluation-harness's
  WinoGrande): per choice ``j``, the prompt ends in choice ``j``'s own context (its
  reference text) and the one continuation is scored after it; in-context examples show
  their correct context followed by their continuation.
- ``multiple_choice_separate_calibrated``: per choice ``j``, the request above
  (``role="main"``, ``request_index=2j``) and the same continuation scored after the
  answer cue alone (``role="calibration"``, ``request_index=2j+1``; the cue is the
  output prefix without trailing spaces, ``"Answer:"`` when there is none). The metric
  scores ``calibrated_score(main, calibration)``.
- ``ranking_binary``: per passage ``j`` (a reference of the instance, see
  ``docs/adaptation.md``), one prompt asking whether the passage answers the query and two
  ``loglikelihood`` requests: `` Yes`` (``role="yes"``, ``request_index=2j``) and `` No``
  (``role="no"``, ``request_index=2j+1``), both with ``reference_index=j``. With
  ``ranking_generates`` (``protocol: helm``) HELM's instead: one ``generate`` request per passage (``role="main"``,
  ``request_index=j``), each in-context example a training query shown with every one of
  its passages in order (``Yes`` for a relevant one, else ``No``).

A continuation starts with a space when the prompt does not end in whitespace. With
``score_after_block`` (``protocol: helm``) a separate-scoring request sends HELM's text instead: the eval block
with its trailing spaces, then the choice, the continuation being `` <choice>``
(:func:`_scored_split`; an input ending in a space keeps it). The calibration request
scores the choice after the answer cue alone in either case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from holistic.adaptation.blocks import NO, YES, Block, BlockRenderer, example_answer, letters_for, ranking_pair
from holistic.adaptation.fitting import Fit, TokenCounter, fit_prompt
from holistic.adaptation.prompt import PromptPlan
from holistic.adaptation.validation import AdaptationError
from holistic.core.specs import CALIBRATED, JOINT, RANKING, SEPARATE
from holistic.core.types import (
    CHAT_HISTORY_KEY,
    AdapterSpec,
    Instance,
    Message,
    ModelDeployment,
    Request,
    RequestRole,
    RequestState,
)

NEUTRAL_CUE = "Answer:"


@dataclass(frozen=True)
class BuildContext:
    """Everything fixed for a run while its requests are built."""

    spec: AdapterSpec
    deployment: ModelDeployment
    chat: bool
    renderer: BlockRenderer
    counter: TokenCounter

    @property
    def max_tokens(self) -> int:
        return min(self.spec.max_tokens, self.deployment.max_output_tokens)


def continuation_for(prompt: str, text: str) -> str:
    """``text`` with a leading space unless the prompt already ends in whitespace."""
    if prompt and not prompt[-1].isspace() and not text[:1].isspace():
        return " " + text
    return text


def _helm_ranking_example(ctx: BuildContext, ex: Instance) -> Block:
    """HELM's in-context ranking example: the training query with each of its passages in
    order, answered ``Yes`` (relevant) or ``No``, the pairs joined by the instance prefix, as
    one example (HELM fits and counts training instances, not pairs)."""
    pairs = [ctx.renderer.render(ex, answer=YES if r.is_correct else NO, passage=r.output) for r in ex.references]
    if not pairs:
        raise AdaptationError(f"in-context ranking example {ex.id!r} has no passages")
    head = "".join(b.example_text + ctx.spec.instance_prefix for b in pairs[:-1])
    last = pairs[-1]
    return replace(last, query=head + last.query, chat_user=head + last.chat_user)


def _example_blocks(ctx: BuildContext, examples: tuple[Instance, ...]) -> list[tuple[Instance, Block]]:
    blocks = []
    for position, ex in enumerate(examples):
        if ctx.spec.method == RANKING and ctx.spec.behaviour.ranking_generates:
            blocks.append((ex, _helm_ranking_example(ctx, ex)))
        elif ctx.spec.method == RANKING:
            pair = ranking_pair(ex, position)
            if pair is None:
                continue
            blocks.append((ex, ctx.renderer.render(ex, answer=pair[1], passage=pair[0])))
        elif ex.continuation is not None and ex.first_correct is not None:
            # Partial scoring: the correct choice's own context, then the continuation after it.
            context = ex.first_correct.output
            head = ctx.renderer.render(ex, answer=None, text=context)
            answer = continuation_for(head.query + head.cue, ex.continuation)
            blocks.append((ex, ctx.renderer.render(ex, answer=answer, text=context)))
        else:
            blocks.append(
                (ex, ctx.renderer.render(ex, answer=example_answer(ex, ctx.spec.method, ctx.spec.choice_labels)))
            )
    return blocks


@dataclass(frozen=True)
class FittedPrompt:
    plan: PromptPlan
    train_ids: tuple[str, ...]
    fit: Fit


def _fitted_prompt(
    ctx: BuildContext,
    instance: Instance,
    examples: tuple[Instance, ...],
    *,
    chat: bool,
    reserve: Callable[[str], int],
    passage: str = "",
) -> FittedPrompt:
    """The prompt for ``instance`` with as many examples and as much input as fit."""
    blocks = _example_blocks(ctx, examples)
    full_text = passage if ctx.spec.method == RANKING else instance.input

    history = chat_history(instance)

    def plan(k: int, text: str | None) -> PromptPlan:
        eval_block = ctx.renderer.render(instance, answer=None, text=text, passage=passage)
        return PromptPlan(ctx.spec, tuple(b for _, b in blocks[:k]), eval_block, history)

    def measure(k: int, text: str | None) -> int:
        p = plan(k, text)
        if chat:
            return ctx.counter.count_messages(p.messages()) + reserve("")
        prompt = p.plain()
        return ctx.counter.count(prompt) + reserve(prompt)

    budget = ctx.deployment.context_window
    fit = fit_prompt(measure, len(blocks), full_text, budget, ctx.counter, ctx.spec.truncation_side)
    return FittedPrompt(plan(fit.num_examples, fit.text), tuple(ex.id for ex, _ in blocks[: fit.num_examples]), fit)


def chat_history(instance: Instance) -> tuple[Message, ...]:
    """The conversation before ``instance``'s own turn (metadata ``chat_history``), as messages."""
    turns = instance.metadata.get(CHAT_HISTORY_KEY) or ()
    return tuple(Message(str(t["role"]), str(t["content"])) for t in turns)


def _generate_request(ctx: BuildContext, plan: PromptPlan, chat: bool) -> Request:
    spec = ctx.spec
    return Request(
        model=ctx.deployment.name,
        kind="generate",
        prompt="" if chat else plan.plain(),
        messages=plan.messages() if chat else None,
        max_tokens=ctx.max_tokens,
        temperature=spec.temperature,
        stop=tuple(spec.stop_sequences),
        num_completions=spec.num_outputs,
        logprobs=True,
        top_k_logprobs=spec.top_k_logprobs,
        seed=spec.seed,
        reasoning_effort=spec.reasoning.effort if spec.reasoning is not None else None,
        reasoning_budget=spec.reasoning.budget_tokens if spec.reasoning is not None else None,
    )


def _score_request(ctx: BuildContext, prompt: str, continuation: str) -> Request:
    return Request(
        model=ctx.deployment.name,
        kind="loglikelihood",
        prompt=prompt,
        continuation=continuation,
        max_tokens=0,
        temperature=0.0,
        logprobs=True,
        top_k_logprobs=ctx.spec.top_k_logprobs,
        seed=ctx.spec.seed,
    )


def _state(instance: Instance, request: Request, trial: int, fitted: FittedPrompt, **fields: object) -> RequestState:
    base = RequestState(
        instance=instance,
        request=request,
        trial=trial,
        train_ids=fitted.train_ids,
        num_train_instances=len(fitted.train_ids),
        prompt_truncated=fitted.fit.truncated,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def build_generation(
    ctx: BuildContext, instance: Instance, examples: tuple[Instance, ...], trial: int
) -> list[RequestState]:
    reserve = ctx.max_tokens
    fitted = _fitted_prompt(ctx, instance, examples, chat=ctx.chat, reserve=lambda _p: reserve)
    request = _generate_request(ctx, fitted.plan, ctx.chat)
    mapping = None
    if ctx.spec.method == JOINT:
        if not instance.references:
            raise AdaptationError(f"instance {instance.id!r} has no choices for multiple_choice_joint")
        letters = letters_for(len(instance.references), ctx.spec.choice_labels)
        mapping = {letter: ref.output for letter, ref in zip(letters, instance.references, strict=True)}
    return [_state(instance, request, trial, fitted, output_mapping=mapping)]


def build_partial(
    ctx: BuildContext, instance: Instance, examples: tuple[Instance, ...], trial: int
) -> list[RequestState]:
    """Partial scoring: per choice ``j``, the prompt ends in that choice's own context
    (its reference text) and the instance's one continuation is scored after it."""
    continuation = instance.continuation
    assert continuation is not None
    if ctx.spec.method != SEPARATE:
        raise AdaptationError(
            f"instance {instance.id!r} is scored partially (each choice its own context): that needs method "
            f"{SEPARATE}, not {ctx.spec.method}"
        )
    states = []
    for j, ref in enumerate(instance.references):
        own = replace(instance, input=ref.output)

        def reserve(prompt: str) -> int:
            return ctx.counter.count(continuation_for(prompt, continuation))

        fitted = _fitted_prompt(ctx, own, examples, chat=False, reserve=reserve)
        prompt = fitted.plan.plain()
        request = _score_request(ctx, prompt, continuation_for(prompt, continuation))
        states.append(
            _state(instance, request, trial, fitted, reference_index=j, role=RequestRole.MAIN, request_index=j)
        )
    return states


def build_separate(
    ctx: BuildContext, instance: Instance, examples: tuple[Instance, ...], trial: int
) -> list[RequestState]:
    if not instance.references:
        raise AdaptationError(f"instance {instance.id!r} has no choices for {ctx.spec.method}")
    if instance.continuation is not None:
        return build_partial(ctx, instance, examples, trial)
    choices = [r.output for r in instance.references]

    def reserve(prompt: str) -> int:
        return max(ctx.counter.count(continuation_for(prompt, c)) for c in choices)

    fitted = _fitted_prompt(ctx, instance, examples, chat=False, reserve=reserve)
    prompt = fitted.plan.plain()
    calibrated = ctx.spec.method == CALIBRATED
    neutral = fitted.plan.eval_block.cue.rstrip(" \t") or NEUTRAL_CUE
    states = []
    for j, choice in enumerate(choices):
        main_prompt, continuation = _scored_split(ctx, fitted.plan, prompt, choice)
        main = _score_request(ctx, main_prompt, continuation)
        states.append(
            _state(
                instance,
                main,
                trial,
                fitted,
                reference_index=j,
                role=RequestRole.MAIN,
                request_index=2 * j if calibrated else j,
            )
        )
        if calibrated:
            calib = _score_request(ctx, neutral, continuation_for(neutral, choice))
            states.append(
                _state(
                    instance,
                    calib,
                    trial,
                    fitted,
                    reference_index=j,
                    role=RequestRole.CALIBRATION,
                    request_index=2 * j + 1,
                )
            )
    return states


def _scored_split(ctx: BuildContext, plan: PromptPlan, prompt: str, choice: str) -> tuple[str, str]:
    """The (prompt, continuation) of a separate-scoring request for ``choice``.

    With ``score_after_block`` the text sent is HELM's: the eval block as laid out, its
    trailing spaces kept (an input that ends in a space keeps it before the output
    prefix), then the choice; the continuation scored is `` <choice>`` as HELM's metric
    counts it (the tokens of the choice with a space before it), the rest is the prompt.
    Otherwise the prompt's trailing spaces are gone and one space joins the choice."""
    if not ctx.spec.behaviour.score_after_block or ctx.spec.global_suffix:
        return prompt, continuation_for(prompt, choice)
    full = plan.plain(strip=False) + choice
    scored = " " + choice if full.endswith(" " + choice) and len(full) > len(choice) else choice
    return full[: len(full) - len(scored)], scored


def build_ranking(
    ctx: BuildContext, instance: Instance, examples: tuple[Instance, ...], trial: int
) -> list[RequestState]:
    if ctx.spec.behaviour.ranking_generates:
        return build_ranking_helm(ctx, instance, examples, trial)

    def reserve(prompt: str) -> int:
        return max(ctx.counter.count(continuation_for(prompt, a)) for a in (YES, NO))

    states = []
    for j, ref in enumerate(instance.references):
        fitted = _fitted_prompt(ctx, instance, examples, chat=False, reserve=reserve, passage=ref.output)
        prompt = fitted.plan.plain()
        for offset, (answer, role) in enumerate(((YES, RequestRole.YES), (NO, RequestRole.NO))):
            request = _score_request(ctx, prompt, continuation_for(prompt, answer))
            states.append(
                _state(instance, request, trial, fitted, reference_index=j, role=role, request_index=2 * j + offset)
            )
    return states


def build_ranking_helm(
    ctx: BuildContext, instance: Instance, examples: tuple[Instance, ...], trial: int
) -> list[RequestState]:
    """HELM's ``BinaryRankingAdapter``: per passage ``j`` one generated answer (``role="main"``,
    ``reference_index=j``, ``request_index=j``), the prompt ending at ``Answer:``."""
    reserve = ctx.max_tokens
    states = []
    for j, ref in enumerate(instance.references):
        fitted = _fitted_prompt(ctx, instance, examples, chat=False, reserve=lambda _p: reserve, passage=ref.output)
        request = _generate_request(ctx, fitted.plan, chat=False)
        states.append(
            _state(instance, request, trial, fitted, reference_index=j, role=RequestRole.MAIN, request_index=j)
        )
    return states


BUILDERS: dict[str, Callable[[BuildContext, Instance, tuple[Instance, ...], int], list[RequestState]]] = {
    "generation": build_generation,
    JOINT: build_generation,
    SEPARATE: build_separate,
    CALIBRATED: build_separate,
    RANKING: build_ranking,
}
