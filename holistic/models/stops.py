"""Stop sequences: where generated text ends, and which tokens survive the cut."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def find_stop(text: str, stops: Sequence[str]) -> int | None:
    """Index of the earliest stop sequence in ``text`` (``None`` if none occurs)."""
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return min(found) if found else None


def tail_has_stop(decode: Callable[[Sequence[int]], str], ids: Sequence[int], stops: Sequence[str]) -> bool:
    """Whether a stop sequence ends inside the last token's text.

    Only the last few tokens are decoded (enough to hold the longest stop sequence),
    so checking after every generated token stays cheap for long completions.
    """
    if not stops or not ids:
        return False
    longest = max(len(s) for s in stops)
    window = ids[-(longest + 1) :]
    return find_stop(decode(window), stops) is not None


def cut_at_stop(
    decode: Callable[[Sequence[int]], str], ids: Sequence[int], stops: Sequence[str]
) -> tuple[str, int, bool]:
    """Decode ``ids`` and cut at the first stop sequence.

    Returns ``(text, n_tokens_kept, stopped)``: the text before the stop, how many
    leading tokens lie entirely before it (a token that straddles the stop is dropped),
    and whether a stop sequence was found.
    """
    text = decode(ids)
    at = find_stop(text, stops)
    if at is None:
        return text, len(ids), False
    kept = 0
    for k in range(1, len(ids) + 1):
        if len(decode(ids[:k])) > at:
            break
        kept = k
    return text[:at], kept, True
