"""Core value types shared by every part of holistic.

Every type here is a frozen dataclass: values, not objects with behaviour.
Other packages (scenarios, adaptation, models, metrics, execution) exchange
these and nothing else, so each part can be read and tested alone.

This module holds the models' side (deployments, requests and what comes back) and
the request states; it re-exports the rest, so every type is importable from here:
scenario data from :mod:`holistic.core.instances`, specs from
:mod:`holistic.core.specs` and statistics from :mod:`holistic.core.stats`.

Mappings inside frozen dataclasses are stored as plain ``dict`` for ease of
use; treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from holistic.core.instances import (
    CHAT_HISTORY_KEY,
    CORRECT_TAG,
    EVAL_SPLITS,
    SAMPLE_STRATUM_KEY,
    SAMPLE_UNIT_KEY,
    TEST_SPLIT,
    TRAIN_SPLIT,
    VALID_SPLIT,
    Instance,
    PerturbationDescription,
    Reference,
)
from holistic.core.judges import Annotation
from holistic.core.secrets import is_secret_name
from holistic.core.specs import (
    ADAPTATION_METHODS,
    PROMPT_FORMATS,
    AdaptationMethod,
    AdapterDefaults,
    AdapterSpec,
    NamedSpec,
    PerturbationSpec,
    PromptFormat,
    ReasoningSetting,
    RunSpec,
    ScenarioSpec,
)
from holistic.core.stats import MetricName, PerInstanceStat, Stat

__all__ = [
    "ADAPTATION_METHODS",
    "CHAT_HISTORY_KEY",
    "CORRECT_TAG",
    "EVAL_SPLITS",
    "PROMPT_FORMATS",
    "SAMPLE_STRATUM_KEY",
    "SAMPLE_UNIT_KEY",
    "TEST_SPLIT",
    "TRAIN_SPLIT",
    "VALID_SPLIT",
    "AdaptationMethod",
    "AdapterDefaults",
    "AdapterSpec",
    "Capabilities",
    "Completion",
    "Instance",
    "Message",
    "MetricName",
    "ModelDeployment",
    "NamedSpec",
    "PerInstanceStat",
    "PerturbationDescription",
    "PerturbationSpec",
    "PromptFormat",
    "ReasoningSetting",
    "ReasoningSupport",
    "Reference",
    "Request",
    "RequestKind",
    "RequestResult",
    "RequestRole",
    "RequestState",
    "RunSpec",
    "ScenarioSpec",
    "Stat",
    "Token",
]


class RequestRole(StrEnum):
    """What a request is for within its instance (``Request.role``; the ``role`` column)."""

    MAIN = "main"
    """The request whose answer is scored (generation, or the scored choice)."""
    CALIBRATION = "calibration"
    """The answer scored after a neutral cue alone (calibrated multiple choice)."""
    YES = "yes"
    """Ranking: the passage judged relevant."""
    NO = "no"
    """Ranking: the passage judged not relevant."""
    WINDOW = "window"
    """Language modelling: one window of a document scored token by token."""


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Capabilities:
    """What a model deployment can do."""

    logprobs: bool = False
    """Returns token log-probabilities of generated tokens."""

    prompt_logprobs: bool = False
    """Can score a given continuation (log-likelihood requests)."""

    chat: bool = False
    """Takes chat messages (has a chat template or a messages API)."""

    completions: bool = True
    """Takes plain-text prompts."""


ReasoningStyle = Literal["openai_effort", "anthropic_thinking", "chat_template_kwargs", "none"]


@dataclass(frozen=True)
class ReasoningSupport:
    """How a deployment takes a reasoning setting and returns its thoughts (the models file's
    ``reasoning:`` mapping; see :mod:`holistic.models.reasoning`)."""

    style: ReasoningStyle = "none"
    """``openai_effort`` (``reasoning_effort``; ``reasoning={effort}`` on the Responses API),
    ``anthropic_thinking`` (``thinking={type: enabled, budget_tokens}``), ``chat_template_kwargs``
    (vLLM/llama.cpp servers: ``chat_template_kwargs={enable_thinking, reasoning_effort}``) or
    ``none`` (takes no setting)."""

    field: str | None = None
    """The response field that carries the thoughts (``reasoning_content``), if any."""

    think_tags: tuple[str, str] | None = None
    """The tags that wrap the thoughts inside the content (``<think>``, ``</think>``), if any."""


@dataclass(frozen=True)
class ModelDeployment:
    """One entry of the model registry."""

    name: str
    """Registry name, e.g. ``embedded/smollm2-135m-instruct``."""

    provider: str
    """Provider key: ``embedded``, ``huggingface``, ``llama_cpp``, ``openai``, ``anthropic``, ``simple``."""

    model_id: str
    """The provider's own model id (hub id, path, API model name)."""

    args: Mapping[str, Any] = field(default_factory=dict)
    """Provider arguments (``base_url``, ``device``, ``dtype``, ``revision``...)."""

    tokenizer: str | None = None
    """Tokenizer name or path; ``None`` means the model's own."""

    context_window: int = 2048
    max_output_tokens: int = 512
    capabilities: Capabilities = Capabilities()
    price_input_per_million: float = 0.0
    price_output_per_million: float = 0.0
    price_cached_input_per_million: float | None = None
    """Dollars per million prompt tokens the provider served from its prompt cache (``None``: as input)."""
    price_batch_discount: float | None = None
    """Fraction off a batch request (``None``: the provider's default, :mod:`holistic.models.pricing`)."""
    priced: bool = False
    """Whether the models file gives a ``price`` (what an API deployment without one costs is unknown)."""
    api_key_env: str | None = None
    """Environment variable holding the API key (the key itself is never stored)."""

    description: str = ""
    reasoning: ReasoningSupport = ReasoningSupport()
    """How it takes a reasoning setting and returns its thoughts."""

    def identity(self) -> dict[str, Any]:
        """The model's full identity for cache keys (never contains secrets)."""
        safe_args = {k: v for k, v in sorted(self.args.items()) if not is_secret_name(k)}
        return {
            "provider": self.provider,
            "model_id": self.model_id,
            "args": safe_args,
            "tokenizer": self.tokenizer,
        }


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: str
    """``system``, ``user`` or ``assistant``."""

    content: str


