"""The model registry file: built-ins, a user file, patterns, and errors that point at the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from holistic.core.errors import SpecError, UnknownNameError
from holistic.models.registry import BUILTIN_MODELS_FILE, ModelRegistry, load_models_file


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        ModelRegistry(write(tmp_path, text))
    return info.value


def test_builtin_file_is_valid_and_prices_api_models() -> None:
    deployments = load_models_file(BUILTIN_MODELS_FILE)
    mini = deployments["openai/gpt-4o-mini"]
    assert (mini.price_input_per_million, mini.price_output_per_million) == (0.15, 0.60)
    assert mini.capabilities.chat and mini.capabilities.logprobs and not mini.capabilities.prompt_logprobs
    haiku = deployments["anthropic/claude-3-5-haiku-20241022"]
    assert haiku.api_key_env == "ANTHROPIC_API_KEY" and not haiku.capabilities.logprobs
    assert deployments["openai/davinci-002"].capabilities.prompt_logprobs


def test_the_shipped_file_passes_the_full_schema_and_libyaml_reads_it_as_python_does() -> None:
    """A run reads the shipped file with libyaml and without the schema check (start-up time):
    here it is checked against the schema, itself valid, and read both ways to the same data
    and the same line and column of every value."""
    import json

    import jsonschema

    from holistic.core.located_yaml import load_source
    from holistic.models.registry import known_providers
    from holistic.models.registry_file import SCHEMA_PATH, read_registry_file

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema).check_schema(schema)
    checked = read_registry_file(BUILTIN_MODELS_FILE, known_providers())  # schema and every other check
    assert checked.deployments == load_models_file(BUILTIN_MODELS_FILE)
    python, libyaml = load_source(BUILTIN_MODELS_FILE), load_source(BUILTIN_MODELS_FILE, fast=True)
    assert libyaml.data == python.data
    assert dict(libyaml.locations.items()) == dict(python.locations.items())
    assert len(dict(python.locations.items())) > 100


def test_a_user_file_is_still_checked_against_the_schema(tmp_path: Path) -> None:
    error = error_of(tmp_path, "models:\n  - name: my/model\n    provider: openai\n    model_idd: x\n")
    assert "model_idd" in str(error) and error.line == 4


def test_user_entry_for_an_openai_compatible_server_and_override(tmp_path: Path) -> None:
    registry = ModelRegistry(
        write(
            tmp_path,
            """
models:
  - name: vllm/qwen2.5-0.5b
    provider: openai
    model_id: Qwen/Qwen2.5-0.5B-Instruct
    args: {base_url: "http://127.0.0.1:8000/v1", max_concurrency: 8}
    capabilities: {logprobs: true, prompt_logprobs: true, chat: true, completions: true}
    context_window: 32768
  - name: openai/gpt-4o-mini
    provider: openai
    price: {input_per_million: 0.075, output_per_million: 0.30}
""",
        )
    )
    qwen = registry.get("vllm/qwen2.5-0.5b")
    assert qwen.model_id == "Qwen/Qwen2.5-0.5B-Instruct" and qwen.args["base_url"] == "http://127.0.0.1:8000/v1"
    assert qwen.capabilities.prompt_logprobs and qwen.api_key_env is None
    assert registry.get("openai/gpt-4o-mini").price_input_per_million == 0.075  # the user file wins
    assert registry.get("openai/gpt-4o-mini").model_id == "gpt-4o-mini"  # default: name after the first '/'


def test_patterns_user_first_then_builtin(tmp_path: Path) -> None:
    registry = ModelRegistry(
        write(
            tmp_path,
            """
patterns:
  - pattern: ollama/{model_id}
    provider: openai
    args: {base_url: "http://127.0.0.1:11434/v1"}
    capabilities: {logprobs: false, prompt_logprobs: false, chat: true, completions: true}
