"""How a provider's models count tokens: the typed hook each provider declares.

Every provider has a :class:`TokenCounting` (its :attr:`Provider.tokens
<holistic.models.provider.Provider.tokens>`). Token counts for
scenarios (:mod:`holistic.models.counting`) and ``--plan``'s prompt sizes ask it, so a new
provider needs no edit there. Nothing here imports transformers or torch until a tokenizer
is actually loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holistic.core.interfaces import Tokenizer
from holistic.core.types import ModelDeployment


@dataclass(frozen=True)
class TokenCounting:
    """A provider whose models are served elsewhere (an API): the registry entry's
    ``tokenizer`` field, when it names one, is its tokenizer; else counts are estimates."""

    engine_accounting: bool = field(default=False, kw_only=True)
    """Prompt tokens are reported as :class:`~holistic.models.local_client.LocalClient` counts
    them (:func:`~holistic.models.local_client.prompt_token_count`), not as the text's tokens."""

    def own(self, deployment: ModelDeployment) -> Tokenizer | None:
        """A tokenizer that needs no files (``None``: the model's tokenizer lives in files)."""
        return None

    def gguf(self, deployment: ModelDeployment) -> Path | None:
        """The GGUF file whose tokenizer the model uses (``None``: not a GGUF model)."""
        return None

    def load(self, deployment: ModelDeployment) -> Any | None:
        """The model's transformers tokenizer, loaded (may download it); ``None``: the
        registry entry's ``tokenizer`` field decides."""
        return None

    def local_folders(self, deployment: ModelDeployment) -> list[Path]:
        """Tokenizer folders of the model that may already be on this machine (read only)."""
        return []


API_TOKENS = TokenCounting()
"""The default: the registry entry's ``tokenizer`` field, else estimates."""


@dataclass(frozen=True)
class OwnTokenizer(TokenCounting):
    """Models whose tokenizer is code, built from the deployment (no files)."""

    make: Callable[[ModelDeployment], Tokenizer] | None = None

    def own(self, deployment: ModelDeployment) -> Tokenizer | None:
        return self.make(deployment) if self.make is not None else None


@dataclass(frozen=True)
class GgufModel(TokenCounting):
    """Models run from a GGUF file by a local engine: the file's own tokenizer."""

    locate: Callable[[ModelDeployment], Path] | None = None
    engine_accounting: bool = field(default=True, kw_only=True)

    def gguf(self, deployment: ModelDeployment) -> Path | None:
        return self.locate(deployment) if self.locate is not None else None


@dataclass(frozen=True)
class HuggingFaceModel(TokenCounting):
    """A transformers checkpoint (a folder or a Hub id), or a GGUF in a folder (``gguf_file``)."""

    engine_accounting: bool = field(default=True, kw_only=True)

    def gguf(self, deployment: ModelDeployment) -> Path | None:
        name = deployment.args.get("gguf_file")
        return Path(deployment.model_id).expanduser() / str(name) if name else None

    def load(self, deployment: ModelDeployment) -> Any | None:
        return auto_tokenizer(deployment.tokenizer or deployment.model_id, revision=deployment.args.get("revision"))

    def local_folders(self, deployment: ModelDeployment) -> list[Path]:
        from holistic.models.hf_local import local_dir

        folder = local_dir(deployment.model_id)
        return [folder] if folder is not None else _hub_cached_folder(deployment)


def simple_tokenizer(deployment: ModelDeployment) -> Tokenizer:
    from holistic.models.simple import SimpleTokenizer

    return SimpleTokenizer()


def embedded_gguf(deployment: ModelDeployment) -> Path:
    from holistic.models.weights import embedded_gguf_path

    return embedded_gguf_path()


def model_id_gguf(deployment: ModelDeployment) -> Path:
    return Path(deployment.model_id).expanduser()


def auto_tokenizer(source: str, revision: Any = None) -> Any:
    """``transformers.AutoTokenizer`` of a folder or a Hub id."""
    from transformers import AutoTokenizer

    kwargs = {"revision": revision} if revision else {}
    return AutoTokenizer.from_pretrained(source, **kwargs)


def _hub_cached_folder(deployment: ModelDeployment) -> list[Path]:
    """The snapshot folder of a Hub id whose ``tokenizer.json`` is in the local cache."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return []
    revision = deployment.args.get("revision")
    try:
        found = try_to_load_from_cache(deployment.model_id, "tokenizer.json", revision=revision)
    except Exception:  # a malformed repo id: nothing cached
        return []
    return [Path(found).parent] if isinstance(found, str) else []
