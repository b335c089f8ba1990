"""``llama_cpp/<path.gguf>``: a GGUF file through llama-cpp-python (optional extra).

Deployment args (all optional): ``n_threads`` (default: llama.cpp's choice),
``n_batch`` (prompt tokens per evaluation step, default 512), ``extra_buffer_types``
(llama.cpp weight repacking / AMX kernels, default off: see
:mod:`holistic.models.llama_cpp_engine`). The context size is the
deployment's ``context_window``. llama-cpp-python is imported only when a client is
created; without it the error says how to install it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.types import ModelDeployment
from holistic.models.engine_options import refuse_unknown_args
from holistic.models.llama_cpp_engine import LlamaCppEngine
from holistic.models.local_client import LocalClient
from holistic.models.weights import file_sha256

_KNOWN_ARGS = ("n_threads", "n_batch", "extra_buffer_types")


def load_llama_cpp_engine(path: Path, *, n_ctx: int, args: dict[str, Any]) -> tuple[LlamaCppEngine, dict[str, Any]]:
    """The engine and its identity facts (weights hash, llama-cpp-python version)."""
    engine = LlamaCppEngine(
        path,
        n_ctx=n_ctx,
        n_threads=int(args["n_threads"]) if args.get("n_threads") is not None else None,
        n_batch=int(args.get("n_batch", 512)),
        extra_buffer_types=bool(args.get("extra_buffer_types", False)),
    )
    return engine, {"weights_sha256": file_sha256(path), "engine_version": engine.version}


def create_llama_cpp_client(deployment: ModelDeployment) -> LocalClient:
    args = dict(deployment.args)
    refuse_unknown_args(
        deployment.name, args, _KNOWN_ARGS, problem="unknown provider arg {key}", listing="known: {known}"
    )
    path = Path(deployment.model_id).expanduser()
    if path.suffix.lower() != ".gguf":
        raise ModelError(f"{deployment.name}: llama_cpp models are GGUF files; {str(path)!r} does not end in .gguf")
    if not path.is_file():
        raise ModelError(f"{deployment.name}: GGUF file {path} does not exist")
    engine, facts = load_llama_cpp_engine(path, n_ctx=deployment.context_window, args=args)
    return LocalClient(deployment, engine, facts)
