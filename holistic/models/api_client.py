"""What the HTTP API providers (openai, anthropic) share: one request at a time, retried,
several in flight, failures recorded, costs priced, secrets kept out.

A provider subclasses :class:`ApiClient` and implements :meth:`ApiClient._connect` (its
SDK client) and :meth:`ApiClient._serve`,
which turns one :class:`Request` into a :class:`RequestResult` and sends each SDK call
through :meth:`Attempts.send`. The base class:

- runs a batch on up to ``max_concurrency`` threads (``args.max_concurrency``) and caps
  the calls in flight for the deployment across every thread that uses this client, so
  the executor may call :meth:`process` from several threads at once. With
  ``adaptive_concurrency`` (the default) the cap starts at 2 and follows the server's 429s
  up to ``max_concurrency`` (default 32; :mod:`holistic.models.adaptive`), and the executor
  keeps two batches in flight (:attr:`ApiClient.batches_in_flight`) so one batch's last
  answers do not idle the window; with ``adaptive_concurrency: false`` the cap is
  ``max_concurrency`` (default 4) throughout.
  Threads rather than an event loop: ``process`` is synchronous, may be called from
  code that already runs an event loop (notebooks), and the sync SDK clients share one
  connection pool safely between threads;
- retries through :mod:`holistic.models.reliability` and records a request that still
  fails as ``RequestResult.failure(error, error_kind, attempts=...)``;
- prices the result from the registry (``cost_usd``) and removes the API key from
  every error message.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from holistic.core.errors import ModelError, did_you_mean
from holistic.core.hashing import canonical_json, sha256_hex
from holistic.core.interfaces import Tokenizer
from holistic.core.types import Completion, ModelDeployment, Request, RequestResult, Token
from holistic.models.adaptive import AdaptiveLimit
from holistic.models.approx_tokenizer import ApproxTokenizer
from holistic.models.base_client import BaseClient
from holistic.models.batch_spec import BATCH_ARGS
from holistic.models.keys import api_key, redact
from holistic.models.pricing import BUDGET_ERROR_KIND, current_spending, request_price
from holistic.models.reliability import (
    OPERATIONAL_ARGS,
    ConcurrencyLimit,
    Failure,
    Limit,
    ProviderFailure,
    RetryPolicy,
    call_with_retries,
    map_concurrently,
)

T = TypeVar("T")

DEFAULT_MAX_CONCURRENCY = 4
"""Requests in flight with ``adaptive_concurrency: false`` unless ``max_concurrency`` says otherwise."""
DEFAULT_ADAPTIVE_CEILING = 32
"""The most requests in flight the adaptive window reaches unless ``max_concurrency`` says otherwise."""
MAX_ERROR_CHARS = 2000


def cut_text(text: str, tokens: Sequence[Token], stops: Sequence[str]) -> tuple[str, tuple[Token, ...], bool]:
    """Cut ``text`` at the first of ``stops``; keep the tokens that lie wholly before the cut."""
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    if not found:
        return text, tuple(tokens), False
    at = min(found)
    kept, length = [], 0
    for token in tokens:
        if length + len(token.text) > at:
            break
        kept.append(token)
        length += len(token.text)
    return text[:at], tuple(kept), True


def stop_locally(
    text: str, tokens: Sequence[Token], finish: str | None, stops: Sequence[str]
) -> tuple[str, tuple[Token, ...], str | None]:
    """A completion cut at the first of the stop sequences the server was not sent
    (:func:`cut_text`); its finish reason becomes ``stop`` when one was found."""
    if not stops:
        return text, tuple(tokens), finish
    text, kept, stopped = cut_text(text, tokens, stops)
    return text, kept, "stop" if stopped else finish


def load_hf_tokenizer(name: str, model: str) -> Tokenizer:
    """A transformers tokenizer by local path or hub id, as a :class:`Tokenizer`."""
    try:
        from transformers import AutoTokenizer

        from holistic.models.hf_tokenizer import HFTokenizer

        return HFTokenizer(AutoTokenizer.from_pretrained(name), name)
    except Exception as exc:
        raise ModelError(f"model {model!r}: cannot load its tokenizer {name!r}: {type(exc).__name__}: {exc}") from exc


def sdk_call(create: Callable[..., T], params: dict[str, Any]) -> Callable[[], T]:
    """``create(**params)`` as a thunk; fields the installed SDK does not declare (SDKs drop
    sampling parameters from their signatures over time) travel in ``extra_body``, so the
    request on the wire is the same whatever the SDK version."""
    declared = _declared(getattr(create, "__func__", create))
    if declared is None:
        return functools.partial(create, **params)
    known = {k: v for k, v in params.items() if k in declared}
    extra = {k: v for k, v in params.items() if k not in declared}
    if extra:
        known["extra_body"] = {**extra, **dict(params.get("extra_body") or {})}
    return functools.partial(create, **known)


@functools.lru_cache(maxsize=64)
def _declared(function: Callable[..., Any]) -> frozenset[str] | None:
    """The parameter names ``function`` declares (``None`` when it cannot be inspected); read once each."""
    try:
        return frozenset(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None


class RequestFailed(Exception):
    """A request failed for good (after its retries); carries the attempts spent."""

    def __init__(self, failure: Failure, attempts: int) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.attempts = attempts


class Attempts:
    """The SDK calls made for one request: attempts and time are summed over them."""

    def __init__(self, client: ApiClient, request_key: str) -> None:
        self._client = client
        self._key = request_key
        self.count = 0
        self.latency_s = 0.0
        self.reasoning_tokens = 0
        """Reasoning tokens the server counted over the calls (0 when it counts none)."""
        self.batch = False
        """Answered from batch lines: priced with the batch discount, the budget kept by the batch client."""
        self.cached_tokens = 0
        """Prompt tokens the provider reported read from its prompt cache (priced at ``cached_input_per_million``)."""

    def saw_cached(self, value: object) -> None:
        """Note a reply's cached prompt-token count (anything but a non-negative integer counts as none)."""
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            self.cached_tokens = max(self.cached_tokens, value)

    def send(self, call: Callable[[], T], what: str = "request") -> T:
        """``call()`` with retries; raises :class:`RequestFailed` when it finally fails."""
        client = self._client
        outcome = call_with_retries(
            call,
            client.policy,
            key=f"{self._key}:{self.count}",
            classify_error=client._classify,
            sleep=client._sleep,
            clock=client._clock,
            limit=client._limit,
            describe=f"{client.deployment.name} {what}",
        )
        self.count += outcome.attempts
        self.latency_s += outcome.elapsed_s
        if outcome.failure is not None:
            raise RequestFailed(outcome.failure, self.count)
        assert outcome.value is not None
        return outcome.value


