"""Counting context length in the evaluated model's own tokens.

A scenario cannot see the model it will be run on, so the haystack scenario takes a
tokenizer reference in its args and resolves it here, loading only the tokenizer
(never the weights):

- a model registry name (``embedded/smollm2-135m-instruct``, ``huggingface/...``):
  the tokenizer of that deployment: the GGUF's own for ``embedded`` and GGUF-based
  ``llama_cpp``/``huggingface`` deployments (saved once under
  ``<cache>/tokenizers/<sha256 of the GGUF>/`` so later runs load it in seconds), the
  transformers tokenizer for ``huggingface``, ``SimpleTokenizer`` for ``simple``, and
  the registry's ``tokenizer`` field for API models that name one;
- a local path: a tokenizer folder (``tokenizer.json`` ...) or a ``.gguf`` file;
- ``null`` / ``chars/4``: no tokenizer, 4 characters = 1 token.

API models without a published tokenizer fall back to ``chars/4`` too. Every fallback
is *flagged*: :attr:`LengthUnit.fallback` is true and the reason is kept, and the
scenario writes both into each instance's metadata (``tokenizer_fallback``,
``tokenizer_fallback_reason``), so lengths measured in characters are never passed off
as tokens.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
FALLBACK_NAME = "chars/4"
_LOCAL_PROVIDERS = ("embedded", "huggingface", "llama_cpp", "simple")


class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class CharsPerToken:
    """The fallback: ``ceil(len(text) / 4)``."""

    def count(self, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class LengthUnit:
    """A token counter plus what it is."""

    counter: TokenCounter
    name: str
    """The tokenizer reference as given, or ``chars/4``."""
    fallback: bool = False
    """Lengths are ``chars/4`` estimates, not the model's tokens."""
    reason: str | None = None
    """Why the fallback was used."""


def fallback_unit(reason: str) -> LengthUnit:
    return LengthUnit(CharsPerToken(), FALLBACK_NAME, fallback=True, reason=reason)


@lru_cache(maxsize=8)
def resolve_length_unit(reference: str | None) -> LengthUnit:
    """The counter for ``reference`` (see the module docstring). Cached per process."""
    if reference is None or reference == FALLBACK_NAME:
        return fallback_unit("no tokenizer was given (scenario arg 'tokenizer')")
    path = Path(reference).expanduser()
    if path.exists():
        return LengthUnit(_hf_counter(_load_local(path)), reference)
    from holistic.models.registry import ModelRegistry

    deployment = ModelRegistry().get(reference)  # UnknownNameError suggests the nearest names
    provider = deployment.provider
    if provider == "simple":
        from holistic.models.simple import SimpleTokenizer

        return LengthUnit(SimpleTokenizer(), reference)
    if provider == "embedded":
        from holistic.models.weights import embedded_gguf_path

        return LengthUnit(_hf_counter(_gguf_tokenizer(embedded_gguf_path())), reference)
    args: dict[str, Any] = dict(deployment.args)
    if provider == "llama_cpp":
        return LengthUnit(_hf_counter(_gguf_tokenizer(Path(deployment.model_id).expanduser())), reference)
    if provider == "huggingface":
        if args.get("gguf_file"):
            gguf = Path(deployment.model_id).expanduser() / str(args["gguf_file"])
            return LengthUnit(_hf_counter(_gguf_tokenizer(gguf)), reference)
        source = deployment.tokenizer or deployment.model_id
        return LengthUnit(_hf_counter(_auto_tokenizer(source, revision=args.get("revision"))), reference)
    if deployment.tokenizer:
        try:
            return LengthUnit(_hf_counter(_auto_tokenizer(deployment.tokenizer)), reference)
        except Exception as exc:
            logger.warning("tokenizer %s of %s cannot be loaded (%s); counting chars/4", deployment.tokenizer, reference, exc)
            return fallback_unit(f"tokenizer {deployment.tokenizer!r} of {reference} could not be loaded: {exc}")
    return fallback_unit(f"{reference} ({provider}) names no local tokenizer in the model registry")


class _HFCounter:
    def __init__(self, tokenizer: Any) -> None:
        from holistic.models.hf_tokenizer import HFTokenizer

        self.tokenizer = HFTokenizer(tokenizer)

    def count(self, text: str) -> int:
        return self.tokenizer.count(text)


def _hf_counter(tokenizer: Any) -> TokenCounter:
    return _HFCounter(tokenizer)


def _auto_tokenizer(source: str, revision: Any = None) -> Any:
    from transformers import AutoTokenizer

    kwargs = {"revision": revision} if revision else {}
    return AutoTokenizer.from_pretrained(source, **kwargs)


def _load_local(path: Path) -> Any:
    if path.is_file() and path.suffix == ".gguf":
        return _gguf_tokenizer(path)
    if path.is_dir():
        return _auto_tokenizer(str(path))
    raise ValueError(f"tokenizer {path}: expected a tokenizer folder or a .gguf file")


def _gguf_tokenizer(gguf: Path) -> Any:
    """The tokenizer stored in a GGUF, saved once as a small tokenizer folder in the cache."""
    from holistic.core.errors import ModelError
    from holistic.models.weights import cache_root, file_sha256

    if not gguf.is_file():
        raise ModelError(f"GGUF file {gguf} does not exist")
    folder = cache_root() / "tokenizers" / file_sha256(gguf)
    if (folder / "tokenizer_config.json").is_file():
        return _auto_tokenizer(str(folder))
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tok-", dir=folder.parent))
    try:
        tokenizer.save_pretrained(str(tmp))
        if not folder.exists():
            os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return tokenizer
