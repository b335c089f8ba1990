"""The local engines' options and counters, importable without torch.

A fully cached rerun never loads the model, so it must not pay for importing torch or
transformers either: the client is built from these and a deferred engine
(:class:`holistic.models.local_engine.DeferredEngine`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from holistic.core.errors import ModelError, did_you_mean


@dataclass(frozen=True)
class EngineOptions:
    """Batching and caching knobs of :class:`holistic.models.hf_engine.TransformersEngine`
    (its module docstring explains them)."""

    batch_size: int = 64
    """Most rows per forward pass."""
    max_batch_tokens: int = 2048
    """Most padded positions (rows x longest row) per forward pass."""
    row_tokens: int = 384
    """Longest packed row; a subtree larger than this becomes a cached trunk."""
    memory_mb: int = 192
    """Most megabytes of keys/values, attention mask and scores one forward pass may hold."""
    decode_memory_mb: int = 1024
    """Most megabytes of keys/values one batch of decoding rows may hold."""
    prefix_cache: bool = True
    """Share prefixes (off: every job runs alone from its first token, for comparison)."""
    min_shared_prefix: int = 16
    """Fewest tokens a shared prefix must add to become a trunk of its own (computed in a
    pass of its own and kept); shorter shared prefixes are still computed once, inside
    the packed rows below them."""
    draft_tokens: int = 16
    """Most tokens a decoding step may compute beyond each row's next one, shared by its rows:
    drafts looked up in the rows' own text and kept where they are the model's greedy choice
    (:mod:`holistic.models.hf_decode`); 0: one token per row per step."""
    prefix_store_mb: int = 128
    """Most megabytes of trunk keys/values kept between calls."""
    native: bool = True
    """Run a Llama-architecture model from a local folder with holistic's own torch code
    (:mod:`holistic.models.llama_native`: no transformers import);
    off: always through transformers."""


@dataclass
class EngineCounters:
    """What the engine has done since it was created."""

    forward_calls: int = 0
    """Forward passes of the model (trunks, packed batches, decoding steps)."""
    forward_tokens: int = 0
    """Real tokens run through the model (padding excluded)."""
    padded_positions: int = 0
    """Positions computed, padding included."""
    prefix_hits: int = 0
    """Trunks taken (whole or in part) from the store instead of being recomputed."""
    model_loads: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def refuse_unknown_args(
    deployment: str, args: Iterable[str], known: Sequence[str], *, problem: str, listing: str
) -> None:
    """Raise :class:`ModelError` for the first of ``args`` not in ``known``: ``"{deployment}:
    {problem}; did you mean 'x'?"``, or ``listing`` when no known arg is near (``{key}`` in
    ``problem`` is the arg, ``{known}`` in ``listing`` the known ones)."""
    for key in args:
        if key not in known:
            hint = did_you_mean(key, known)
            raise ModelError(
                f"{deployment}: {problem.format(key=repr(key))}; "
                + (f"did you mean {hint[0]!r}?" if hint else listing.format(known=", ".join(known)))
            )
