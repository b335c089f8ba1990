"""A provider declares how its models count tokens; counting and ``--plan`` follow it, so a
provider added through the plugin surface is counted in its own tokens without edits
elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.core.types import Request
from holistic.execution.prompt_sizes import counter_for
from holistic.models.counting import counting_tokenizer, local_tokenizer
from holistic.models.registry import ModelRegistry, token_counting
from holistic.models.simple import SimpleTokenizer, create_simple_client
from holistic.models.tokens import API_TOKENS, GgufModel, HuggingFaceModel, OwnTokenizer
from holistic.plugin import Client, ModelDeployment, Provider, RegistrationError, register_provider


class WordTokenizer(SimpleTokenizer):
    """Whitespace-separated words as tokens."""

    def count(self, text: str) -> int:
        return len(text.split())


def _models_file(tmp_path: Path, provider: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n"
        f"  - name: test/{provider}\n"
        f"    provider: {provider}\n"
        "    model_id: words\n"
        "    context_window: 2048\n"
        "    capabilities: {logprobs: false, prompt_logprobs: false, chat: true, completions: true}\n",
        encoding="utf-8",
    )
    return path


@register_provider("test_words")
class _WordsProvider(Provider):
    tokens = OwnTokenizer(lambda deployment: WordTokenizer())

    def create_client(self, deployment: ModelDeployment) -> Client:
        return create_simple_client(deployment)


@register_provider("test_silent")
class _SilentProvider(Provider):
    def create_client(self, deployment: ModelDeployment) -> Client:
        return create_simple_client(deployment)


def test_a_plugin_provider_that_declares_its_tokenizer_is_counted_in_its_tokens(tmp_path: Path) -> None:
    registry = ModelRegistry(_models_file(tmp_path, "test_words"))
    counter = counting_tokenizer("test/test_words", registry)
    assert not counter.fallback and counter.counter.count("three short words") == 3
    deployment = registry.get("test/test_words")
    assert isinstance(local_tokenizer(deployment), WordTokenizer)
    _, count, exact = counter_for(deployment)
    assert exact and count(Request(model=deployment.name, prompt="a b c d")) == 4


def test_a_plugin_provider_without_a_declaration_is_estimated(tmp_path: Path) -> None:
    registry = ModelRegistry(_models_file(tmp_path, "test_silent"))
    assert token_counting("test_silent") is API_TOKENS
    assert counting_tokenizer("test/test_silent", registry).fallback
    assert not counter_for(registry.get("test/test_silent"))[2]


def test_the_built_in_providers_declare_their_counting() -> None:
    assert isinstance(token_counting("simple"), OwnTokenizer) and not token_counting("simple").engine_accounting
    assert isinstance(token_counting("embedded"), GgufModel) and token_counting("embedded").engine_accounting
    assert isinstance(token_counting("llama_cpp"), GgufModel)
    assert isinstance(token_counting("huggingface"), HuggingFaceModel)
    assert token_counting("openai") is API_TOKENS and token_counting("anthropic") is API_TOKENS


def test_a_bare_client_factory_is_refused_naming_the_provider_form() -> None:
    with pytest.raises(RegistrationError, match="a bare client factory is no longer accepted: subclass Provider"):
        register_provider("test_factory")(create_simple_client)  # type: ignore[type-var]
