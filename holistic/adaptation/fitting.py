"""Fitting a prompt into the model's context window.

The prompt plus what the model must add (``max_tokens`` for generation; the longest
scored continuation for log-likelihood requests) must fit ``deployment.context_window``,
counted with the model's own tokenizer. When it does not:

1. in-context examples are dropped from the end, one at a time, until it fits;
2. if even zero examples do not fit, the instance input (the passage for ranking) is
   cut on ``AdapterSpec.truncation_side`` (``left`` drops the beginning and keeps the
   end; ``right`` keeps the beginning) to the longest length that fits.

Without a tokenizer, tokens are estimated as one per four characters (rounded up), and
a chat prompt costs its contents plus four tokens per message.

The input is encoded once for the whole search. An input far longer than the window
(more than :data:`WINDOW_CHARS_PER_TOKEN` characters per token of the budget) is encoded
only on its kept side, as far as the budget can use plus :data:`BOUNDARY_TOKENS` tokens,
which are dropped, at the cut: a dataset's 200 MB field costs what the window can hold, not
200 MB of tokens for every step. Shorter inputs are encoded whole, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from holistic.core.interfaces import Tokenizer
from holistic.core.types import Message

CHARS_PER_TOKEN = 4
CHAT_TOKENS_PER_MESSAGE = 4
WINDOW_CHARS_PER_TOKEN = 16
"""An input longer than this many characters per token of the budget is encoded in part."""
BOUNDARY_TOKENS = 64
"""Tokens next to where a part of the input was cut off, encoded but never used (they may
differ from the whole input's tokens there)."""


class TokenCounter:
    """Counts tokens with the model's tokenizer, or estimates them without one."""

    def __init__(self, tokenizer: Tokenizer | None) -> None:
        self.tokenizer = tokenizer

    def count(self, text: str) -> int:
        if self.tokenizer is None:
            return math.ceil(len(text) / CHARS_PER_TOKEN)
        return self.tokenizer.count(text)

    def count_messages(self, messages: Sequence[Message]) -> int:
        if self.tokenizer is None:
            return sum(self.count(m.content) + CHAT_TOKENS_PER_MESSAGE for m in messages)
        return self.tokenizer.count(self.tokenizer.render_chat(messages))

    def kept(self, text: str, side: str, need: int) -> KeptTokens:
        """``text``'s tokens on its kept side, enough for any cut up to ``need`` tokens, encoded
        once: the whole input, unless it is longer than :data:`WINDOW_CHARS_PER_TOKEN`
        characters per token of ``need`` (then only the part a cut can keep, widened until it
        holds ``need`` tokens past the boundary)."""
        if self.tokenizer is None:
            return KeptTokens(self, text, side, None, self.count(text))
        window = (need + BOUNDARY_TOKENS) * WINDOW_CHARS_PER_TOKEN
        while window < len(text):
            part = text[len(text) - window :] if side == "left" else text[:window]
            ids = self.tokenizer.encode(part)
            if len(ids) >= need + 2 * BOUNDARY_TOKENS:
                ids = ids[BOUNDARY_TOKENS:] if side == "left" else ids[: len(ids) - BOUNDARY_TOKENS]
                return KeptTokens(self, text, side, ids, len(ids))
            window *= 2
        ids = self.tokenizer.encode(text)
        return KeptTokens(self, text, side, ids, len(ids))


def is_huge(text: str, budget: int, counter: TokenCounter) -> bool:
    """Whether ``text`` alone is far over ``budget`` tokens: longer than the window in
    characters, and over it by more than :data:`BOUNDARY_TOKENS` tokens (counting only as
    much of it as shows that)."""
    limit = max(budget, 0) + BOUNDARY_TOKENS
    window = limit * WINDOW_CHARS_PER_TOKEN
    if len(text) <= window:
        return False
    while 2 * window < len(text):
        if counter.count(text[:window]) > limit + BOUNDARY_TOKENS:  # the cut may split one token in many
            return True
        window *= 2
    return counter.count(text) > limit


@dataclass(frozen=True)
class KeptTokens:
    """An input's tokens on the side a cut keeps (``ids`` is ``None`` without a tokenizer)."""

    counter: TokenCounter
    source: str
    side: str
    ids: list[int] | None
    length: int
    """Tokens known (all of the input's, unless it was encoded in part)."""

    def text(self, keep: int) -> str:
        """The input cut to ``keep`` tokens."""
        if self.ids is None:
            n = keep * CHARS_PER_TOKEN
            src = self.source
            return (src[len(src) - n :] if n else "") if self.side == "left" else src[:n]
        ids = self.ids
        kept = (ids[len(ids) - keep :] if keep else []) if self.side == "left" else ids[:keep]
        assert self.counter.tokenizer is not None
        return self.counter.tokenizer.decode(kept)


@dataclass(frozen=True)
class Fit:
    """The outcome of fitting one prompt."""

    num_examples: int
    """In-context examples kept (a prefix of the selected ones)."""

    text: str | None
    """The truncated input, or ``None`` when the input is whole."""

    @property
    def truncated(self) -> bool:
        return self.text is not None


def fit_prompt(
    measure: Callable[[int, str | None], int],
    num_examples: int,
    full_text: str,
    budget: int,
    counter: TokenCounter,
    side: str,
) -> Fit:
    """Find the largest prompt that fits ``budget`` tokens.

    ``measure(k, text)`` is the token count of the prompt with the first ``k`` examples and
    the input replaced by ``text`` (``None`` = the whole input).
    """
    if is_huge(full_text, budget, counter):
        # neither the whole input nor any example beside it can fit: measuring them would
        # encode the whole input once per example
        return _cut_input(measure, full_text, budget, counter, side)
    k = num_examples
    size = measure(k, None)  # each candidate prompt is measured once
    while k > 0 and size > budget:
        k -= 1
        size = measure(k, None)
    if size <= budget:
        return Fit(k, None)
    return _cut_input(measure, full_text, budget, counter, side)


def _cut_input(
    measure: Callable[[int, str | None], int], full_text: str, budget: int, counter: TokenCounter, side: str
) -> Fit:
    """No examples, and the longest cut of the input that fits (binary search on its tokens)."""
    kept = counter.kept(full_text, side, max(budget, 0) + BOUNDARY_TOKENS)
    lo, hi = 0, max(kept.length - 1, 0)
    best = 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if measure(0, kept.text(mid)) <= budget:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return Fit(0, kept.text(best))
