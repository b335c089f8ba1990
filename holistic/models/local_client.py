"""The client shared by local engines: requests in, ``RequestResult`` values out.

It owns everything that must behave the same whichever engine runs the model:

- the text the model sees: chat messages go through the model's chat template
  (:meth:`Tokenizer.render_chat`), plain prompts are raw text;
- tokenisation of log-likelihood requests: whitespace at the end of the context is
  moved to the start of the continuation (``"is " + "Paris"`` is scored as
  ``"is" + " Paris"``, the way the model's tokenizer splits running text), and
  context and continuation are encoded separately so the context's tokens are the
  same for every continuation (which is what makes prefix reuse work);
- a text scored without context is conditioned on the model's BOS token (EOS if it
  has no BOS); with neither, its first token cannot be scored and is left out;
- context-window checks: a request that does not fit is an error result, never an
  exception; ``max_tokens`` is clamped to the room left in the window;
- stop sequences, end-of-sequence tokens and ``num_completions`` (greedy
  completions are computed once and repeated; sampled ones each get a seed derived
  from the request's ``seed``, ``trial_tag`` and completion index).

``latency_s`` of a request is its share of the engine call that served it (the call's
wall time split in proportion to the tokens each request ran through the model).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.hashing import stable_seed
from holistic.core.interfaces import Tokenizer
from holistic.core.types import Completion, ModelDeployment, Request, RequestResult, Token
from holistic.models.base_client import BaseClient
from holistic.models.local_engine import Generated, GenerateJob, LocalEngine, ScoreJob, TokenScore
from holistic.models.stops import cut_at_stop


class RequestError(Exception):
    """One request cannot be served (recorded as its result's error)."""


@dataclass
class _Plan:
    """How one request maps onto engine jobs."""

    index: int
    request: Request
    score: ScoreJob | None = None
    echo: ScoreJob | None = None
    generate: list[GenerateJob] | None = None
    repeat: int = 1
    """Greedy completions: computed once, repeated this many times."""
    prompt_tokens: int = 0
    score_text: str = ""


class LocalClient(BaseClient):
    """A :class:`~holistic.core.interfaces.Client` over a :class:`LocalEngine`."""

    request_batch_size = 256
    """The engine packs a batch's requests into full forward passes by its own token and
    memory budgets, so bigger batches mean fewer, fuller passes (and less padding)."""

    def __init__(self, deployment: ModelDeployment, engine: LocalEngine, identity_extra: dict[str, Any]) -> None:
        super().__init__(deployment)
        self.engine = engine
        self._identity = {**deployment.identity(), **identity_extra, "engine": engine.name}
        self._special = engine.special_ids()

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def tokenizer(self) -> Tokenizer:
        return self.engine.tokenizer()

    def begin_run(self) -> None:
        self.engine.begin_run()

    def close(self) -> None:
        self.engine.close()

    def usage(self) -> dict[str, int]:
        """What the engine has done so far (forward calls, tokens through the model, ...).

        Empty for an engine that does not count.
        """
        counters = self.engine.counters
        return counters.as_dict() if counters is not None else {}

    def prompt_tokens(self, request: Request) -> int:
        """The ``prompt_tokens`` :meth:`process` reports for ``request``, without running
        the model (a request that cannot be served raises :class:`RequestError`)."""
        return self._plan(0, request).prompt_tokens

    # -- serving ----------------------------------------------------------------------------

    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        results: list[RequestResult | None] = [None] * len(requests)
        plans: list[_Plan] = []
        for i, request in enumerate(requests):
            try:
                plans.append(self._plan(i, request))
            except (RequestError, ModelError) as exc:
                results[i] = self._error(str(exc), "client")
        if plans:
            try:
                self._serve(plans, results)
            except Exception:
                # One bad request must not fail its neighbours: retry them one by one.
                for plan in plans:
                    try:
                        self._serve([plan], results)
                    except Exception as exc:
                        results[plan.index] = self._error(f"{type(exc).__name__}: {exc}", "fatal")
        return [r if r is not None else self._error("request was not served", "fatal") for r in results]

    def _serve(self, plans: list[_Plan], results: list[RequestResult | None]) -> None:
        score_plans = [p for p in plans if p.score is not None]
        echo_plans = [p for p in plans if p.echo is not None]
        gen_plans = [p for p in plans if p.generate is not None]
        score_jobs = [p.score for p in score_plans if p.score is not None]
        score_jobs += [p.echo for p in echo_plans if p.echo is not None]
        self.engine.load()  # loading the model is not any request's latency
        t0 = time.perf_counter()
        scored = self.engine.score(score_jobs) if score_jobs else []
        t1 = time.perf_counter()
        gen_jobs = [job for p in gen_plans for job in (p.generate or [])]
        generated = self.engine.generate(gen_jobs) if gen_jobs else []
        t2 = time.perf_counter()

        score_cost = [len(j.context) + len(j.continuation) for j in score_jobs]
        score_total = max(sum(score_cost), 1)
        for k, plan in enumerate(score_plans):
            latency = (t1 - t0) * score_cost[k] / score_total
            results[plan.index] = self._score_result(plan, scored[k], latency)
        echo_scores = dict(zip((p.index for p in echo_plans), scored[len(score_plans) :], strict=True))

        gen_cost = [len(j.prompt) + len(g.tokens) for j, g in zip(gen_jobs, generated, strict=True)]
        gen_total = max(sum(gen_cost), 1)
        offset = 0
        for plan in gen_plans:
            n = len(plan.generate or [])
            latency = (t2 - t1) * sum(gen_cost[offset : offset + n]) / gen_total
            if plan.index in echo_scores:
                latency += (t1 - t0) * (plan.prompt_tokens + 1) / score_total
            results[plan.index] = self._gen_result(
                plan, generated[offset : offset + n], echo_scores.get(plan.index), latency
            )
            offset += n

    # -- requests -> jobs ---------------------------------------------------------------------

    def _text(self, request: Request) -> str:
        if request.messages is not None:
            if not self.deployment.capabilities.chat:
                raise RequestError(f"{self.deployment.name} does not take chat messages; send a plain prompt")
            return self.tokenizer().render_chat(request.messages)
        return request.prompt

    def _plan(self, index: int, request: Request) -> _Plan:
        window = self.deployment.context_window
        tok = self.tokenizer()
        text = self._text(request)
        top_k = max(request.top_k_logprobs, 0)
        if request.kind == "loglikelihood":
            ctx, cont = encode_scored(tok, text, request.continuation)
            if not ctx:
                ctx = self._bos_context("loglikelihood with an empty prompt")
            if len(ctx) + len(cont) > window:
                raise RequestError(
                    f"prompt and continuation have {len(ctx) + len(cont)} tokens; "
                    f"the context window of {self.deployment.name} is {window}"
                )
            return _Plan(
                index,
                request,
                score=ScoreJob(tuple(ctx), tuple(cont), top_k),
                prompt_tokens=len(ctx) + len(cont),
                score_text=request.continuation,
            )
        if request.kind == "rolling_loglikelihood":
            ids = tok.encode(text)
            if self._special.bos is not None:
                ctx, cont = [self._special.bos], ids
            elif ids:
                ctx, cont = ids[:1], ids[1:]  # no BOS/EOS token: the first token cannot be scored
            else:
                raise RequestError("rolling_loglikelihood of an empty text on a model without BOS token")
            if len(ctx) + len(cont) > window:
                raise RequestError(
                    f"text has {len(ids)} tokens; the context window of {self.deployment.name} is {window}"
                )
            return _Plan(
                index, request, score=ScoreJob(tuple(ctx), tuple(cont), top_k), prompt_tokens=len(ids), score_text=text
            )
        if request.kind != "generate":
            raise RequestError(
                f"unknown request kind {request.kind!r}; expected generate, loglikelihood or rolling_loglikelihood"
            )
        ids = tok.encode(text)
        if not ids:
            ids = self._bos_context("generation from an empty prompt")
        if len(ids) >= window:
            raise RequestError(
                f"prompt has {len(ids)} tokens; the context window of {self.deployment.name} is {window}"
            )
        if request.num_completions < 1:
            raise RequestError(f"num_completions must be at least 1, got {request.num_completions}")
        max_tokens = max(0, min(request.max_tokens, window - len(ids), self.deployment.max_output_tokens))
        greedy = request.temperature <= 0
        n_jobs = 1 if greedy else request.num_completions
        jobs = [
            GenerateJob(
                prompt=tuple(ids),
                max_tokens=max_tokens,
                temperature=max(request.temperature, 0.0),
                seed=stable_seed(request.seed, request.trial_tag, k),
                stop=tuple(request.stop),
                top_k=top_k,
            )
            for k in range(n_jobs)
        ]
        echo = None
        if request.echo:
            bos = [self._special.bos] if self._special.bos is not None else []
            echo = ScoreJob(tuple(bos or ids[:1]), tuple(ids if bos else ids[1:]), top_k)
        return _Plan(
            index,
            request,
            generate=jobs if max_tokens > 0 else [],
            echo=echo,
            repeat=request.num_completions if greedy or max_tokens == 0 else 1,
            prompt_tokens=len(ids),
        )

    def _bos_context(self, what: str) -> list[int]:
        if self._special.bos is None:
            raise RequestError(f"{what} needs a BOS token, which {self.deployment.name} does not have")
        return [self._special.bos]

    # -- engine outputs -> results --------------------------------------------------------------

    def _token(self, score: TokenScore) -> Token:
        decode = self.tokenizer().decode
        top: dict[str, float] = {}
        for tid, lp in score.top.items():
            text = decode([tid])
            top[text] = max(lp, top.get(text, lp))
        return Token(text=decode([score.token_id]), logprob=score.logprob, top_logprobs=top)

    def _score_result(self, plan: _Plan, scores: list[TokenScore], latency: float) -> RequestResult:
        tokens = tuple(self._token(s) for s in scores)
        completion = Completion(
            text=plan.score_text,
            logprob=sum(s.logprob for s in scores),
            tokens=tokens,
            is_greedy=all(s.is_argmax for s in scores),
        )
        return RequestResult(
            success=True,
            completions=(completion,),
            prompt_tokens=plan.prompt_tokens,
            completion_tokens=0,
            latency_s=latency,
            has_logprobs=True,
            engine=self.engine.name,
        )

    def _gen_result(
        self, plan: _Plan, generated: list[Generated], echo: list[TokenScore] | None, latency: float
    ) -> RequestResult:
        decode = self.tokenizer().decode
        completions: list[Completion] = []
        for gen in generated or [Generated((), "length")]:
            scores = list(gen.tokens)
            if scores and scores[-1].token_id in self._special.eos:
                scores = scores[:-1]  # the end-of-sequence token is not part of the text
            text, kept, stopped = cut_at_stop(decode, [s.token_id for s in scores], plan.request.stop)
            scores = scores[:kept]
            completions.append(
                Completion(
                    text=text,
                    logprob=sum(s.logprob for s in scores),
                    tokens=tuple(self._token(s) for s in scores),
                    finish_reason="stop" if stopped else gen.finish_reason,
                )
            )
        completions = completions * plan.repeat
        return RequestResult(
            success=True,
            completions=tuple(completions),
            prompt_tokens=plan.prompt_tokens,
            completion_tokens=sum(len(g.tokens) for g in generated) * plan.repeat,
            prompt_logprobs=tuple(self._token(s) for s in echo) if echo is not None else None,
            latency_s=latency,
            has_logprobs=True,
            engine=self.engine.name,
        )

    def _error(self, message: str, kind: str) -> RequestResult:
        return RequestResult.failure(message, kind, engine=self.engine.name)


def _move_trailing_space(context: str, continuation: str) -> tuple[str, str]:
    stripped = context.rstrip(" ")
    return stripped, context[len(stripped) :] + continuation


def encode_scored(tokenizer: Tokenizer, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """Token ids of a log-likelihood request's context and continuation, encoded apart
    after the context's trailing spaces move to the continuation (see the module docstring)."""
    context, continuation = _move_trailing_space(context, continuation)
    return tokenizer.encode(context), tokenizer.encode(continuation)


def prompt_token_count(tokenizer: Tokenizer, request: Request, text: str) -> int:
    """The ``prompt_tokens`` a local engine reports for ``request`` whose prompt (chat
    messages rendered through the model's template) is ``text``, computed without the
    model: a scored continuation counts, an empty context counts its BOS token."""
    if request.kind == "loglikelihood":
        ctx, cont = encode_scored(tokenizer, text, request.continuation)
        return max(len(ctx), 1) + len(cont)
    if request.kind == "rolling_loglikelihood":
        return len(tokenizer.encode(text))
    return max(len(tokenizer.encode(text)), 1)