class ApiClient(BaseClient):
    """Base class of the HTTP API providers (see the module docstring)."""

    engine_name = "api"
    """Engine name recorded in results and the identity."""
    provider_args: frozenset[str] = OPERATIONAL_ARGS
    """Deployment args this provider understands; any other is refused with a suggestion."""
    batches_in_flight = 1
    """Batches the executor should send at once at the least (``-j`` may ask for more): 2 with
    an adaptive window, so the window stays full while one batch waits for its last answers."""

    def __init__(
        self,
        deployment: ModelDeployment,
        *,
        http_client: Any = None,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """``http_client``: the SDK's HTTP client (default :meth:`bounded_http_client`)."""
        unknown = sorted(set(deployment.args) - self.provider_args)
        if unknown:
            hint = did_you_mean(unknown[0], self.provider_args)
            raise ModelError(
                f"model {deployment.name!r}: unknown {deployment.provider} arg {unknown[0]!r}"
                + (f"; did you mean {hint[0]!r}?" if hint else f" (valid: {', '.join(sorted(self.provider_args))})")
            )
        super().__init__(deployment)
        self.policy = policy if policy is not None else RetryPolicy.from_args(deployment.args)
        self._sleep = sleep
        self._clock = clock
        self._limit: Limit = self._concurrency_limit(deployment.args)
        self.max_concurrency = self._limit.limit
        self._api_key = api_key(deployment)
        self._tokenizer: Tokenizer | None = None
        self._tokenizer_lock = threading.Lock()
        self._sdk: Any = self._connect(
            api_key=self._api_key,
            base_url=deployment.args.get("base_url"),
            max_retries=0,  # ours are the only retries (reliability.py)
            timeout=self.policy.timeout_s,
            http_client=http_client if http_client is not None else self.bounded_http_client(),
        )

    # -- Client protocol ---------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """Provider, model id, endpoint and engine; no key and no operational settings."""
        ident = self.deployment.identity()
        ident["args"] = {k: v for k, v in ident["args"].items() if k not in OPERATIONAL_ARGS | BATCH_ARGS}
        return {**ident, "engine": self.engine_name}

    def tokenizer(self) -> Tokenizer:
        """The registry's ``tokenizer`` (a local path or hub id, loaded with transformers), or
        the conservative :class:`ApproxTokenizer` when none is named."""
        with self._tokenizer_lock:
            if self._tokenizer is None:
                name = self.deployment.tokenizer
                self._tokenizer = load_hf_tokenizer(name, self.deployment.name) if name else ApproxTokenizer()
            return self._tokenizer

    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        return map_concurrently(self._process_one, list(requests), self.max_concurrency)

    def close(self) -> None:
        self._sdk.close()

    def bounded_http_client(self) -> Any:
        """The HTTP client for the SDK: each attempt ends within ``timeout_s`` in all and
        ``max_response_bytes`` (see :mod:`holistic.models.http_bounds`)."""
        from holistic.models.http_bounds import DEFAULT_MAX_RESPONSE_BYTES, bounded_client

        max_bytes = int(self.deployment.args.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES))
        return bounded_client(
            deadline_s=self.policy.timeout_s, max_bytes=max_bytes, base_url=self.deployment.args.get("base_url")
        )

    # -- for providers (serving) -----------------------------------------------------------

    def _connect(self, **options: Any) -> Any:
        """The provider's SDK client, given the options every SDK takes (``api_key``,
        ``base_url``, ``max_retries``, ``timeout``, ``http_client``)."""
        raise NotImplementedError

    def _serve(self, request: Request, attempts: Attempts) -> RequestResult:
        """Serve one request; raise :class:`ProviderFailure` for a problem found locally."""
        raise NotImplementedError

    def _classify(self, exc: BaseException) -> Failure:
        raise NotImplementedError

    def unsupported(self, request: Request) -> str | None:
        """Why this deployment cannot serve ``request`` (``None`` when it can)."""
        return None

    def _answered(
        self,
        request: Request,
        completions: Sequence[Completion],
        prompt_tokens: int,
        completion_tokens: int,
        want_logprobs: bool = False,
        prompt_logprobs: tuple[Token, ...] | None = None,
        reasoning_tokens: int = 0,
        reasoning_reported: str | None = None,
    ) -> RequestResult:
        """The result of an answered request. A server that reports no usage gets its token
        counts estimated with :meth:`tokenizer` (thoughts included: they are output tokens, as
        ``reasoning_tokens`` are, estimated from the thoughts' text where the server gives no
        count); ``has_logprobs`` only when asked for and every non-empty completion carries its tokens."""
        thoughts = [c.reasoning for c in completions if c.reasoning]
        if thoughts and not reasoning_tokens:
            reasoning_tokens = sum(self.tokenizer().count(t) for t in thoughts)
        if not prompt_tokens:
            prompt_tokens = self.tokenizer().count(request.text)
            completion_tokens = sum(self.tokenizer().count(c.text) for c in completions) + reasoning_tokens
        return RequestResult(
            success=True,
            completions=tuple(completions),
            prompt_tokens=prompt_tokens,
            completion_tokens=max(completion_tokens, reasoning_tokens),
            prompt_logprobs=prompt_logprobs,
            has_logprobs=want_logprobs and all(c.tokens or not c.text for c in completions),
            reasoning_tokens=reasoning_tokens,
            reasoning_reported=reasoning_reported,
        )

    # -- internals ---------------------------------------------------------------

    def _concurrency_limit(self, args: Any) -> Limit:
        """The cap on calls in flight that ``adaptive_concurrency`` and ``max_concurrency`` ask for."""
        adaptive = args.get("adaptive_concurrency", True)
        if not isinstance(adaptive, bool):
            raise ModelError(
                f"model {self.deployment.name!r}: adaptive_concurrency must be true or false, not {adaptive!r}"
            )
        default = DEFAULT_ADAPTIVE_CEILING if adaptive else DEFAULT_MAX_CONCURRENCY
        ceiling = int(args.get("max_concurrency", default))
        if ceiling < 1:
            raise ModelError(f"model {self.deployment.name!r}: max_concurrency must be at least 1, not {ceiling}")
        if adaptive:
            self.batches_in_flight = 2
            return AdaptiveLimit(
                ceiling, max_pause_s=self.policy.max_retry_after_s, sleep=self._sleep, clock=self._clock
            )
        return ConcurrencyLimit(ceiling)

    def _process_one(self, request: Request, attempts: Attempts | None = None) -> RequestResult:
        """Serve one request; ``attempts`` may answer its SDK calls some other way (batch mode's replay)."""
        reason = self.unsupported(request)
        if reason is not None:
            return RequestResult.failure(reason, "unsupported", attempts=0, engine=self.engine_name)
        batch = attempts is not None and attempts.batch
        spending = None if batch else current_spending()  # batch mode keeps the budget where lines are sent
        if spending is not None and not spending.allows():  # --max-cost reached: nothing new is sent
            return RequestResult.failure(spending.refusal(), BUDGET_ERROR_KIND, attempts=0, engine=self.engine_name)
        if attempts is None:
            attempts = Attempts(self, sha256_hex(canonical_json(request.canonical())))
        try:
            result = self._serve(request, attempts)
        except RequestFailed as exc:
            return self._failed(exc.failure, exc.attempts, attempts.latency_s)
        except ProviderFailure as exc:
            return self._failed(exc.failure, max(attempts.count, 1), attempts.latency_s)
        except Exception as exc:  # a bug in parsing a response must not sink the batch
            failure = Failure("fatal", f"{type(exc).__name__}: {exc}", False)
            return self._failed(failure, max(attempts.count, 1), attempts.latency_s)
        cost = self.cost(result.prompt_tokens, result.completion_tokens, batch=batch, cached=attempts.cached_tokens)
        if spending is not None:
            spending.add(cost)
        return replace(
            result, attempts=attempts.count, latency_s=attempts.latency_s, cost_usd=cost, engine=self.engine_name
        )

    def _failed(self, failure: Failure, attempts: int, latency_s: float) -> RequestResult:
        message = redact(failure.message, [self._api_key])
        if len(message) > MAX_ERROR_CHARS:
            message = message[:MAX_ERROR_CHARS] + "..."
        return RequestResult.failure(
            message, failure.kind, attempts=attempts, latency_s=latency_s, engine=self.engine_name
        )

    def cost(self, prompt_tokens: int, completion_tokens: int, *, batch: bool = False, cached: int = 0) -> float:
        """US dollars for these token counts at the registry's prices (``batch``: the batch discount off;
        ``cached`` prompt tokens at ``cached_input_per_million``)."""
        return request_price(self.deployment, prompt_tokens, completion_tokens, batch=batch, cached_tokens=cached)
