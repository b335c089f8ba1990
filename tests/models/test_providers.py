"""One contract for model providers: a ``Provider`` subclass declares its facts, and the
registry, the executors and the planner read them (no code elsewhere names a provider)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from holistic.core.errors import ModelError
from holistic.core.registry import RegistrationError
from holistic.execution.ray_executor import task_shape
from holistic.models.local_engine import DeferredEngine, LocalEngine, SpecialIds
from holistic.models.registry import (
    PROVIDERS,
    ModelRegistry,
    check_obtainable,
    create_client,
    needs_torch,
    runs_in_process,
)
from holistic.models.simple import SimpleClient, SimpleTokenizer
from holistic.plugin import ModelDeployment, OwnTokenizer, Provider, register_provider


@register_provider("test_local_words")
class LocalWordsProvider(Provider):
    """A provider whose model runs in this process, fills in its pattern matches and
    refuses a model id it cannot have."""

    in_process = True
    tokens = OwnTokenizer(lambda deployment: SimpleTokenizer())

    def create_client(self, deployment: ModelDeployment) -> SimpleClient:
        return SimpleClient(deployment)

    def resolve(self, deployment: ModelDeployment) -> ModelDeployment:
        return replace(deployment, context_window=len(deployment.model_id) * 100)

    def check_obtainable(self, deployment: ModelDeployment) -> None:
        if deployment.model_id == "missing":
            raise ModelError(f"{deployment.name}: not here")


def _registry(tmp_path: Path) -> ModelRegistry:
    path = tmp_path / "models.yaml"
    path.write_text(
        "patterns:\n"
        "  - pattern: words/{model_id}\n    provider: test_local_words\n    model_id: '{model_id}'\n"
        "    capabilities: {logprobs: true, prompt_logprobs: true, chat: false, completions: true}\n",
        encoding="utf-8",
    )
    return ModelRegistry(path)


def test_the_built_in_providers_declare_where_they_run() -> None:
    local = {"simple", "embedded", "huggingface", "llama_cpp"}
    for name in PROVIDERS.names():
        if name.startswith("test_"):
            continue
        assert runs_in_process(name) == (name in local), name
        assert needs_torch(name) == (name in {"embedded", "huggingface"}), name


def test_a_plugin_providers_facts_are_what_the_runner_reads(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    deployment = registry.get("words/abc")
    assert deployment.context_window == 300  # the provider's resolve() filled the pattern match in
    assert runs_in_process("test_local_words") and not needs_torch("test_local_words")
    assert task_shape(deployment, concurrency=4).num_cpus == 1  # a Ray task reserves a CPU for it
    assert isinstance(create_client(deployment), SimpleClient)
    check_obtainable(deployment)
    with pytest.raises(ModelError, match="not here"):
        check_obtainable(registry.get("words/missing"))


def test_the_registry_refuses_what_is_not_a_provider() -> None:
    with pytest.raises(RegistrationError, match="Provider"):
        PROVIDERS.add("test_not_a_provider", dict)  # type: ignore[arg-type]


def _never_built() -> LocalEngine:
    raise AssertionError("the engine is built only for a request")


def test_a_deferred_engine_counts_nothing_before_it_is_built() -> None:
    engine = DeferredEngine("test", SimpleTokenizer(), SpecialIds(bos=None, eos=frozenset()), _never_built)
    assert engine.counters.as_dict() == {
        "forward_calls": 0,
        "forward_tokens": 0,
        "padded_positions": 0,
        "prefix_hits": 0,
        "model_loads": 0,
    }
