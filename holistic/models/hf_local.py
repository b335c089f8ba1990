"""``huggingface/<path or hub id>``: which one a name means, and what a local folder says
about itself — without importing torch or transformers (``--plan`` uses this).

- A model id that names an existing folder (relative to the working directory, or
  absolute: ``huggingface//abs/dir``, ``huggingface/./rel/dir``, ``huggingface/rel/dir``)
  is that folder and is never sent to the Hub.
- Anything else is a Hub id. When it is neither in the local Hugging Face cache nor
  reachable (offline), it fails at once, naming the forms a local folder takes, instead
  of letting transformers retry for a minute.
- A folder's ``config.json`` and tokenizer files give the deployment its context window
  (``max_position_embeddings`` and kin), whether it has a chat template
  (``tokenizer_config.json``'s ``chat_template`` or a ``chat_template.jinja`` file), and
  its BOS/EOS ids and dtype (the engine reads the last two from the same files when it
  loads the model: :func:`holistic.models.huggingface.load_transformers_engine`).

Registry entries written in ``--models-file`` are taken as written; only names matched
by the ``huggingface/{model_id}`` pattern are filled in from the folder.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.types import ModelDeployment

HUB_HOST = "huggingface.co"
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx")
_reachable: bool | None = None


def local_dir(model_id: str) -> Path | None:
    """The folder ``model_id`` names, or ``None`` when it names none (then it is a Hub id)."""
    path = Path(model_id).expanduser()
    return path.resolve() if path.is_dir() else None


def _hub_cached(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # a malformed repo id: not cached
        return False
    return isinstance(found, str)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hub answers a TCP connection (checked once per process; ``HF_HUB_OFFLINE`` wins)."""
    global _reachable
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    if _reachable is None:
        result: list[bool] = []

        def probe() -> None:
            try:
                socket.create_connection((HUB_HOST, 443), timeout=timeout).close()
                result.append(True)
            except OSError:
                result.append(False)

        thread = threading.Thread(target=probe, daemon=True)
        thread.start()
        thread.join(timeout + 1.0)  # name resolution has no timeout of its own
        _reachable = bool(result and result[0])
    return _reachable


def check_hub_id(name: str, model_id: str) -> None:
    """Raise at once when ``model_id`` (not a local folder) cannot be had from the Hub."""
    if _hub_cached(model_id) or hub_reachable():
        return
    absolute = Path("/" + model_id.lstrip("/"))
    hint = (
        f"; the folder {absolute} exists: write huggingface/{absolute} (two slashes) for it"
        if absolute.is_dir() and not model_id.startswith("/")
        else ""
    )
    raise ModelError(
        f"model {name!r}: {model_id!r} is not a folder here (looked for {Path.cwd() / model_id}) and, as a Hugging "
        f"Face Hub id, it is neither in the local cache nor reachable (offline){hint}. A local folder is written "
        "huggingface/<relative/dir> or huggingface//<absolute/dir>; a Hub id needs the network once (or "
        "HF_HUB_OFFLINE=0 and a filled cache)"
    )


def folder_facts(folder: Path) -> dict[str, Any]:
    """What a model folder's own files say: context window, chat template, BOS/EOS ids, dtype."""
    config = read_json_object(folder / "config.json")
    tokenizer_config = read_json_object(folder / "tokenizer_config.json")
    facts: dict[str, Any] = {}
    for key in _CONTEXT_KEYS:
        value = config.get(key)
        if isinstance(value, int) and value > 0:
            facts["context_window"] = value
            break
    else:
        limit = tokenizer_config.get("model_max_length")
        if isinstance(limit, int) and 0 < limit < 10_000_000:
            facts["context_window"] = limit
    template = tokenizer_config.get("chat_template")
    facts["chat"] = (
        bool(template) or (folder / "chat_template.jinja").is_file() or (folder / "chat_template.json").is_file()
    )
    for key in ("bos_token_id", "eos_token_id"):
        if config.get(key) is not None:
            facts[key] = config[key]
    dtype = config.get("torch_dtype") or config.get("dtype")
    if isinstance(dtype, str):
        facts["dtype"] = dtype
    return facts


def read_json_object(path: Path) -> dict[str, Any]:
    """A model folder's JSON file as a dict ({} when it is absent or not an object)."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot read as JSON: {exc}") from None
    return data if isinstance(data, dict) else {}


def resolve_deployment(deployment: ModelDeployment) -> ModelDeployment:
    """A ``huggingface/{model_id}`` pattern match, made concrete with a local folder's own
    context window and chat capability (a Hub id is left as it is: see :func:`check_obtainable`)."""
    folder = local_dir(deployment.model_id)
    if folder is None:
        return deployment
    facts = folder_facts(folder)
    if not (folder / "config.json").is_file() and not deployment.args.get("gguf_file"):
        raise ModelError(
            f"model {deployment.name!r}: the folder {folder} has no config.json (not a transformers model)"
        )
    return replace(
        deployment,
        context_window=int(facts.get("context_window", deployment.context_window)),
        capabilities=replace(deployment.capabilities, chat=bool(facts["chat"])),
    )


def check_obtainable(deployment: ModelDeployment) -> None:
    """Raise when ``deployment`` names neither a local folder (or GGUF file) nor a Hub id
    that can be had now (cached, or the Hub reachable). ``--plan`` and ``helm-run`` call it
    for every model before anything runs."""
    source = deployment.model_id
    if local_dir(source) is not None or (source.lower().endswith(".gguf") and Path(source).expanduser().is_file()):
        return
    check_hub_id(deployment.name, source)


def native_llama_supported(folder: Path) -> bool:
    """Whether ``folder`` holds a Llama model that :mod:`holistic.models.llama_native` computes
    exactly (one safetensors file, no rope scaling, no biases); read without torch."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(config, dict) or not (folder / "model.safetensors").is_file():
        return False
    rope = config.get("rope_parameters") or {}
    if config.get("rope_scaling") or (isinstance(rope, dict) and rope.get("rope_type", "default") != "default"):
        return False
    return bool(
        config.get("model_type") == "llama"
        and config.get("architectures", ["LlamaForCausalLM"]) == ["LlamaForCausalLM"]
        and config.get("hidden_act", "silu") == "silu"
        and not config.get("attention_bias", False)
        and not config.get("mlp_bias", False)
        and config.get("pretraining_tp", 1) == 1
        and not config.get("quantization_config")
    )
