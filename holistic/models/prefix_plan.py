"""Prefix sharing: which token sequences share a prefix worth computing once.

Evaluation prompts repeat themselves: the choices of a multiple-choice question are
scored against one context, and the eval instances of a trial share the instructions
and in-context examples (a 5-shot MMLU prompt of ~350 tokens shares ~300 with its
neighbours). As with vLLM's prefix caching, an engine computes the key/value cache
of a shared prefix once and continues every sequence from it.

:func:`plan_prefixes` builds a prefix tree over the sequences: sorted
lexicographically, sequences with a common prefix are neighbours; runs of neighbours
sharing at least ``min_shared`` more tokens than their parent become a child node,
recursively. Each sequence also has a ``limit``: the longest prefix it may take from
the cache (the engine needs logits from position ``limit`` on, so those positions must
be computed for that sequence itself).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class PrefixNode:
    """A shared prefix ``tokens[0:end]`` and the sequences continuing from it."""

    end: int
    """Length of this node's prefix (0 for the root)."""
    members: list[int] = field(default_factory=list)
    """Indices of sequences continuing directly from this prefix."""
    children: list[PrefixNode] = field(default_factory=list)
    """Longer shared prefixes below this one."""

    def walk(self) -> list[PrefixNode]:
        """This node and all its descendants, parents first."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


def common_prefix_len(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def plan_prefixes(seqs: Sequence[Sequence[int]], limits: Sequence[int], min_shared: int = 16) -> PrefixNode:
    """The prefix tree of ``seqs``; every index appears exactly once as a member.

    ``limits[i]`` caps the prefix sequence ``i`` may share (``0 <= limits[i] <= len(seqs[i])``).
    ``min_shared`` is the fewest extra tokens that make a new level worth its overhead.
    """
    if len(seqs) != len(limits):
        raise ValueError("plan_prefixes: seqs and limits differ in length")
    order = sorted(range(len(seqs)), key=lambda i: tuple(seqs[i]))
    # shared[k]: tokens that order[k] and order[k+1] may share (both limits respected).
    shared = [min(common_prefix_len(seqs[a], seqs[b]), limits[a], limits[b]) for a, b in itertools.pairwise(order)]
    root = PrefixNode(end=0)
    _build(root, order, shared, 0, len(order), max(min_shared, 1))
    return root


def _build(node: PrefixNode, order: list[int], shared: list[int], lo: int, hi: int, min_shared: int) -> None:
    """Split ``order[lo:hi]`` (all sharing ``node.end`` tokens) into members and children."""
    start = lo
    while start < hi:
        stop = start
        # Extend the run while neighbours share enough beyond this node's prefix.
        while stop + 1 < hi and shared[stop] >= node.end + min_shared:
            stop += 1
        if stop == start:
            node.members.append(order[start])
        else:
            child = PrefixNode(end=min(shared[start:stop]))
            node.children.append(child)
            _build(child, order, shared, start, stop + 1, min_shared)
        start = stop + 1