RequestKind = Literal["generate", "loglikelihood", "rolling_loglikelihood"]


@dataclass(frozen=True)
class Request:
    """What is sent to a model.

    - ``generate``: complete ``prompt`` (or ``messages``).
    - ``loglikelihood``: score ``continuation`` given ``prompt`` as context; the
      result's first completion carries the continuation's tokens and summed logprob.
    - ``rolling_loglikelihood``: score all of ``prompt`` (no context); used by
      language modelling with the adapter's own windows.
    """

    model: str
    kind: RequestKind = "generate"
    prompt: str = ""
    messages: tuple[Message, ...] | None = None
    continuation: str = ""
    max_tokens: int = 100
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    num_completions: int = 1
    logprobs: bool = True
    """Ask for the logprob of each generated token (if the model can)."""
    top_k_logprobs: int = 0
    echo: bool = False
    """Return the prompt's tokens and logprobs with the completion."""
    trial_tag: str = ""
    """Distinguishes otherwise identical requests (e.g. trial and sample index) in the cache."""
    seed: int = 0
    reasoning_effort: str | None = None
    """The reasoning effort asked for (``adaptation.reasoning.effort``), or ``None``."""
    reasoning_budget: int | None = None
    """The thinking budget in tokens asked for (``adaptation.reasoning.budget_tokens``), or ``None``."""

    def canonical(self) -> dict[str, Any]:
        from dataclasses import asdict

        data = asdict(self)
        data.pop("model")
        for key in ("reasoning_effort", "reasoning_budget"):  # absent unless set: cache keys stay as they were
            if data[key] is None:
                data.pop(key)
        return data

    @property
    def text(self) -> str:
        """The prompt as one string (messages joined for display)."""
        if self.messages is not None:
            # joined from pieces: no message is copied before the join (a content may be huge)
            pieces: list[str] = []
            for m in self.messages:
                pieces += ("\n" if pieces else "", "[", m.role, "] ", m.content)
            return "".join(pieces)
        return self.prompt


