"""``huggingface/<path or hub id>`` names resolved before anything runs: a folder's own
facts, and a Hub id that cannot be had offline failing at once with the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holistic.core.errors import ModelError
from holistic.models.registry import ModelRegistry, check_obtainable


def _folder(root: Path, *, window: int = 8192, template: str | None = "{{ messages }}") -> Path:
    folder = root / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "max_position_embeddings": window,
                "bos_token_id": 1,
                "eos_token_id": 2,
                "torch_dtype": "bfloat16",
            }
        ),
        encoding="utf-8",
    )
    tokenizer: dict[str, Any] = {"model_max_length": 1000000000000000019884624838656}
    if template is not None:
        tokenizer["chat_template"] = template
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    return folder


def test_relative_and_absolute_folders_take_their_own_context_window_and_chat_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    registry = ModelRegistry()
    for name in ("huggingface/my-model", "huggingface/./my-model", f"huggingface/{folder}"):
        deployment = registry.get(name)
        assert deployment.context_window == 8192 and deployment.capabilities.chat, name
    (folder / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    assert not ModelRegistry().get("huggingface/my-model").capabilities.chat


def test_an_unreachable_hub_id_fails_at_once_and_names_the_folder_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    folder = _folder(tmp_path)
    monkeypatch.chdir(tmp_path / "my-model")  # the folder is not relative to here
    relative_name = str(folder).lstrip("/")  # e.g. tmp/.../my-model, one slash after the provider
    registry = ModelRegistry()
    with pytest.raises(ModelError, match=rf"write huggingface/{folder} \(two slashes\)"):
        check_obtainable(registry.get(f"huggingface/{relative_name}"))
    with pytest.raises(ModelError, match=r"neither in the local cache nor reachable \(offline\)"):
        check_obtainable(registry.get("huggingface/some-org/some-model"))
    check_obtainable(registry.get(f"huggingface/{folder}"))  # the folder itself is fine


def test_plan_resolves_every_model_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from holistic.cli.run import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: s\nmodels:\n  - simple/echo\n  - huggingface/no-such/model\nruns:\n  - scenario: arithmetic\n",
        encoding="utf-8",
    )
    assert main([str(spec), "--plan"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:4:" in err and "huggingface//<absolute/dir>" in err
