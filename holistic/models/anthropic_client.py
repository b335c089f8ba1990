"""``anthropic``: Claude models through the ``anthropic`` SDK's Messages API.

- Chat messages go as they are; ``system`` messages are joined into the request's
  ``system`` field. A plain prompt becomes one user message.
- The Messages API returns no log-probabilities: ``loglikelihood`` and
  ``rolling_loglikelihood`` requests are recorded as ``unsupported`` without a call,
  and generated text comes without token logprobs.
- The API refuses whitespace-only stop sequences (such as ``"\\n"``) and a final
  assistant turn (a prefill) that ends in whitespace: such stops are applied to the
  text afterwards, and the prefill is sent without its trailing whitespace.
- ``num_completions > 1`` makes that many calls (the API has no ``n``).
- A thinking budget (``adaptation.reasoning.budget_tokens`` on a deployment with ``reasoning.style:
  anthropic_thinking``) goes as ``thinking: {type: enabled, budget_tokens}``, without
  ``temperature``; the ``thinking`` blocks are the thought, the ``text`` blocks the answer
  (:mod:`holistic.models.reasoning`).
"""

from __future__ import annotations

from typing import Any

from holistic.models.sdk_import import aiohttp_on_demand

with aiohttp_on_demand("anthropic"):
    import anthropic

from holistic.core.types import Completion, ModelDeployment, Request, RequestResult
from holistic.models.api_client import ApiClient, Attempts, sdk_call, stop_locally
from holistic.models.batch_spec import BATCH_ARGS
from holistic.models.reasoning import anthropic_params, read_answer, with_thought
from holistic.models.reliability import OPERATIONAL_ARGS, Failure, classify

PROVIDER_ARGS = frozenset({"base_url"}) | OPERATIONAL_ARGS | BATCH_ARGS

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


class AnthropicClient(ApiClient):
    """Generation through the Messages API (see the module docstring)."""

    engine_name = "anthropic-api"
    provider_args = PROVIDER_ARGS

    def _connect(self, **options: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(**options)

    def _classify(self, exc: BaseException) -> Failure:
        return classify(
            exc, timeout_types=(anthropic.APITimeoutError,), connection_types=(anthropic.APIConnectionError,)
        )

    def unsupported(self, request: Request) -> str | None:
        if request.kind in ("loglikelihood", "rolling_loglikelihood"):
            return (
                f"{self.deployment.name}: {request.kind} requests are not supported "
                "(the Anthropic Messages API returns no log-probabilities)"
            )
        if request.kind != "generate":
            return f"{self.deployment.name}: unknown request kind {request.kind!r}"
        return None

    def _serve(self, request: Request, attempts: Attempts) -> RequestResult:
        system, messages = self.messages(request)
        sent_stops = [s for s in request.stop if s.strip()]
        local_stops = [s for s in request.stop if s and not s.strip()]
        params: dict[str, Any] = {
            "model": self.deployment.model_id,
            "messages": messages,
            "max_tokens": max(1, min(request.max_tokens, self.deployment.max_output_tokens)),
            "temperature": request.temperature,
        }
        thinking = anthropic_params(request)
        if thinking.get("thinking", {}).get("type") == "enabled":
            del params["temperature"]  # the API takes no temperature with thinking
        params.update(thinking)
        if system:
            params["system"] = system
        if sent_stops:
            params["stop_sequences"] = sent_stops
        completions = []
        prompt_tokens = completion_tokens = 0
        for _ in range(max(request.num_completions, 1)):
            response = attempts.send(sdk_call(self._sdk.messages.create, params), "message")
            # A refusal comes back as no text with its own stop_reason: an answer, not a failure.
            blocks = [b for b in (response.content or []) if getattr(b, "type", None) == "text"]
            text = "".join(str(getattr(b, "text", "")) for b in blocks)
            finish = _FINISH.get(str(response.stop_reason), response.stop_reason)
            answer = read_answer(text, _thought(response.content or []), finish, self.deployment.reasoning)
            text, _, finish = stop_locally(answer.text, (), finish, local_stops)
            completions.append(with_thought(Completion(text=text, finish_reason=finish), answer))
            usage = response.usage
            # input_tokens leaves out the prompt tokens read from the prompt cache: the prompt is both
            cache_read = getattr(usage, "cache_read_input_tokens", None)
            attempts.saw_cached(cache_read)
            read = cache_read if isinstance(cache_read, int) and cache_read > 0 else 0
            prompt_tokens = max(prompt_tokens, int(getattr(usage, "input_tokens", 0) or 0) + read)
            completion_tokens += int(getattr(usage, "output_tokens", 0) or 0)
        return self._answered(request, completions, prompt_tokens, completion_tokens)

    @staticmethod
    def messages(request: Request) -> tuple[str, list[dict[str, str]]]:
        """The ``system`` text and the ``messages`` list sent for ``request``."""
        if request.messages is None:
            return "", [{"role": "user", "content": request.prompt}]
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        turns = [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"]
        if turns and turns[-1]["role"] == "assistant":
            turns[-1]["content"] = turns[-1]["content"].rstrip()
        return system, turns


def _thought(blocks: list[Any]) -> Any:
    """The ``thinking`` blocks' text (a ``redacted_thinking`` block counts as ``[redacted]``), or
    ``None`` without any; a block whose thinking is not a string is returned as it is (a note follows)."""
    parts: list[Any] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "thinking":
            parts.append(getattr(block, "thinking", None))
        elif kind == "redacted_thinking":
            parts.append("[redacted]")
    if not parts:
        return None
    if all(isinstance(p, str) for p in parts):
        return "\n\n".join(parts)
    return parts


def create_anthropic_client(deployment: ModelDeployment) -> AnthropicClient:
    return AnthropicClient(deployment)
