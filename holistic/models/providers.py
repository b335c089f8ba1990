"""The built-in providers: each declares its facts (see :class:`~holistic.models.provider.Provider`).

Importing this module is cheap: each client's module (and its SDK, torch or llama.cpp) is
imported only when a client is created.
"""

from __future__ import annotations

from holistic.core.interfaces import Client
from holistic.core.types import ModelDeployment
from holistic.models.provider import Provider
from holistic.models.tokens import (
    GgufModel,
    HuggingFaceModel,
    OwnTokenizer,
    embedded_gguf,
    model_id_gguf,
    simple_tokenizer,
)


class SimpleProvider(Provider):
    """A deterministic model in pure Python, for tests and examples."""

    in_process = True
    tokens = OwnTokenizer(simple_tokenizer)

    def create_client(self, deployment: ModelDeployment) -> Client:
        from holistic.models.simple import create_simple_client

        return create_simple_client(deployment)


class EmbeddedProvider(Provider):
    """The small model shipped with holistic (transformers or llama.cpp)."""

    in_process = True
    needs_torch = True
    tokens = GgufModel(embedded_gguf)

    def create_client(self, deployment: ModelDeployment) -> Client:
        from holistic.models.embedded import create_embedded_client

        return create_embedded_client(deployment)


class HuggingFaceProvider(Provider):
    """A transformers checkpoint: a local folder or a Hugging Face Hub id."""

    in_process = True
    needs_torch = True
    tokens = HuggingFaceModel()

    def create_client(self, deployment: ModelDeployment) -> Client:
        from holistic.models.huggingface import create_huggingface_client

        return create_huggingface_client(deployment)

    def resolve(self, deployment: ModelDeployment) -> ModelDeployment:
        from holistic.models.hf_local import resolve_deployment

        return resolve_deployment(deployment)

    def check_obtainable(self, deployment: ModelDeployment) -> None:
        from holistic.models.hf_local import check_obtainable

        check_obtainable(deployment)


class LlamaCppProvider(Provider):
    """A local GGUF file run by llama.cpp."""

    in_process = True
    tokens = GgufModel(model_id_gguf)

    def create_client(self, deployment: ModelDeployment) -> Client:
        from holistic.models.llama_cpp import create_llama_cpp_client

        return create_llama_cpp_client(deployment)


class OpenAIProvider(Provider):
    """The OpenAI API, or any server that speaks it (``base_url``)."""

    def create_client(self, deployment: ModelDeployment) -> Client:
        from holistic.models.openai_client import create_openai_client

        return create_openai_client(deployment)


class AnthropicProvider(Provider):
    """The Anthropic Messages API."""

    def create_client(self, deployment: ModelDeployment) -> Client:
        from holistic.models.anthropic_client import create_anthropic_client

        return create_anthropic_client(deployment)


BUILTIN_PROVIDERS: dict[str, type[Provider]] = {
    "simple": SimpleProvider,
    "embedded": EmbeddedProvider,
    "huggingface": HuggingFaceProvider,
    "llama_cpp": LlamaCppProvider,
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
}
"""Name (a models file's ``provider:``) -> provider."""
