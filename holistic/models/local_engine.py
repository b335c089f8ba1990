"""What a local inference engine does, independent of transformers or llama.cpp.

A :class:`LocalEngine` works on token ids only. The shared client
(:mod:`holistic.models.local_client`) turns requests into :class:`ScoreJob` and
:class:`GenerateJob` values, and engine outputs back into ``RequestResult`` values,
so both engines behave identically at the request level (tokenisation, BOS
handling, stop sequences, errors).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from holistic.core.interfaces import Tokenizer
from holistic.core.long_lived import long_lived
from holistic.models.engine_options import EngineCounters


@dataclass(frozen=True)
class ScoreJob:
    """Score ``continuation`` token by token given ``context`` (which is never empty)."""

    context: tuple[int, ...]
    continuation: tuple[int, ...]
    top_k: int = 0


@dataclass(frozen=True)
class TokenScore:
    """One scored or generated token."""

    token_id: int
    logprob: float
    is_argmax: bool
    top: Mapping[int, float] = field(default_factory=dict)
    """The ``top_k`` most likely token ids at this position and their logprobs."""


@dataclass(frozen=True)
class GenerateJob:
    """Generate up to ``max_tokens`` after ``prompt`` (never empty)."""

    prompt: tuple[int, ...]
    max_tokens: int
    temperature: float
    seed: int
    """Seed of this completion's own random generator (used when ``temperature > 0``)."""
    stop: tuple[str, ...] = ()
    top_k: int = 0


@dataclass(frozen=True)
class Generated:
    """One completion as token ids with their scores."""

    tokens: tuple[TokenScore, ...]
    finish_reason: str
    """``stop`` (end-of-sequence token or a stop sequence) or ``length``."""


class LocalEngine(Protocol):
    """Runs a model on token ids. Both methods keep the input order."""

    name: str
    """Engine label recorded in results and identities, e.g. ``transformers``."""

    def tokenizer(self) -> Tokenizer: ...

    def special_ids(self) -> SpecialIds: ...

    def score(self, jobs: Sequence[ScoreJob]) -> list[list[TokenScore]]: ...

    def generate(self, jobs: Sequence[GenerateJob]) -> list[Generated]: ...

    def load(self) -> None:
        """Make the model ready to run (import, load the weights); does nothing once it is.
        Called before each call is timed, so no request's latency holds the loading."""
        ...

    def begin_run(self) -> None:
        """Forget what was kept from earlier calls (stored prefix keys/values, a held context).

        Called at the start of every run, so a run's numbers depend only on its own requests,
        never on which runs this process served before (one machine and a cluster agree bit
        for bit)."""
        ...

    def close(self) -> None: ...

    @property
    def counters(self) -> EngineCounters | None:
        """What the engine has done since it was created (forward passes, tokens through the
        model...); ``None`` for an engine that does not count."""
        ...


@dataclass(frozen=True)
class SpecialIds:
    """Token ids the client needs to know about."""

    bos: int | None
    """Token conditioning the first scored token of a text without context (BOS, else EOS)."""
    eos: frozenset[int]
    """Ids that end generation."""


def log_softmax_np(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64 (numerically stable)."""
    x = logits.astype(np.float64, copy=False)
    m = x.max(axis=-1, keepdims=True)
    out: np.ndarray = x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
    return out


def top_k_np(logprobs: np.ndarray, k: int) -> dict[int, float]:
    """The ``k`` most likely ids of one row, most likely first."""
    if k <= 0:
        return {}
    idx = np.argpartition(-logprobs, min(k, logprobs.shape[-1] - 1))[:k]
    idx = idx[np.argsort(-logprobs[idx], kind="stable")]
    return {int(i): float(logprobs[i]) for i in idx}


class DeferredEngine:
    """A :class:`LocalEngine` built on its first job.

    The tokenizer and special ids are known from the model's files alone, so prompts are
    built and the request cache consulted without importing torch or transformers; the
    real engine (and its imports, and the weights) comes only when a request misses the
    cache. A fully cached rerun therefore starts in about a second.
    """

    def __init__(self, name: str, tokenizer: Tokenizer, special: SpecialIds, build: Callable[[], LocalEngine]) -> None:
        self.name = name
        self._tokenizer = tokenizer
        self._special = special
        self._build: Callable[[], LocalEngine] | None = build
        self._engine: LocalEngine | None = None
        self._lock = threading.Lock()

    @property
    def engine(self) -> LocalEngine:
        """The real engine, built now if it was not."""
        with self._lock:
            if self._engine is None:
                if self._build is None:
                    raise RuntimeError("the engine is closed")
                with long_lived():  # torch imported, the weights loaded: kept until the engine closes
                    self._engine = self._build()
            return self._engine

    @property
    def built(self) -> bool:
        return self._engine is not None

    @property
    def counters(self) -> EngineCounters:
        """The real engine's counters (zeros before it exists, or when it does not count)."""
        counted = self._engine.counters if self._engine is not None else None
        return counted if counted is not None else EngineCounters()

    def tokenizer(self) -> Tokenizer:
        return self._tokenizer

    def special_ids(self) -> SpecialIds:
        return self._special

    def load(self) -> None:
        self.engine.load()

    def score(self, jobs: Sequence[ScoreJob]) -> list[list[TokenScore]]:
        return self.engine.score(jobs) if jobs else []

    def generate(self, jobs: Sequence[GenerateJob]) -> list[Generated]:
        return self.engine.generate(jobs) if jobs else []

    def begin_run(self) -> None:
        if self._engine is not None:
            self._engine.begin_run()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
        self._engine = None
        self._build = None