@dataclass(frozen=True)
class Token:
    """One token with its logprob and (optionally) top alternatives."""

    text: str
    logprob: float
    top_logprobs: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    """One completion (or, for log-likelihood requests, the scored continuation)."""

    text: str
    logprob: float = 0.0
    """Sum of token logprobs (``0.0`` when the model gives none; see ``has_logprobs``)."""
    tokens: tuple[Token, ...] = ()
    finish_reason: str | None = None
    is_greedy: bool | None = None
    """For log-likelihood requests: every continuation token was the argmax."""
    reasoning: str | None = None
    """The model's thoughts (or the provider's summary of them), kept apart from ``text`` (the final
    answer, the only text scored); ``None`` when none came back."""
    reasoning_unfinished: bool = False
    """The thought did not finish (``max_tokens`` was reached, or the server said so, before a final
    answer): ``text`` is empty and the request counts as not answered."""
    reasoning_note: str | None = None
    """What was odd about the thoughts as returned (an unclosed tag, a field that was not a string,
    a cut at the size limit), by the rule in :mod:`holistic.models.reasoning`."""


@dataclass(frozen=True)
class RequestResult:
    """What came back for one request."""

    success: bool
    completions: tuple[Completion, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_logprobs: tuple[Token, ...] | None = None
    """Tokens of the prompt with logprobs, when ``echo`` was asked and given."""
    latency_s: float = 0.0
    """Wall time of the original call (kept when served from the cache)."""
    cached: bool = False
    has_logprobs: bool = False
    error: str | None = None
    error_kind: str | None = None
    """``rate_limit``, ``server``, ``timeout``, ``client``, ``fatal``..."""
    attempts: int = 1
    cost_usd: float = 0.0
    engine: str = ""
    """Which engine served it (e.g. ``transformers``, ``llama.cpp``)."""
    batch: bool = False
    """Answered through the provider's batch API (priced at its batch rate)."""
    reasoning_tokens: int = 0
    """Tokens spent thinking (the provider's count, else an estimate from the thoughts' text); part of
    ``completion_tokens``."""
    reasoning_reported: str | None = None
    """The reasoning setting the provider reported having applied (``effort=low``), where it reports one."""

    @classmethod
    def failure(
        cls, error: str, kind: str, *, attempts: int = 1, latency_s: float = 0.0, engine: str = ""
    ) -> RequestResult:
        """A failed request: what went wrong and its kind (``error_kind``) are required."""
        return cls(success=False, error=error, error_kind=kind, attempts=attempts, latency_s=latency_s, engine=engine)


# ---------------------------------------------------------------------------
# Adaptation output
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestState:
    """One request with everything needed to score it afterwards."""

    instance: Instance
    request: Request
    trial: int = 0
    train_ids: tuple[str, ...] = ()
    """Ids of the in-context examples used, in prompt order."""
    reference_index: int | None = None
    """For separate/ranking methods: which reference this request scores."""
    role: str = RequestRole.MAIN
    """``main``; ``calibration`` for the neutral-context request of calibrated MC;
    ``window`` for language modelling windows."""
    output_mapping: Mapping[str, str] | None = None
    """For joint multiple choice: letter -> reference output."""
    num_train_instances: int = 0
    prompt_truncated: bool = False
    request_index: int = 0
    """Position among the instance's requests (windows, choices)."""
    result: RequestResult | None = None
    post_processed: tuple[str, ...] | None = None
    """Completions after post-processing (``None`` until processed)."""
    parse_error: str | None = None
    annotations: tuple[Annotation, ...] = ()
    """The judges' verdicts on this request (the annotation stage), one per judge."""

    def with_result(self, result: RequestResult) -> RequestState:
        return replace(self, result=result)