""",
        )
    )
    llama = registry.get("ollama/llama3.2:1b")
    assert llama.provider == "openai" and llama.model_id == "llama3.2:1b" and not llama.capabilities.logprobs
    new = registry.get("openai/gpt-5-nano")  # built-in pattern: any OpenAI model name
    assert new.model_id == "gpt-5-nano" and new.api_key_env == "OPENAI_API_KEY"
    assert registry.get("huggingface/org/model").model_id == "org/model"


def test_unknown_model_suggests_near_names() -> None:
    with pytest.raises(UnknownNameError) as info:
        ModelRegistry().get("embeded/smollm2-135m-instruct")
    assert "embedded/smollm2-135m-instruct" in str(info.value)


def test_unknown_field_names_line_path_and_nearest_field(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """models:
  - name: local/a
    provider: openai
    args: {base_url: "http://127.0.0.1:8000/v1"}
    capabilities: {logprob: true}
""",
    )
    assert error.file is not None and error.file.endswith("models.yaml") and error.line == 5
    assert error.path == "models[0].capabilities.logprob"
    assert "did you mean 'logprobs'" in str(error)


def test_unknown_provider_arg_and_misspelt_field(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """models:
  - name: local/a
    provider: openai
    args:
      base_url: "http://127.0.0.1:8000/v1"
      echo_max_token: 0
""",
    )
    assert (error.line, error.path) == (6, "models[0].args.echo_max_token") and "'echo_max_tokens'" in str(error)
    error = error_of(tmp_path, "models:\n  - name: a/b\n    providr: openai\n")
    assert error.line == 3 and "did you mean 'provider'" in str(error)


def test_unknown_provider_wrong_type_duplicate_and_enum(tmp_path: Path) -> None:
    error = error_of(tmp_path, "models:\n  - name: a/b\n    provider: opnai\n")
    assert error.line == 3 and error.path == "models[0].provider" and "did you mean 'openai'" in str(error)
    error = error_of(tmp_path, "models:\n  - name: a/b\n    provider: openai\n    context_window: lots\n")
    assert error.line == 4 and "integer" in str(error)
    error = error_of(tmp_path, "models:\n  - {name: a/b, provider: openai}\n  - {name: a/b, provider: anthropic}\n")
    assert error.line == 3 and "duplicate" in str(error)
    error = error_of(
        tmp_path, "models:\n  - name: a/b\n    provider: openai\n    args: {max_tokens_field: max_token}\n"
    )
    assert error.line == 4 and "did you mean 'max_tokens'" in str(error)


def test_secrets_and_syntax_errors(tmp_path: Path) -> None:
    error = error_of(tmp_path, "models:\n  - name: a/b\n    provider: openai\n    args:\n      api_key: sk-abc\n")
    assert error.line == 5 and "api_key_env" in str(error) and "sk-abc" not in str(error)
    error = error_of(tmp_path, "models:\n  - name: a/b\n    provider: [openai\n")
    assert error.line is not None and error.line >= 3 and "YAML" in str(error)
    error = error_of(tmp_path, "patterns:\n  - pattern: vllm/model\n    provider: openai\n")
    assert error.line == 2 and "model_id" in str(error)


def test_an_unchanged_models_file_is_read_once_and_a_changed_one_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import holistic.models.registry as registry
    from holistic.models.registry_file import read_registry_file as real

    reads: list[Path] = []

    def counting(path: Path, providers: Any, display: str | None = None, *, shipped: bool = False) -> Any:
        reads.append(path)
        return real(path, providers, display, shipped=shipped)

    monkeypatch.setattr(registry, "read_registry_file", counting)
    user = tmp_path / "models.yaml"
    user.write_text("models:\n  - name: local/a\n    provider: simple\n    model_id: echo\n", encoding="utf-8")
    first = registry.ModelRegistry(user)
    second = registry.ModelRegistry(user)
    assert "local/a" in first and "local/a" in second
    assert reads.count(user) == 1 and reads.count(registry.BUILTIN_MODELS_FILE) <= 1
    second.deployments.pop("local/a")  # a registry's entries are its own copy
    assert "local/a" in registry.ModelRegistry(user)
    user.write_text("models:\n  - name: local/bb\n    provider: simple\n    model_id: echo\n", encoding="utf-8")
    changed = registry.ModelRegistry(user)
    assert "local/bb" in changed and "local/a" not in changed and reads.count(user) == 2
