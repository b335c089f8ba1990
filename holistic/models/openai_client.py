"""``openai``: the OpenAI API and any OpenAI-compatible server (vLLM, llama.cpp server, Ollama).

Routing:

- ``generate`` with chat messages, or on a deployment without ``capabilities.completions``
  -> ``/chat/completions`` (a plain prompt becomes one user message). Token logprobs
  come from ``logprobs``/``top_logprobs`` when the deployment has ``capabilities.logprobs``.
- ``generate`` with a plain prompt on a completions deployment -> ``/completions``
  (``echo`` returns the prompt's tokens as ``prompt_logprobs``).
- ``loglikelihood`` / ``rolling_loglikelihood`` -> ``/completions`` with ``echo=True`` and
  ``logprobs``: the server returns every prompt token with its logprob and character
  offset, and the continuation's tokens are those whose text reaches past the end of
  the context. ``max_tokens`` of that call is ``args.echo_max_tokens`` (default 1: some
  servers, llama-cpp-python among them, read 0 as "no limit" and generate until the
  context is full; the generated token lies past the text and is never counted).
  Deployments without ``capabilities.prompt_logprobs`` record these requests as
  ``unsupported`` without calling the server (the planner marks such cells n/a).

Before a run's first log-likelihood request reaches the server, :meth:`OpenAIClient.prepare_scoring`
checks where the server puts echo logprobs (:mod:`holistic.models.echo_alignment`):
a known one-position shift (llama-cpp-python's) is corrected and recorded in the
identity; an unexplained disagreement refuses every log-likelihood request with the
numbers. ``args.echo_top_logprobs`` (default 5, OpenAI's limit) is how many
alternatives an echo asks for; a shifted server's scores are read from them.

Servers that ignore ``n`` get the remaining samples from further calls (with seeds
``seed + 1, seed + 2, ...``). Stop sequences beyond ``args.max_stop_sequences``
(OpenAI accepts 4) are applied to the text afterwards.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from holistic.models.sdk_import import aiohttp_on_demand

with aiohttp_on_demand("openai"):
    import openai

from holistic.core.types import Completion, ModelDeployment, Request, RequestResult, Token
from holistic.models.api_client import ApiClient, Attempts, RequestFailed, sdk_call, stop_locally
from holistic.models.batch_spec import BATCH_ARGS
from holistic.models.echo_alignment import PROBE_PROMPT, SHIFTED, EchoAlignment, judge, shifted_logprobs
from holistic.models.reasoning import chat_params, read_answer, reasoning_count, with_thought
from holistic.models.reliability import OPERATIONAL_ARGS, Failure, ProviderFailure, classify

PROVIDER_ARGS = (
    frozenset(
        {
            "base_url",
            "organization",
            "echo_max_tokens",
            "echo_top_logprobs",
            "max_tokens_field",
            "max_stop_sequences",
            "extra_body",
            "api",
        }
    )
    | OPERATIONAL_ARGS
    | BATCH_ARGS
)

MAX_COMPLETIONS_LOGPROBS = 5
"""The completions endpoint returns at most this many alternatives per token."""
MAX_CHAT_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class EchoedToken:
    """One token of a completions ``logprobs`` block."""

    text: str
    logprob: float | None
    """``None`` for the first token of a prompt (nothing to condition on)."""
    top: Mapping[str, float]
    offset: int
    """Character offset of the token in the returned text."""


def echoed_tokens(logprobs: Any) -> list[EchoedToken]:
    """The tokens of a completions ``logprobs`` block (offsets summed when a server omits them)."""
    if logprobs is None or not getattr(logprobs, "tokens", None):
        return []
    texts = list(logprobs.tokens)
    values = list(logprobs.token_logprobs or [None] * len(texts))
    tops = list(logprobs.top_logprobs or [None] * len(texts))
    offsets = list(logprobs.text_offset or [])
    if len(offsets) != len(texts):
        offsets, at = [], 0
        for text in texts:
            offsets.append(at)
            at += len(text)
    return [
        EchoedToken(
            text, None if lp is None else float(lp), {str(k): float(v) for k, v in (top or {}).items()}, int(off)
        )
        for text, lp, top, off in zip(texts, values, tops, offsets, strict=True)
    ]


def continuation_span(tokens: Sequence[EchoedToken], start: int, end: int) -> list[EchoedToken]:
    """Tokens whose text reaches into ``[start, end)``: a token straddling the context/continuation
    boundary belongs to the continuation (it carries its first characters)."""
    return [tokens[i] for i in continuation_indices(tokens, start, end)]


def continuation_indices(tokens: Sequence[EchoedToken], start: int, end: int) -> list[int]:
    """The positions of :func:`continuation_span`'s tokens."""
    return [i for i, t in enumerate(tokens) if t.offset < end and t.offset + len(t.text) > start]


