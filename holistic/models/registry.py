"""The model registry: deployments (built-in YAML plus a user file) and provider factories.

Look-up order for a name: the user file's entries, the built-in entries, then the
user file's ``patterns`` and the built-in ``patterns`` (first match wins). So
``openai/gpt-4.1`` works without an entry of its own, and a user file can point a
whole family of names at an OpenAI-compatible server::

    patterns:
      - pattern: vllm/{model_id}
        provider: openai
        args: {base_url: "http://127.0.0.1:8000/v1"}
        capabilities: {logprobs: true, prompt_logprobs: true, chat: true, completions: true}

The file format is ``schemas/models.schema.json``; see :mod:`holistic.models.registry_file`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from holistic.core.errors import UnknownNameError
from holistic.core.interfaces import Client
from holistic.core.registry import Registry
from holistic.core.types import ModelDeployment
from holistic.models.registry_file import Pattern, RegistryFile, read_registry_file
from holistic.models.tokens import (
    API_TOKENS,
    GgufModel,
    HuggingFaceModel,
    OwnTokenizer,
    TokenCounting,
    embedded_gguf,
    model_id_gguf,
    simple_tokenizer,
)

BUILTIN_MODELS_FILE = Path(__file__).with_name("models.yaml")

ClientFactory = Callable[[ModelDeployment], Client]


@dataclass(frozen=True)
class Provider:
    """A built-in provider: where its client factory lives and how its requests are served."""

    factory: str
    """``"module:function"`` of the factory ``(ModelDeployment) -> Client`` (imported on first use)."""
    in_process: bool = False
    """The model runs in this process: requests are batched on one thread, never sent from
    several (and a Ray task reserves a CPU or GPU for it). ``False``: a remote API, where
    ``-j`` threads send requests concurrently."""
    tokens: TokenCounting = API_TOKENS
    """How its models count tokens (token counts for scenarios and ``--plan``)."""


BUILTIN_PROVIDERS: dict[str, Provider] = {
    "simple": Provider(
        "holistic.models.simple:create_simple_client", in_process=True, tokens=OwnTokenizer(simple_tokenizer)
    ),
    "embedded": Provider(
        "holistic.models.embedded:create_embedded_client", in_process=True, tokens=GgufModel(embedded_gguf)
    ),
    "huggingface": Provider(
        "holistic.models.huggingface:create_huggingface_client", in_process=True, tokens=HuggingFaceModel()
    ),
    "llama_cpp": Provider(
        "holistic.models.llama_cpp:create_llama_cpp_client", in_process=True, tokens=GgufModel(model_id_gguf)
    ),
    "openai": Provider("holistic.models.openai_client:create_openai_client"),
    "anthropic": Provider("holistic.models.anthropic_client:create_anthropic_client"),
}
"""The built-in providers, declared like plugins' entry points (``holistic.models`` group,
``name = "module:factory"``); plugin providers are remote (not in process)."""

PROVIDERS: Registry[ClientFactory] = Registry(
    "provider", group="holistic.models", builtins={name: p.factory for name, p in BUILTIN_PROVIDERS.items()}
)


_PROVIDER_TOKENS: dict[str, TokenCounting] = {name: p.tokens for name, p in BUILTIN_PROVIDERS.items()}


def declare_tokens(provider: str, tokens: TokenCounting) -> None:
    """Say how ``provider``'s models count tokens (a plugin's ``register_provider(..., tokens=)``)."""
    _PROVIDER_TOKENS[provider] = tokens


def token_counting(provider: str) -> TokenCounting:
    """How ``provider``'s models count tokens (default: the registry entry's ``tokenizer``)."""
    return _PROVIDER_TOKENS.get(provider, API_TOKENS)


def runs_in_process(provider: str) -> bool:
    """Whether ``provider``'s models run in this process (see :attr:`Provider.in_process`)."""
    known = BUILTIN_PROVIDERS.get(provider)
    return known is not None and known.in_process


def known_providers() -> list[str]:
    """Built-in provider names plus those plugins register."""
    return PROVIDERS.names()


def read_models_file(path: Path) -> RegistryFile:
    """Load and validate a registry file (entries and patterns)."""
    return read_registry_file(path, known_providers())


def load_models_file(path: Path) -> dict[str, ModelDeployment]:
    """The named entries of a registry file (validated; patterns are not expanded)."""
    return read_models_file(path).deployments


class ModelRegistry:
    """All known deployments: built-ins, then the user's file (which may override)."""

    def __init__(self, user_file: Path | None = None) -> None:
        builtin = read_models_file(BUILTIN_MODELS_FILE)
        self.deployments: dict[str, ModelDeployment] = dict(builtin.deployments)
        self.patterns: tuple[Pattern, ...] = builtin.patterns
        if user_file is not None:
            user = read_models_file(Path(user_file))
            self.deployments.update(user.deployments)
            self.patterns = user.patterns + self.patterns

    def get(self, name: str) -> ModelDeployment:
        if name in self.deployments:
            return self.deployments[name]
        for pattern in self.patterns:
            deployment = pattern.match(name)
            if deployment is not None:
                return _concrete(deployment)
        known = [*self.deployments, *(p.pattern for p in self.patterns)]
        raise UnknownNameError("model", name, known)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.get(name)
        except UnknownNameError:
            return False
        return True

    def names(self) -> list[str]:
        """Names of the explicit entries (patterns accept more)."""
        return sorted(self.deployments)


def _concrete(deployment: ModelDeployment) -> ModelDeployment:
    """A pattern match filled in with what its target says about itself (a local
    Hugging Face folder's context window and chat template)."""
    if deployment.provider == "huggingface":
        from holistic.models.hf_local import resolve_deployment

        return resolve_deployment(deployment)
    return deployment


def check_obtainable(deployment: ModelDeployment) -> None:
    """Raise :class:`~holistic.core.errors.ModelError` when the deployment's weights cannot
    be had now (a Hugging Face Hub id offline and not cached); cheap, loads nothing."""
    if deployment.provider == "huggingface":
        from holistic.models import hf_local

        hf_local.check_obtainable(deployment)


def create_client(deployment: ModelDeployment) -> Client:
    factory = PROVIDERS.get(deployment.provider)
    return factory(deployment)
