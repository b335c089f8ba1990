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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from holistic.core.interfaces import Tokenizer
from holistic.core.types import Message

CHARS_PER_TOKEN = 4
CHAT_TOKENS_PER_MESSAGE = 4


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

    def truncate(self, text: str, keep: int, side: str) -> str:
        """Keep ``keep`` tokens of ``text``; ``side`` is the side that is cut."""
        if self.tokenizer is None:
            n = keep * CHARS_PER_TOKEN
            return (text[len(text) - n :] if n else "") if side == "left" else text[:n]
        ids = self.tokenizer.encode(text)
        kept = (ids[len(ids) - keep :] if keep else []) if side == "left" else ids[:keep]
        return self.tokenizer.decode(kept)

    def length(self, text: str) -> int:
        """Length of ``text`` in the units :meth:`truncate` counts."""
        if self.tokenizer is None:
            return math.ceil(len(text) / CHARS_PER_TOKEN)
        return len(self.tokenizer.encode(text))


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
    k = num_examples
    while k > 0 and measure(k, None) > budget:
        k -= 1
    if measure(k, None) <= budget:
        return Fit(k, None)
    lo, hi = 0, max(counter.length(full_text) - 1, 0)
    best = 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if measure(0, counter.truncate(full_text, mid, side)) <= budget:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return Fit(0, counter.truncate(full_text, best, side))