def split_stops(stops: Sequence[str], limit: int) -> tuple[list[str], list[str]]:
    """The stop sequences sent to the server and those applied to the text afterwards."""
    kept = [s for s in stops if s]
    return kept[:limit], kept[limit:]


class OpenAIClient(ApiClient):
    """Chat and completions through the ``openai`` SDK (see the module docstring)."""

    engine_name = "openai-api"
    provider_args = PROVIDER_ARGS

    def __init__(self, deployment: ModelDeployment, **options: Any) -> None:
        """``options``: as for :class:`~holistic.models.api_client.ApiClient`."""
        super().__init__(deployment, **options)
        args = deployment.args
        self.echo_max_tokens = int(args.get("echo_max_tokens", 1))
        self.max_tokens_field = str(args.get("max_tokens_field", "max_tokens"))
        self.max_stop_sequences = int(args.get("max_stop_sequences", 4))
        self.extra_body: dict[str, Any] = dict(args.get("extra_body") or {})
        self.echo_top_logprobs = max(1, int(args.get("echo_top_logprobs", MAX_COMPLETIONS_LOGPROBS)))
        self.alignment: EchoAlignment | None = None
        """The echo probe's verdict for this run (``None``: not probed yet)."""
        self._alignment_lock = threading.Lock()

    def _connect(self, **options: Any) -> openai.OpenAI:
        return openai.OpenAI(
            **{**options, "api_key": options["api_key"] or "no-key"},
            organization=self.deployment.args.get("organization"),
        )

    def begin_run(self) -> None:
        super().begin_run()
        self.alignment = None  # probed again for every run: the server behind a URL may change

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        if self.alignment is not None and self.alignment.status == SHIFTED:
            ident["echo_alignment"] = "shifted-one-position-corrected"
        return ident

    # -- the echo probe --------------------------------------------------------------

    def prepare_scoring(self) -> dict[str, object] | None:
        """Probe the server's echo alignment (once per run); what it found, for the run's artifacts."""
        if not self.deployment.capabilities.prompt_logprobs:
            return None
        alignment = self._ensure_alignment()
        return alignment.record() if alignment is not None else None

    def _ensure_alignment(self) -> EchoAlignment | None:
        """The probe's verdict; ``None`` when the server could not be asked (retried at the next request)."""
        with self._alignment_lock:
            if self.alignment is None:
                try:
                    self.alignment = self._probe(Attempts(self, "echo-probe"))
                except (RequestFailed, ProviderFailure):
                    return None
            return self.alignment

    def _probe(self, attempts: Attempts) -> EchoAlignment:
        generated: tuple[str, float] | None = None
        caps = self.deployment.capabilities
        if caps.logprobs and caps.completions:
            params = {"model": self.deployment.model_id, "prompt": PROBE_PROMPT, "max_tokens": 1, "temperature": 0.0}
            response = attempts.send(sdk_call(self._sdk.completions.create, {**params, "logprobs": 1}), "echo probe")
            logprobs = getattr(response.choices[0], "logprobs", None) if response.choices else None
            tokens = list(getattr(logprobs, "tokens", None) or [])
            values = list(getattr(logprobs, "token_logprobs", None) or [])
            if tokens and values and values[0] is not None:
                generated = (str(tokens[0]), float(values[0]))
        token = generated[0] if generated is not None else " Paris"
        echoed, _ = self._echo(PROBE_PROMPT + token, self.echo_top_logprobs, attempts, "echo probe")
        return judge(PROBE_PROMPT, generated, echoed)

    def _echo(self, text: str, top: int, attempts: Attempts, what: str) -> tuple[list[EchoedToken], Any]:
        """The echoed tokens of ``text`` (each with up to ``top`` alternatives) and the usage block."""
        params: dict[str, Any] = {
            "model": self.deployment.model_id,
            "prompt": text,
            "max_tokens": self.echo_max_tokens,
            "temperature": 0.0,
            "echo": True,
            "logprobs": top,
        }
        if self.extra_body:
            params["extra_body"] = self.extra_body
        response = attempts.send(sdk_call(self._sdk.completions.create, params), what)
        if not response.choices:
            raise ProviderFailure(Failure("fatal", "the server returned no choices", False))
        return echoed_tokens(getattr(response.choices[0], "logprobs", None)), getattr(response, "usage", None)

    def _classify(self, exc: BaseException) -> Failure:
        return classify(exc, timeout_types=(openai.APITimeoutError,), connection_types=(openai.APIConnectionError,))

    def unsupported(self, request: Request) -> str | None:
        caps = self.deployment.capabilities
        name = self.deployment.name
        if request.kind in ("loglikelihood", "rolling_loglikelihood"):
            if not caps.prompt_logprobs:
                return (
                    f"{name} cannot score text: {request.kind} is not supported "
                    "(capabilities.prompt_logprobs is false; chat APIs return no prompt log-probabilities)"
                )
            if request.messages is not None:
                return f"{name}: {request.kind} of chat messages is not supported; send a plain prompt"
            return None
        if request.kind != "generate":
            return f"{name}: unknown request kind {request.kind!r}"
        if request.messages is not None and not caps.chat:
            return f"{name} takes no chat messages (capabilities.chat is false)"
        return None

    # -- serving -------------------------------------------------------------------

    def _serve(self, request: Request, attempts: Attempts) -> RequestResult:
        if request.kind == "loglikelihood":
            return self._score(request.prompt, request.continuation, request, attempts)
        if request.kind == "rolling_loglikelihood":
            return self._score("", request.prompt, request, attempts)
        if request.max_tokens <= 0 and not request.echo:
            # Nothing to generate; some servers read max_tokens=0 as "no limit".
            empty = tuple(Completion(text="", finish_reason="length") for _ in range(max(request.num_completions, 1)))
            return RequestResult(success=True, completions=empty, prompt_tokens=self.tokenizer().count(request.text))
        if self.deployment.args.get("api") == "responses":
            from holistic.models.openai_responses import respond

            return respond(self, request, attempts, self.extra_body)
        if request.messages is not None or not self.deployment.capabilities.completions:
            return self._chat(request, attempts)
        return self._complete(request, attempts)

    def _common(self, request: Request, max_tokens_field: str) -> tuple[dict[str, Any], list[str]]:
        sent, local = split_stops(request.stop, self.max_stop_sequences)
        params: dict[str, Any] = {
            "model": self.deployment.model_id,
            "temperature": request.temperature,
            max_tokens_field: min(request.max_tokens, self.deployment.max_output_tokens),
        }
        if sent:
            params["stop"] = sent
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params, local

    def _samples(
        self, request: Request, params: dict[str, Any], create: Callable[..., Any], attempts: Attempts, what: str
    ) -> tuple[list[Any], int, int]:
        """Choices for ``request.num_completions`` samples (more calls if the server ignores ``n``);
        the reasoning tokens the server counted are summed in :attr:`Attempts.reasoning_tokens`."""
        want = max(request.num_completions, 1)
        choices: list[Any] = []
        prompt_tokens = completion_tokens = 0
        call = 0
        while len(choices) < want:
            p = dict(params)
            if want - len(choices) > 1:
                p["n"] = want - len(choices)
            if request.temperature > 0:
                p["seed"] = request.seed + call
            response = attempts.send(sdk_call(create, p), what)
            if not response.choices:
                raise ProviderFailure(Failure("fatal", "the server returned no choices", False))
            choices.extend(sorted(response.choices, key=lambda c: c.index or 0))
            usage = getattr(response, "usage", None)
            prompt_tokens = max(prompt_tokens, getattr(usage, "prompt_tokens", 0) or 0)
            completion_tokens += getattr(usage, "completion_tokens", 0) or 0
            attempts.reasoning_tokens += reasoning_count(getattr(usage, "completion_tokens_details", None))
            attempts.saw_cached(getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None))
            call += 1
        return choices[:want], prompt_tokens, completion_tokens

    def _chat(self, request: Request, attempts: Attempts) -> RequestResult:
        params, local_stops = self._common(request, self.max_tokens_field)
        if request.messages is not None:
            params["messages"] = [{"role": m.role, "content": m.content} for m in request.messages]
        else:
            params["messages"] = [{"role": "user", "content": request.prompt}]
        want_logprobs = request.logprobs and self.deployment.capabilities.logprobs
        if want_logprobs:
            # top_logprobs is sent even when 0: some servers (llama-cpp-python) return no
            # logprobs at all without it.
            params["logprobs"] = True
            params["top_logprobs"] = min(request.top_k_logprobs, MAX_CHAT_TOP_LOGPROBS)
        params.update(chat_params(request, self.deployment.reasoning))
        choices, prompt_tokens, completion_tokens = self._samples(
            request, params, self._sdk.chat.completions.create, attempts, "chat completion"
        )
        completions = []
        support = self.deployment.reasoning
        for choice in choices:
            text = getattr(choice.message, "content", None) or ""
            tokens: list[Token] = []
            content = getattr(getattr(choice, "logprobs", None), "content", None) if want_logprobs else None
            for item in content or []:
                top = {t.token: float(t.logprob) for t in (item.top_logprobs or [])} if request.top_k_logprobs else {}
                tokens.append(Token(item.token, float(item.logprob), top))
            thought = getattr(choice.message, support.field, None) if support.field else None
            answer = read_answer(str(text), thought, choice.finish_reason, support, attempts.reasoning_tokens)
            kept = tokens if answer.text == text else []  # the tokens of a thought are not the answer's
            completion = self._completion(answer.text, kept, choice.finish_reason, local_stops)
            completions.append(with_thought(completion, answer))
        return self._answered(
            request, completions, prompt_tokens, completion_tokens, want_logprobs, None, attempts.reasoning_tokens
        )

    def _complete(self, request: Request, attempts: Attempts) -> RequestResult:
        params, local_stops = self._common(request, "max_tokens")
        params["prompt"] = request.prompt
        want_logprobs = request.logprobs and self.deployment.capabilities.logprobs
        if want_logprobs or request.echo:
            params["logprobs"] = min(request.top_k_logprobs, MAX_COMPLETIONS_LOGPROBS)
        if request.echo:
            params["echo"] = True
            if request.max_tokens <= 0:
                params["max_tokens"] = self.echo_max_tokens
        choices, prompt_tokens, completion_tokens = self._samples(
            request, params, self._sdk.completions.create, attempts, "completion"
        )
        completions = []
        prompt_logprobs: tuple[Token, ...] | None = None
        cut = len(request.prompt) if request.echo else 0
        for choice in choices:
            text = choice.text or ""
            echoed = echoed_tokens(getattr(choice, "logprobs", None))
            if request.echo:
                if prompt_logprobs is None:
                    # The first token has nothing to condition on (no logprob): it is left out.
                    prompt_logprobs = tuple(
                        Token(t.text, t.logprob, t.top) for t in echoed if t.offset < cut and t.logprob is not None
                    )
                text = text[cut:] if text.startswith(request.prompt) else text
                echoed = [t for t in echoed if t.offset >= cut]
                if request.max_tokens <= 0:  # prompt logprobs only: drop what the server generated
                    text, echoed = "", []
            tokens = (
                [
                    Token(t.text, t.logprob if t.logprob is not None else 0.0, t.top if request.top_k_logprobs else {})
                    for t in echoed
                ]
                if want_logprobs
                else []
            )
            completions.append(self._completion(text, tokens, choice.finish_reason, local_stops))
        return self._answered(request, completions, prompt_tokens, completion_tokens, want_logprobs, prompt_logprobs)

    def _score(self, context: str, continuation: str, request: Request, attempts: Attempts) -> RequestResult:
        full = context + continuation
        alignment = self._ensure_alignment()
        if alignment is None:
            raise ProviderFailure(
                Failure("connection", f"{self.deployment.name}: the echo probe could not reach the server", True)
            )
        if alignment.refuses:
            raise ProviderFailure(
                Failure(
                    "unsupported",
                    f"{self.deployment.name}: log-likelihoods refused: {alignment.detail}. Check the server, or "
                    "compare it with a local copy of the model: python -m holistic.cli.check",
                    False,
                )
            )
        shifted = alignment.status == SHIFTED
        top = self.echo_top_logprobs if shifted else max(1, min(request.top_k_logprobs, self.echo_top_logprobs))
        echoed, usage = self._echo(full, top, attempts, "echo scoring")
        if not echoed:
            raise ProviderFailure(
                Failure(
                    "unsupported",
                    f"{self.deployment.name}: the server returned no prompt log-probabilities for an echo request; "
                    "set capabilities.prompt_logprobs: false for this deployment",
                    False,
                )
            )
        span_at = [i for i in continuation_indices(echoed, len(context), len(full)) if echoed[i].logprob is not None]
        if shifted:
            recovered = shifted_logprobs(echoed, span_at)
            missing = [i for i, v in zip(span_at, recovered, strict=True) if v is None]
            if missing:
                k = missing[0]
                why = (
                    f"is not among the {top} alternatives of the position before it"
                    if k >= 1 and echoed[k - 1].top
                    else "has no position before it with alternatives (the server gives none for the first token)"
                )
                raise ProviderFailure(
                    Failure(
                        "unsupported",
                        f"{self.deployment.name} reports echo log-probabilities one position late; the token "
                        f"{echoed[k].text!r} {why}, so its log-probability cannot be recovered"
                        + (
                            " (raise echo_top_logprobs if the server allows more)"
                            if k >= 1 and echoed[k - 1].top
                            else ""
                        ),
                        False,
                    )
                )
            span = [replace(echoed[i], logprob=v) for i, v in zip(span_at, recovered, strict=True)]
        else:
            span = [echoed[i] for i in span_at]
        if not span:
            raise ProviderFailure(
                Failure(
                    "fatal",
                    f"no scored token of the continuation {continuation!r} came back (echoed "
                    f"{len(echoed)} tokens, text offsets up to {echoed[-1].offset})",
                    False,
                )
            )
        # (a shifted server's alternatives belong to the next position: none are kept)
        keep_top = bool(request.top_k_logprobs) and not shifted
        tokens = tuple(Token(t.text, float(t.logprob or 0.0), t.top if keep_top else {}) for t in span)
        greedy = [(t.logprob or 0.0) >= max(t.top.values()) - 1e-6 for t in span if t.top and not shifted]
        completion = Completion(
            text=continuation,
            logprob=sum(t.logprob for t in tokens),
            tokens=tokens,
            finish_reason="scored",
            is_greedy=all(greedy) if len(greedy) == len(span) else None,
        )
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or self.tokenizer().count(full)
        return RequestResult(
            success=True,
            completions=(completion,),
            prompt_tokens=prompt_tokens,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            has_logprobs=True,
        )

    # -- assembling results --------------------------------------------------------

    def _completion(self, text: str, tokens: list[Token], finish: str | None, local_stops: list[str]) -> Completion:
        text, kept, finish = stop_locally(text, tokens, finish, local_stops)
        return Completion(text=text, logprob=sum(t.logprob for t in kept), tokens=kept, finish_reason=finish)


def create_openai_client(deployment: ModelDeployment) -> OpenAIClient:
    return OpenAIClient(deployment)
