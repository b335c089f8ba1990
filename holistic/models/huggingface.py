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
  ``min_shared_prefix``, ``prefix_store_mb``, ``draft_tokens``, ``native``: see
  :class:`holistic.models.engine_options.EngineOptions` (``native: false`` runs a Llama
  folder through transformers instead of :mod:`holistic.models.llama_native`).

The tokenizer and config load at once (prompts are built with the tokenizer); the
weights load on the first request that misses the cache.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holistic.core.errors import ModelError
from holistic.core.types import ModelDeployment
from holistic.models.engine_options import EngineOptions
from holistic.models.folder_tokenizer import FolderTokenizer, has_tokenizer_files
from holistic.models.hf_local import check_hub_id, local_dir, native_llama_supported, read_json_object
from holistic.models.hf_tokenizer import HFTokenizer
from holistic.models.local_client import LocalClient
from holistic.models.local_engine import DeferredEngine, LocalEngine, SpecialIds
from holistic.models.weights import converted_gguf_dir, directory_fingerprint, file_sha256

if TYPE_CHECKING:
    from holistic.models.hf_engine import TransformersEngine

_DTYPES = ("auto", "float32", "bfloat16", "float16")
_ENGINE_ARGS = tuple(f.name for f in fields(EngineOptions))


def _cpu_only_torch() -> bool:
    """Whether the installed torch is a CPU build on a platform without MPS, known from its
    version string (``2.13.0+cpu``) without importing it: ``auto`` then means the CPU."""
    if sys.platform == "darwin":
        return False
    try:
        return "+cpu" in importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return False


def resolve_device(name: str) -> str:
    """``auto`` -> the best available device; anything else is checked and returned."""
    if name == "auto" and _cpu_only_torch():
        return "cpu"
    if name == "cpu":
        return name
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


def resolve_dtype(name: str, device: str) -> str:
    """The dtype's name (``float32``, ...) for ``device``; ``auto`` picks one."""
    if name not in _DTYPES:
        raise ModelError(f"unknown dtype {name!r}; expected one of {', '.join(_DTYPES)}")
    if name != "auto":
        return name
    if device == "cpu":
        return "float32"
    import torch

    if device.startswith("cuda") and torch.cuda.is_bf16_supported():
        return "bfloat16"
    return "float16"


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
    deferred: bool = False,
) -> tuple[LocalEngine, dict[str, Any]]:
    """Load a model folder or hub id; returns the engine and its identity facts.

    ``fingerprint``: hash a local folder's weight files for the identity (skip it when
    the caller already knows the weights' hash). ``deferred``: for a local folder with a
    ``tokenizer.json``, read the tokenizer, chat template and special ids from its files
    and import transformers (and torch) only when a request misses the cache (see
    :class:`~holistic.models.local_engine.DeferredEngine`); callers use it where the
    folder's tokenizer is known to encode as transformers' does.
    """
    dev = resolve_device(device)
    dtype_name = resolve_dtype(dtype, dev)
    kwargs: dict[str, Any] = {"revision": revision} if revision else {}
    facts: dict[str, Any] = {"dtype": dtype_name, "device_type": dev.split(":")[0]}
    local = Path(source).expanduser()
    if local.is_dir() and fingerprint:
        facts["weights_sha256"] = directory_fingerprint(local)
    if deferred and local.is_dir() and has_tokenizer_files(local) and (local / "config.json").is_file():
        tokenizer = FolderTokenizer(local, source)
        special, pad = special_ids_from_files(local, tokenizer)

        def build() -> LocalEngine:
            if _runs_native(options, local):
                # Nothing of transformers is needed: the folder's tokenizer, the ids read
                # above and holistic's own Llama.
                from holistic.models.hf_engine import TransformersEngine

                return TransformersEngine(
                    lambda: _load_native(local, dtype_name, dev), tokenizer, special, pad_id=pad, options=options
                )
            engine, _ = _transformers_engine(source, dev, dtype_name, kwargs, options)
            if engine.special_ids() != special or engine.pad_id != pad:
                raise ModelError(f"{source}: special token ids read from its files differ from transformers' reading")
            return engine

        return DeferredEngine("transformers", tokenizer, special, build), facts
    engine, config = _transformers_engine(source, dev, dtype_name, kwargs, options)
    if not local.is_dir():
        facts["revision"] = getattr(config, "_commit_hash", None) or revision
    return engine, facts


def _transformers_engine(
    source: str, dev: str, dtype_name: str, kwargs: dict[str, Any], options: EngineOptions | None
) -> tuple[TransformersEngine, Any]:
    """The engine over transformers' tokenizer and (lazily loaded) model; and the config."""
    import torch

    from holistic.models.hf_engine import TransformersEngine

    try:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ModelError(f"the huggingface provider needs transformers: {exc}") from exc
    # Our own progress display reports the run; transformers' loading bars would garble it.
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    torch_dtype = getattr(torch, dtype_name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        config = AutoConfig.from_pretrained(source, **kwargs)
        generation = _generation_config(source, kwargs)
    except OSError as exc:
        raise ModelError(f"cannot load a transformers model from {source!r}: {exc}") from exc

    folder = Path(source).expanduser()
    native = not kwargs and _runs_native(options, folder)

    def load() -> Any:
        # Called by the engine on the first request that misses the cache: a fully
        # cached rerun never pays for loading the weights.
        if native:
            return _load_native(folder, dtype_name, dev)
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
    return engine, config


def _runs_native(options: EngineOptions | None, folder: Path) -> bool:
    """Whether the model in ``folder`` runs on holistic's own Llama (see ``EngineOptions.native``)."""
    return (options or EngineOptions()).native and native_llama_supported(folder)


def _load_native(folder: Path, dtype_name: str, device: str) -> Any:
    import torch

    from holistic.models.llama_native import load_native_llama

    return load_native_llama(folder, getattr(torch, dtype_name), device)


def special_ids_from_files(folder: Path, tokenizer: FolderTokenizer) -> tuple[SpecialIds, int]:
    """BOS/EOS and the padding id from a model folder's JSON files, as :func:`_special_ids`
    reads them through transformers: EOS from the tokenizer and ``generation_config.json``
    (``config.json`` when there is none), BOS from ``config.json`` then the tokenizer."""
    config = read_json_object(folder / "config.json")
    generation_path = folder / "generation_config.json"
    generation = read_json_object(generation_path) if generation_path.is_file() else None
    eos: set[int] = set()
    sources = [tokenizer.token_id(tokenizer.special_text("eos_token"))]
    sources.append(generation.get("eos_token_id") if generation is not None else config.get("eos_token_id"))
    for value in sources:
        if isinstance(value, int):
            eos.add(value)
        elif isinstance(value, list):
            eos.update(int(x) for x in value)
    bos = config.get("bos_token_id")
    if bos is None:
        bos = tokenizer.token_id(tokenizer.special_text("bos_token"))
    if bos is None and eos:
        bos = min(eos)
    pad = tokenizer.token_id(tokenizer.special_text("pad_token"))
    special = SpecialIds(bos=int(bos) if bos is not None else None, eos=frozenset(eos))
    return special, int(pad if pad is not None else min(eos, default=0))


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
