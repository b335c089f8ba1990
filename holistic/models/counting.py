"""Token counters for scenarios that measure text in a model's own tokens.

:func:`tokenizer_resolver` turns a model registry (built-ins plus the user's
``--models-file``) into the :data:`~holistic.core.interfaces.TokenizerResolver` that
execution hands scenarios through ``ScenarioContext.tokenizers``. A reference resolves,
loading only a tokenizer (never weights), to:

- a model registry name: the tokenizer of that deployment, as its provider's
  :class:`~holistic.models.tokens.TokenCounting` declares it: the GGUF's own for
  ``embedded`` and GGUF-based ``llama_cpp``/``huggingface`` deployments (saved once
  under ``<cache>/tokenizers/<sha256 of the GGUF>/`` so later runs load it in seconds),
  the transformers tokenizer for ``huggingface``, ``SimpleTokenizer`` for ``simple``,
  and the registry's ``tokenizer`` field for API models that name one;
- a local path: a tokenizer folder (``tokenizer.json`` ...) or a ``.gguf`` file;
- ``chars/4``: no tokenizer, 4 characters = 1 token.

API models without a published tokenizer fall back to ``chars/4`` too. Every fallback
is flagged (``fallback`` true, with the reason), so lengths measured in characters are
never passed off as tokens.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.interfaces import (
    CharsPerToken,
    CountingTokenizer,
    Tokenizer,
    TokenizerResolver,
    chars_per_token_fallback,
)
from holistic.core.types import ModelDeployment
from holistic.models.registry import ModelRegistry, token_counting
from holistic.models.tokens import TokenCounting, auto_tokenizer

logger = logging.getLogger(__name__)

FALLBACK_NAME = CharsPerToken.name
fallback_tokenizer = chars_per_token_fallback


def tokenizer_resolver(registry: ModelRegistry) -> TokenizerResolver:
    """A resolver over ``registry`` that loads each tokenizer once."""
    resolved: dict[str, CountingTokenizer] = {}

    def resolve(reference: str) -> CountingTokenizer:
        if reference not in resolved:
            resolved[reference] = counting_tokenizer(reference, registry)
        return resolved[reference]

    return resolve


def counting_tokenizer(reference: str, registry: ModelRegistry) -> CountingTokenizer:
    """The counter for ``reference`` (see the module docstring)."""
    if reference == FALLBACK_NAME:
        return fallback_tokenizer("the run asked for chars/4 (scenario arg 'tokenizer')")
    path = Path(reference).expanduser()
    if path.exists():
        return CountingTokenizer(_HFCounter(_load_local(path)), reference)
    deployment = registry.get(reference)  # UnknownNameError suggests the nearest names
    tokens = token_counting(deployment.provider)
    own = tokens.own(deployment)
    if own is not None:
        return CountingTokenizer(own, reference)
    gguf = tokens.gguf(deployment)
    if gguf is not None:
        return CountingTokenizer(_HFCounter(_gguf_tokenizer(gguf)), reference)
    loaded = tokens.load(deployment)
    if loaded is not None:
        return CountingTokenizer(_HFCounter(loaded), reference)
    if deployment.tokenizer:
        try:
            return CountingTokenizer(_HFCounter(auto_tokenizer(deployment.tokenizer)), reference)
        except Exception as exc:
            logger.warning(
                "tokenizer %s of %s cannot be loaded (%s); counting chars/4", deployment.tokenizer, reference, exc
            )
            return fallback_tokenizer(f"tokenizer {deployment.tokenizer!r} of {reference} could not be loaded: {exc}")
    return fallback_tokenizer(f"{reference} ({deployment.provider}) names no local tokenizer in the model registry")


def local_tokenizer(deployment: ModelDeployment) -> Tokenizer | None:
    """The tokenizer ``deployment`` runs with (its encoding and its own chat template),
    read from files already on this machine: never the network, never the weights, and
    without importing transformers or torch (``--plan`` uses it).

    What the provider's :class:`~holistic.models.tokens.TokenCounting` declares: a tokenizer
    of its own (``simple``); for a GGUF (``embedded``, ``llama_cpp``, ``huggingface`` with
    ``gguf_file``), the tokenizer folder saved from it by an earlier run or token count;
    else its local folders (a ``huggingface`` folder, or a Hub id already in the local
    Hugging Face cache). Any deployment whose registry ``tokenizer`` is a local folder:
    that folder. ``None`` otherwise (API models, nothing cached yet).
    """
    from holistic.models.folder_tokenizer import FolderTokenizer

    tokens = token_counting(deployment.provider)
    own = tokens.own(deployment)
    if own is not None:
        return own
    try:
        folder = _tokenizer_folder(deployment, tokens)
        return FolderTokenizer(folder, deployment.name) if folder is not None else None
    except (ImportError, OSError, ValueError, ModelError) as exc:
        logger.info("no local tokenizer for %s: %s", deployment.name, exc)
        return None


def _tokenizer_folder(deployment: ModelDeployment, tokens: TokenCounting) -> Path | None:
    from holistic.models.folder_tokenizer import has_tokenizer_files
    from holistic.models.weights import cache_root, file_sha256

    gguf = tokens.gguf(deployment)
    if gguf is not None:
        if not gguf.is_file():
            return None
        sha = file_sha256(gguf)
        # The tokenizer folder a token count saved, or the checkpoint the transformers engine converted.
        candidates = [cache_root() / "tokenizers" / sha, cache_root() / "models" / sha]
    else:
        candidates = tokens.local_folders(deployment)
    if deployment.tokenizer:
        candidates.append(Path(deployment.tokenizer).expanduser())
    return next((c for c in candidates if has_tokenizer_files(c)), None)


class _HFCounter:
    def __init__(self, tokenizer: Any) -> None:
        from holistic.models.hf_tokenizer import HFTokenizer

        self.tokenizer = HFTokenizer(tokenizer)

    def count(self, text: str) -> int:
        return self.tokenizer.count(text)


def _load_local(path: Path) -> Any:
    if path.is_file() and path.suffix == ".gguf":
        return _gguf_tokenizer(path)
    if path.is_dir():
        return auto_tokenizer(str(path))
    raise ValueError(f"tokenizer {path}: expected a tokenizer folder or a .gguf file")


def _gguf_tokenizer(gguf: Path) -> Any:
    """The tokenizer stored in a GGUF, saved once as a small tokenizer folder in the cache."""
    from holistic.models.weights import cache_root, file_sha256

    if not gguf.is_file():
        raise ModelError(f"GGUF file {gguf} does not exist")
    folder = cache_root() / "tokenizers" / file_sha256(gguf)
    if (folder / "tokenizer_config.json").is_file():
        return auto_tokenizer(str(folder))
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
