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
- ``batch_size``, ``max_batch_tokens``, ``prefix_cache``, ``min_shared_prefix``:
  see :class:`holistic.models.hf_engine.EngineOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.types import ModelDeployment
from holistic.models.hf_engine import EngineOptions, TransformersEngine
from holistic.models.hf_local import check_hub_id, local_dir
from holistic.models.hf_tokenizer import HFTokenizer
from holistic.models.local_client import LocalClient
from holistic.models.local_engine import SpecialIds
from holistic.models.registry import PROVIDERS
from holistic.models.weights import converted_gguf_dir, directory_fingerprint, file_sha256

_DTYPES = ("auto", "float32", "bfloat16", "float16")
_ENGINE_ARGS = ("batch_size", "max_batch_tokens", "prefix_cache", "min_shared_prefix")


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
    defaults = EngineOptions()
    return EngineOptions(
        batch_size=int(args.get("batch_size", defaults.batch_size)),
        max_batch_tokens=int(args.get("max_batch_tokens", defaults.max_batch_tokens)),
        prefix_cache=bool(args.get("prefix_cache", defaults.prefix_cache)),
        min_shared_prefix=int(args.get("min_shared_prefix", defaults.min_shared_prefix)),
    )


def load_transformers_engine(
    source: str, *, device: str = "auto", dtype: str = "auto", revision: str | None = None,
    options: EngineOptions | None = None, fingerprint: bool = True,
) -> tuple[TransformersEngine, dict[str, Any]]:
    """Load a model folder or hub id; returns the engine and its identity facts.

    ``fingerprint``: hash a local folder's weight files for the identity (skip it when
    the caller already knows the weights' hash).
    """
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ModelError(f"the huggingface provider needs transformers: {exc}") from exc
    # Our own progress display reports the run; transformers' loading bars would garble it.
    hf_logging.disable_progress_bar()
    dev = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, dev)
    kwargs: dict[str, Any] = {"revision": revision} if revision else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        model: Any = AutoModelForCausalLM.from_pretrained(source, dtype=torch_dtype, **kwargs)
    except OSError as exc:
        raise ModelError(f"cannot load a transformers model from {source!r}: {exc}") from exc
    model.to(dev)
    model.eval()
    special = _special_ids(model, tokenizer)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(special.eos, default=0)
    engine = TransformersEngine(model, HFTokenizer(tokenizer, source), special, pad_id=int(pad), options=options)
    facts: dict[str, Any] = {"dtype": str(torch_dtype).removeprefix("torch."), "device_type": dev.split(":")[0]}
    local = Path(source).expanduser()
    if local.is_dir():
        if fingerprint:
            facts["weights_sha256"] = directory_fingerprint(local)
    else:
        facts["revision"] = getattr(model.config, "_commit_hash", None) or revision
    return engine, facts


def _special_ids(model: Any, tokenizer: Any) -> SpecialIds:
    eos: set[int] = set()
    for source in (tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
        if isinstance(source, int):
            eos.add(source)
        elif isinstance(source, (list, tuple)):
            eos.update(int(x) for x in source)
    bos = getattr(model.config, "bos_token_id", None)
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
        source, device=str(args.get("device", "auto")), dtype=str(args.get("dtype", "auto")),
        revision=args.get("revision"), options=engine_options(args), fingerprint=gguf is None,
    )
    return LocalClient(deployment, engine, {**loaded, **facts})


def _check_args(deployment: ModelDeployment, args: Mapping[str, Any], known: set[str]) -> None:
    from holistic.core.errors import did_you_mean

    for key in args:
        if key not in known:
            hint = did_you_mean(key, known)
            raise ModelError(
                f"{deployment.name}: unknown provider arg {key!r}"
                + (f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else f"; known: {', '.join(sorted(known))}")
            )


PROVIDERS.add("huggingface", create_huggingface_client)
