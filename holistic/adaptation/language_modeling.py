"""Rolling-window language modelling requests (``method: language_modeling``).

A document (``Instance.input``) is tokenized with the model's tokenizer and cut into
windows of ``W = AdapterSpec.language_modeling_window`` tokens (at most the model's
context window). The first window scores tokens ``[0, W)`` with no conditioning; each
later window carries the previous ``C = language_modeling_context`` tokens as
conditioning and scores the next ``W - C`` new tokens, so every token is scored exactly
once and all but the first ``W`` see at least ``C`` tokens of context. A document of
``n`` tokens gives ``1 + ceil((n - W) / (W - C))`` windows (one when ``n <= W``, none
when it is empty).

Each window is a ``loglikelihood`` request (``role="window"``, ``request_index`` = window
number) whose ``prompt`` is the conditioning text and whose ``continuation`` is the
scored text. The scored span is exactly ``Request.continuation``: bits per byte use
``len(continuation.encode("utf-8"))`` (see :func:`holistic.adaptation.scoring.scored_bytes`);
the continuations of a document concatenate to the whole document.

Token boundaries become character offsets by decoding token prefixes; a boundary that
falls inside a multi-byte character moves before that character. Without a tokenizer,
four characters count as one token.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from holistic.adaptation.fitting import CHARS_PER_TOKEN
from holistic.core.interfaces import Tokenizer
from holistic.core.types import AdapterSpec, Instance, ModelDeployment, Request, RequestRole, RequestState


def window_sizes(spec: AdapterSpec, context_window: int | None) -> tuple[int, int]:
    """``(W, C)`` after capping the window to the model's context window."""
    window = (
        spec.language_modeling_window if context_window is None else min(spec.language_modeling_window, context_window)
    )
    window = max(window, 1)
    return window, min(spec.language_modeling_context, window - 1)


def window_spans(n_tokens: int, window: int, context: int) -> list[tuple[int, int, int]]:
    """``(conditioning_start, scored_start, scored_end)`` token positions per window."""
    if n_tokens <= 0:
        return []
    spans = [(0, 0, min(window, n_tokens))]
    while spans[-1][2] < n_tokens:
        start = spans[-1][2]
        spans.append((max(0, start - context), start, min(n_tokens, start + window - context)))
    return spans


def count_windows(n_tokens: int, window: int, context: int) -> int:
    """Number of windows of a document of ``n_tokens`` tokens (same as ``len(window_spans(...))``)."""
    if n_tokens <= 0:
        return 0
    if n_tokens <= window:
        return 1
    return 1 + math.ceil((n_tokens - window) / (window - context))


def _char_offsets(text: str, ids: Sequence[int], tokenizer: Tokenizer, positions: Sequence[int]) -> dict[int, int]:
    """Character offset of each token position (sorted ascending)."""
    offsets = {0: 0, len(ids): len(text)}
    prev_tok, prev_char = 0, 0
    for b in positions:
        if b in offsets:
            continue
        piece = tokenizer.decode(ids[prev_tok:b])
        if "\ufffd" not in piece and text.startswith(piece, prev_char):
            offset = prev_char + len(piece)
        else:
            prefix = tokenizer.decode(ids[:b]).rstrip("\ufffd")
            # A tokenizer that does not round-trip this text gets a proportional estimate.
            offset = len(prefix) if text.startswith(prefix) else round(len(text) * b / max(len(ids), 1))
        offset = max(offset, prev_char)
        offsets[b] = offset
        prev_tok, prev_char = b, offset
    return offsets


def language_modeling_states(
    instance: Instance,
    spec: AdapterSpec,
    deployment: ModelDeployment,
    tokenizer: Tokenizer | None,
) -> list[RequestState]:
    """The window requests of one document."""
    window, context = window_sizes(spec, deployment.context_window)
    text = instance.input
    if tokenizer is None:
        spans = window_spans(len(text), window * CHARS_PER_TOKEN, context * CHARS_PER_TOKEN)
        offsets = {p: p for span in spans for p in span}
    else:
        ids = tokenizer.encode(text)
        spans = window_spans(len(ids), window, context)
        offsets = _char_offsets(text, ids, tokenizer, sorted({p for span in spans for p in span}))
    states = []
    for w, (ctx_start, start, end) in enumerate(spans):
        request = Request(
            model=deployment.name,
            kind="loglikelihood",
            prompt=text[offsets[ctx_start] : offsets[start]],
            continuation=text[offsets[start] : offsets[end]],
            max_tokens=0,
            temperature=0.0,
            logprobs=True,
            top_k_logprobs=spec.top_k_logprobs,
            seed=spec.seed,
        )
        states.append(RequestState(instance=instance, request=request, role=RequestRole.WINDOW, request_index=w))
    return states
