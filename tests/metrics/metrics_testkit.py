"""Hand-built request states for the metrics tests (no adaptation module involved)."""

from __future__ import annotations

from collections.abc import Sequence

from holistic.core.interfaces import MetricContext, ScenarioInfo
from holistic.core.types import (
    Capabilities,
    Completion,
    Instance,
    ModelDeployment,
    PerturbationDescription,
    Reference,
    Request,
    RequestKind,
    RequestResult,
    RequestState,
    Token,
)

DEPLOYMENT = ModelDeployment(
    name="test/model",
    provider="simple",
    model_id="m",
    capabilities=Capabilities(logprobs=True, prompt_logprobs=True),
    price_input_per_million=2.0,
    price_output_per_million=10.0,
)
NO_LOGPROBS = ModelDeployment(name="test/plain", provider="simple", model_id="p", capabilities=Capabilities())


def ctx(info: ScenarioInfo | None = None, deployment: ModelDeployment = DEPLOYMENT) -> MetricContext:
    return MetricContext(run_id="run", deployment=deployment, scenario_info=info or ScenarioInfo(name="t"))


def instance(
    iid: str,
    refs: Sequence[str] = (),
    *,
    correct: Sequence[int] | None = None,
    perturbation: str | None = None,
    split: str = "test",
    sub_split: str | None = None,
    text: str = "question",
    tags: Sequence[Sequence[str]] | None = None,
    relevance: Sequence[int | None] | None = None,
    first_stage_rank: Sequence[int | None] | None = None,
) -> Instance:
    correct_set = set(range(len(refs)) if correct is None else correct)
    references = []
    for i, output in enumerate(refs):
        extra = tuple(tags[i]) if tags is not None else ()
        references.append(
            Reference(
                output,
                (("correct",) if i in correct_set else ()) + extra,
                relevance=relevance[i] if relevance is not None else None,
                first_stage_rank=first_stage_rank[i] if first_stage_rank is not None else None,
            )
        )
    pert = PerturbationDescription(perturbation, robustness=True) if perturbation else None
    return Instance(
        id=iid, input=text, references=tuple(references), split=split, sub_split=sub_split, perturbation=pert
    )


def tokens(*pairs: tuple[str, float], top: dict[str, float] | None = None) -> tuple[Token, ...]:
    out = [Token(t, lp) for t, lp in pairs]
    if top is not None and out:
        out[0] = Token(out[0].text, out[0].logprob, top)
        return tuple(out)
    return tuple(out)


def gen_state(
    inst: Instance,
    *outputs: str,
    trial: int = 0,
    logprob_tokens: tuple[Token, ...] = (),
    success: bool = True,
    latency: float = 0.0,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    cached: bool = False,
    mapping: dict[str, str] | None = None,
    post_processed: tuple[str, ...] | None = None,
    role: str = "main",
    reference_index: int | None = None,
    request_index: int = 0,
) -> RequestState:
    completions = tuple(
        Completion(text=o, logprob=sum(t.logprob for t in logprob_tokens), tokens=logprob_tokens) for o in outputs
    )
    result = RequestResult(
        success=success,
        completions=completions if success else (),
        has_logprobs=bool(logprob_tokens),
        latency_s=latency,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cached=cached,
        error=None if success else "boom",
    )
    return RequestState(
        instance=inst,
        request=Request(model="test/model", prompt=inst.input),
        trial=trial,
        output_mapping=mapping,
        result=result,
        post_processed=post_processed,
        role=role,
        reference_index=reference_index,
        request_index=request_index,
    )


def score_state(
    inst: Instance,
    reference_index: int,
    logprob: float,
    *,
    continuation: str,
    n_tokens: int = 1,
    role: str = "main",
    trial: int = 0,
    success: bool = True,
    kind: RequestKind = "loglikelihood",
    prompt: str = "context",
) -> RequestState:
    per = logprob / n_tokens
    toks = tuple(Token(f"t{i}", per) for i in range(n_tokens))
    result = RequestResult(
        success=success,
        completions=(Completion(text=continuation, logprob=logprob, tokens=toks),) if success else (),
        has_logprobs=True,
        error=None if success else "failed",
    )
    return RequestState(
        instance=inst,
        request=Request(model="test/model", kind=kind, prompt=prompt, continuation=continuation),
        trial=trial,
        reference_index=reference_index,
        role=role,
        request_index=reference_index,
        result=result,
    )
