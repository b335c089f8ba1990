"""``huggingface/<local dir or hub id>``: causal LMs through transformers.

``huggingface/rel/dir``, ``huggingface/./rel/dir`` and ``huggingface//abs/dir`` name local
folders (never sent to the Hub); their context window and chat template come from the
folder's own files (:mod:`holistic.models.hf_local`), and BOS/EOS from its config and
tokenizer when the model loads.

Deployment args (all optional):

- ``device``: ``auto`` (cuda, then mps, then cpu), ``cuda``, ``cuda:1``, ``mps``, ``cpu``;
- ``dtype``: ``auto`` (float32 on cpu, bfloat16 on cuda when supported, else float16),
  ``float32``, ``bfloat16``, ``float16``;
- ``revision``: a hub revision (branch, tag or commit);
- ``gguf_file``: a GGUF file inside the folder (dequantised once and cached, see
  :mod:`holistic.models.weights`); a model id ending in ``.gguf`` is such a file too;
- ``batch_size``, ``max_batch_tokens``, ``row_tokens``, ``memory_mb``, ``decode_memory_mb``, ``prefix_cache``,
  ``min_shared_prefix``, ``prefix_store_mb``: see :class:`holistic.models.hf_engine.EngineOptions`.

The tokenizer and config load at once (prompts are built with the tokenizer); the
weights load on the first request that misses the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.types import ModelDeployment
from holistic.models.hf_engine import EngineOptions, TransformersEngine
from holistic.models.hf_local import check_hub_id, local_dir
from holistic.models.hf_tokenizer import HFTokenizer
from holistic.models.local_client import LocalClient
from holistic.models.local_engine import SpecialIds
from holistic.models.weights import converted_gguf_dir, directory_fingerprint, file_sha256

_DTYPES = ("auto", "float32", "bfloat16", "float16")
_ENGINE_ARGS = tuple(f.name for f in fields(EngineOptions))


def resolve_device(name: str) -> str:
    """``auto`` -> the best available device; anything else is checked and returned."""
    import torch

    if name == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ModelError(f"device {name!r} asked for but CUDA is not available (use device: auto or cpu)")
    if name == "mps" and not (getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()):
        raise ModelError("device 'mps' asked for but MPS is not available (use device: auto or cpu)")
    if name != "cpu" and not name.startswith(("cuda", "mps")):
        raise ModelError(f"unknown device {name!r}; expected auto, cpu, cuda, cuda:N or mps")
    return name


def resolve_dtype(name: str, device: str) -> Any:
    import torch

    if name not in _DTYPES:
        raise ModelError(f"unknown dtype {name!r}; expected one of {', '.join(_DTYPES)}")
    if name == "auto":
        if device == "cpu":
            return torch.float32
        if device.startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float16
    return getattr(torch, name)


def engine_options(args: Mapping[str, Any]) -> EngineOptions:
    """The engine options among deployment ``args`` (the rest keep their defaults)."""
    defaults = EngineOptions()
    values: dict[str, Any] = {}
    for f in fields(EngineOptions):
        if f.name in args:
            kind = type(getattr(defaults, f.name))
            values[f.name] = bool(args[f.name]) if kind is bool else int(args[f.name])
    return EngineOptions(**values)


def load_transformers_engine(
    source: str,
    *,
    device: str = "auto",
    dtype: str = "auto",
    revision: str | None = None,
    options: EngineOptions | None = None,
    fingerprint: bool = True,
) -> tuple[TransformersEngine, dict[str, Any]]:
    """Load a model folder or hub id; returns the engine and its identity facts.

    ``fingerprint``: hash a local folder's weight files for the identity (skip it when
    the caller already knows the weights' hash).
    """
    try:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ModelError(f"the huggingface provider needs transformers: {exc}") from exc
    # Our own progress display reports the run; transformers' loading bars would garble it.
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    dev = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, dev)
    kwargs: dict[str, Any] = {"revision": revision} if revision else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        config = AutoConfig.from_pretrained(source, **kwargs)
        generation = _generation_config(source, kwargs)
    except OSError as exc:
        raise ModelError(f"cannot load a transformers model from {source!r}: {exc}") from exc

    def load() -> Any:
        # Called by the engine on the first request that misses the cache: a fully
        # cached rerun never pays for loading the weights.
        try:
            model: Any = AutoModelForCausalLM.from_pretrained(source, dtype=torch_dtype, **kwargs)
        except OSError as exc:
            raise ModelError(f"cannot load a transformers model from {source!r}: {exc}") from exc
        model.to(dev)
        model.eval()
        return model

    special = _special_ids(config, generation, tokenizer)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(special.eos, default=0)
    engine = TransformersEngine(load, HFTokenizer(tokenizer, source), special, pad_id=int(pad), options=options)
    facts: dict[str, Any] = {"dtype": str(torch_dtype).removeprefix("torch."), "device_type": dev.split(":")[0]}
    local = Path(source).expanduser()
    if local.is_dir():
        if fingerprint:
            facts["weights_sha256"] = directory_fingerprint(local)
    else:
        facts["revision"] = getattr(config, "_commit_hash", None) or revision
    return engine, facts


def _generation_config(source: str, kwargs: Mapping[str, Any]) -> Any:
    from transformers import GenerationConfig

    try:
        return GenerationConfig.from_pretrained(source, **kwargs)
    except OSError:  # no generation_config.json: the model config's ids apply
        return None


def _special_ids(config: Any, generation: Any, tokenizer: Any) -> SpecialIds:
    eos: set[int] = set()
    sources = (tokenizer.eos_token_id, getattr(generation, "eos_token_id", None), getattr(config, "eos_token_id", None))
    for source in sources if generation is None else sources[:2]:
        if isinstance(source, int):
            eos.add(source)
        elif isinstance(source, (list, tuple)):
            eos.update(int(x) for x in source)
    bos = getattr(config, "bos_token_id", None)
    if bos is None:
        bos = tokenizer.bos_token_id
    if bos is None and eos:
        bos = min(eos)
    return SpecialIds(bos=int(bos) if bos is not None else None, eos=frozenset(eos))


def create_huggingface_client(deployment: ModelDeployment) -> LocalClient:
    args = dict(deployment.args)
    _check_args(deployment, args, {"device", "dtype", "revision", "gguf_file", *_ENGINE_ARGS})
    source = deployment.model_id
    facts: dict[str, Any] = {}
    gguf: Path | None = None
    if args.get("gguf_file"):
        gguf = Path(source).expanduser() / str(args["gguf_file"])
    elif source.lower().endswith(".gguf"):
        gguf = Path(source).expanduser()  # huggingface/<path.gguf> works too
    if gguf is not None:
        if not gguf.is_file():
            raise ModelError(f"{deployment.name}: GGUF file {gguf} does not exist")
        facts["weights_sha256"] = file_sha256(gguf)
        source = str(converted_gguf_dir(gguf))
    elif (folder := local_dir(source)) is not None:
        source = str(folder)  # a folder that exists is never sent to the Hub
    else:
        check_hub_id(deployment.name, source)  # offline: fail now, not after a minute of retries
    engine, loaded = load_transformers_engine(
        source,
        device=str(args.get("device", "auto")),
        dtype=str(args.get("dtype", "auto")),
        revision=args.get("revision"),
        options=engine_options(args),
        fingerprint=gguf is None,
    )
    return LocalClient(deployment, engine, {**loaded, **facts})


def _check_args(deployment: ModelDeployment, args: Mapping[str, Any], known: set[str]) -> None:
    from holistic.core.errors import did_you_mean

    for key in args:
        if key not in known:
            hint = did_you_mean(key, known)
            raise ModelError(
                f"{deployment.name}: unknown provider arg {key!r}"
                + (
                    f"; did you mean {' or '.join(repr(h) for h in hint)}?"
                    if hint
                    else f"; known: {', '.join(sorted(known))}"
                )
            )
