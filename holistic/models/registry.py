"""The model registry: deployments (built-in YAML plus a user file) and provider factories."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from holistic.core.errors import SpecError, UnknownNameError
from holistic.core.interfaces import Client
from holistic.core.registry import Registry
from holistic.core.types import Capabilities, ModelDeployment

BUILTIN_MODELS_FILE = Path(__file__).with_name("models.yaml")

ClientFactory = Callable[[ModelDeployment], Client]
PROVIDERS: Registry[ClientFactory] = Registry("provider", group="holistic.models")

# provider name -> module that registers it when imported (imported lazily: heavy deps)
_PROVIDER_MODULES: dict[str, str] = {
    "simple": "holistic.models.simple",
    "embedded": "holistic.models.embedded",
    "huggingface": "holistic.models.huggingface",
    "llama_cpp": "holistic.models.llama_cpp",
    "openai": "holistic.models.openai_client",
    "anthropic": "holistic.models.anthropic_client",
}


def _deployment_from_dict(entry: Mapping[str, Any]) -> ModelDeployment:
    caps = Capabilities(**dict(entry.get("capabilities", {})))
    price = entry.get("price", {}) or {}
    return ModelDeployment(
        name=entry["name"],
        provider=entry["provider"],
        model_id=entry.get("model_id", entry["name"].split("/", 1)[-1]),
        args=dict(entry.get("args", {}) or {}),
        tokenizer=entry.get("tokenizer"),
        context_window=int(entry.get("context_window", 2048)),
        max_output_tokens=int(entry.get("max_output_tokens", 512)),
        capabilities=caps,
        price_input_per_million=float(price.get("input_per_million", 0.0)),
        price_output_per_million=float(price.get("output_per_million", 0.0)),
        api_key_env=entry.get("api_key_env"),
        description=entry.get("description", ""),
    )


def load_models_file(path: Path) -> dict[str, ModelDeployment]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise SpecError(
            f"YAML syntax error: {getattr(exc, 'problem', exc)}",
            file=str(path),
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    out: dict[str, ModelDeployment] = {}
    for entry in data.get("models", []):
        dep = _deployment_from_dict(entry)
        out[dep.name] = dep
    return out


class ModelRegistry:
    """All known deployments: built-ins, then the user's file (which may override)."""

    def __init__(self, user_file: Path | None = None) -> None:
        self.deployments = load_models_file(BUILTIN_MODELS_FILE)
        if user_file is not None:
            self.deployments.update(load_models_file(user_file))

    def get(self, name: str) -> ModelDeployment:
        if name in self.deployments:
            return self.deployments[name]
        dynamic = _dynamic_deployment(name)
        if dynamic is not None:
            return dynamic
        raise UnknownNameError("model", name, self.deployments)

    def names(self) -> list[str]:
        return sorted(self.deployments)


def _dynamic_deployment(name: str) -> ModelDeployment | None:
    """``huggingface/<dir or hub id>``, ``llama_cpp/<path.gguf>`` and ``openai/<model>``
    work without a registry entry (with conservative defaults)."""
    provider, _, rest = name.partition("/")
    if not rest:
        return None
    if provider == "huggingface":
        return ModelDeployment(
            name=name, provider=provider, model_id=rest,
            capabilities=Capabilities(logprobs=True, prompt_logprobs=True, chat=False),
        )
    if provider == "llama_cpp":
        return ModelDeployment(
            name=name, provider=provider, model_id=rest,
            capabilities=Capabilities(logprobs=True, prompt_logprobs=True, chat=True),
        )
    return None


def create_client(deployment: ModelDeployment) -> Client:
    module = _PROVIDER_MODULES.get(deployment.provider)
    if module is not None and deployment.provider not in PROVIDERS:
        importlib.import_module(module)
    factory = PROVIDERS.get(deployment.provider)
    return factory(deployment)
