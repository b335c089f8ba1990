"""Row packing for the transformers engine's scoring passes, and each row's tree mask.

The engine (:mod:`holistic.models.hf_engine`, whose docstring tells the whole method) runs
the sequences of a batch of jobs over a shared *trunk* (a prefix whose keys and values are
already computed). Below the trunk, each subtree of the sequences' prefix tree becomes a
*unit*: its shared context once, then every continuation, as *segments* (one stretch of a
sequence's tokens, attached to a parent segment). Units are packed into *rows*; a row's
attention mask is tree-shaped (a token sees its own segment causally and its ancestor
segments in full) and its position ids restart after the shared part of each continuation.

This module lays rows out as tensors and builds their masks; it runs no model.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

import torch

from holistic.models.prefix_plan import PrefixNode, plan_prefixes

BLOCK_JOIN = 64
"""Units this short (in columns, together) share one attention span: a call per span costs
more than the attention it would save."""


@dataclass(frozen=True)
class TokenSeq:
    """One job's tokens, and the first position whose logits it needs."""

    ids: tuple[int, ...]
    need_from: int
    """First position whose logits the job needs."""


@dataclass
class Trunk:
    """A computed prefix: ``ids[:length]`` and its key/value cache (``None`` for the empty prefix)."""

    length: int
    cache: Any = None


@dataclass(frozen=True)
class Segment:
    """One stretch of a sequence's tokens inside a unit (or a row)."""

    seq: int
    """Sequence whose tokens ``start:end`` this segment holds."""
    start: int
    end: int
    parent: int
    """Index of the parent segment within the unit (-1: attaches to the trunk)."""
    leaf: bool
    """The sequence's own last segment (its needed logits lie here)."""


Unit = list[Segment]
"""A subtree below a trunk, laid out as segments, parents before their children."""


@dataclass
class PackedRows:
    """A batch of rows laid out for one forward pass over a trunk."""

    input_ids: torch.Tensor
    """``(rows, width)`` token ids, padded at the end of each row."""
    positions: torch.Tensor
    """``(rows, width)`` position ids (a continuation's restart after its shared context)."""
    allowed: torch.Tensor
    """``(rows, width, trunk + width)`` booleans: which positions each token attends to (every
    trunk position, then its row's tree mask)."""
    pick_rows: list[int] = field(default_factory=list)
    pick_columns: list[int] = field(default_factory=list)
    """The ``(row, column)`` of every position whose logits some job needs, leaf by leaf."""
    leaves: list[int] = field(default_factory=list)
    """The sequences whose logits are picked, in the order of their picks."""
    real_tokens: int = 0
    """Tokens laid out (padding excluded)."""
    blocks: list[list[tuple[int, int]]] = field(default_factory=list)
    """Each row's columns cut into spans that attend to nothing outside themselves but the
    trunk: its units (short neighbours joined, up to ``BLOCK_JOIN`` columns) and its padding."""

    def flat_picks(self) -> list[int]:
        """The picked positions as flat indices, ``row * width + column``, in pick order."""
        width = self.input_ids.shape[1]
        return [r * width + c for r, c in zip(self.pick_rows, self.pick_columns, strict=True)]


def pack_rows(rows: list[list[Unit]], seqs: list[TokenSeq], trunk_length: int, pad_id: int) -> PackedRows:
    """Lay ``rows`` (each a list of units) out as one right-padded batch over a trunk of
    ``trunk_length`` positions."""
    width = max(sum(unit_len(unit) for unit in row) for row in rows)
    packed = PackedRows(
        input_ids=torch.full((len(rows), width), pad_id, dtype=torch.long),
        positions=torch.zeros((len(rows), width), dtype=torch.long),
        allowed=torch.zeros((len(rows), width, trunk_length + width), dtype=torch.bool),
    )
    packed.allowed[:, :, :trunk_length] = True
    causal = torch.ones((width, width), dtype=torch.bool).tril_()
    for row_index, row in enumerate(rows):
        segments, segment_of_column, used = _lay_out_row(packed, row_index, row, seqs)
        packed.real_tokens += used
        packed.blocks.append(_blocks([unit_len(unit) for unit in row], width))
        packed.allowed[row_index, :, trunk_length:] = tree_mask(segments, segment_of_column, causal)
        if used < width:
            packed.positions[row_index, used:] = trunk_length + torch.arange(width - used)
    return packed


def _blocks(lengths: list[int], width: int) -> list[tuple[int, int]]:
    """A row's spans: consecutive units joined while they fit in ``BLOCK_JOIN`` columns, then
    the padding, if any."""
    spans: list[tuple[int, int]] = []
    column = 0
    for length in lengths:
        if spans and column + length - spans[-1][0] <= BLOCK_JOIN:
            spans[-1] = (spans[-1][0], column + length)
        else:
            spans.append((column, column + length))
        column += length
    if column < width:
        spans.append((column, width))
    return spans


def _lay_out_row(
    packed: PackedRows, row_index: int, row: list[Unit], seqs: list[TokenSeq]
) -> tuple[list[Segment], torch.Tensor, int]:
    """Write one row's tokens and positions into ``packed`` and pick its leaves' needed logits.

    Returns the row's segments (parents as indices among them), the segment of each column
    (-1: padding) and the number of columns used."""
    segment_of_column = torch.full((packed.input_ids.shape[1],), -1, dtype=torch.long)
    segments: list[Segment] = []
    first_columns: list[int] = []  # where each segment starts in the row
    column = 0
    for unit in row:
        first = len(segments)
        for segment in unit:
            tokens = seqs[segment.seq].ids[segment.start : segment.end]
            end_column = column + len(tokens)
            packed.input_ids[row_index, column:end_column] = torch.tensor(tokens)
            packed.positions[row_index, column:end_column] = torch.arange(segment.start, segment.end)
            segment_of_column[column:end_column] = len(segments)
            parent = first + segment.parent if segment.parent >= 0 else -1
            segments.append(Segment(segment.seq, segment.start, segment.end, parent, segment.leaf))
            first_columns.append(column)
            if segment.leaf:
                _pick_needed(packed, row_index, segments, first_columns, seqs[segment.seq].need_from)
                packed.leaves.append(segment.seq)
            column = end_column
    return segments, segment_of_column, column


def _pick_needed(
    packed: PackedRows, row_index: int, segments: list[Segment], first_columns: list[int], need_from: int
) -> None:
    """Pick the columns whose logits the row's newest segment (a leaf) needs: positions
    ``need_from`` to its end, through the leaf and, when the unit shares them, its ancestors."""
    chain = [len(segments) - 1]
    while segments[chain[-1]].parent >= 0 and segments[chain[-1]].start > need_from:
        chain.append(segments[chain[-1]].parent)
    for index in reversed(chain):
        segment = segments[index]
        low, high = max(need_from, segment.start), segment.end
        column_of_position = first_columns[index] - segment.start
        packed.pick_rows.extend([row_index] * (high - low))
        packed.pick_columns.extend(range(column_of_position + low, column_of_position + high))


def tree_mask(segments: list[Segment], segment_of_column: torch.Tensor, causal: torch.Tensor) -> torch.Tensor:
    """``(width, width)`` booleans: column ``i`` attends to column ``j`` when ``j``'s segment is
    ``i``'s own or one of its ancestors, and ``j <= i``; a padding column sees only itself."""
    count = len(segments)
    # ancestor-or-self matrix of the row's segments; index ``count`` stands for padding,
    # which sees no segment
    ancestor_or_self = torch.zeros((count + 1, count + 1), dtype=torch.bool)
    for index in range(count):
        ancestor = index
        while ancestor >= 0:
            ancestor_or_self[index, ancestor] = True
            ancestor = segments[ancestor].parent
    segment_index = torch.where(segment_of_column >= 0, segment_of_column, torch.tensor(count))
    mask = ancestor_or_self[segment_index[:, None], segment_index[None, :]] & causal
    mask |= torch.diag(segment_of_column < 0)
    return mask


def subtree_units(node: PrefixNode, base: int, ids: list[tuple[int, ...]], pack: bool) -> list[Unit]:
    """``node``'s subtree after position ``base``: one packed unit, or one unit per sequence.

    A packed unit shares every common prefix of its sequences, including tokens whose
    logits some sequence needs (two choices starting with the same word): each position
    is computed once and its logits handed to every sequence that runs through it.
    """
    members = members_of(node)
    if not pack:
        return [[Segment(m, base, len(ids[m]), -1, True)] for m in members]
    tails = [ids[m][base:] for m in members]
    tree = plan_prefixes(tails, [len(t) for t in tails], 1)
    unit: Unit = []

    def walk(node: PrefixNode, start: int, parent: int) -> None:
        if node.end > start:
            unit.append(Segment(members[representative(node)], base + start, base + node.end, parent, False))
            parent = len(unit) - 1
        for child in node.children:
            walk(child, node.end, parent)
        for member in node.members:
            unit.append(Segment(members[member], base + node.end, len(ids[members[member]]), parent, True))

    walk(tree, 0, -1)
    return [unit]


def balanced_rows(units: list[Unit], cap: int) -> list[list[Unit]]:
    """Pack units into as few rows of at most ``cap`` tokens as a balanced packing allows.

    A batch is as wide as its longest row, so rows of unequal length waste positions on
    padding (with first-fit packing, the last row of every call was about half empty).
    Units go largest first to the currently shortest of ``n`` rows, ``n`` starting at
    the fewest rows the tokens need and growing until no row passes ``cap``; the rows
    then differ by about one small unit. A unit longer than ``cap`` has a row to itself.
    """
    if cap <= 0:
        return [[u] for u in units]
    sizes = [unit_len(u) for u in units]
    order = sorted(range(len(units)), key=lambda i: -sizes[i])
    n = max(1, -(-sum(sizes) // cap))
    while True:
        rows: list[list[Unit]] = [[] for _ in range(n)]
        heap = [(0, r) for r in range(n)]
        fits = True
        for i in order:
            load, r = heapq.heappop(heap)
            if load and load + sizes[i] > cap:
                fits = False
                break
            rows[r].append(units[i])
            heapq.heappush(heap, (load + sizes[i], r))
        if fits:
            return [row for row in rows if row]
        n += 1


def unit_len(unit: Unit) -> int:
    return sum(s.end - s.start for s in unit)


def members_of(node: PrefixNode) -> list[int]:
    return [m for n in node.walk() for m in n.members]


def representative(node: PrefixNode) -> int:
    """Any sequence under ``node`` (they all share its prefix)."""
    while not node.members:
        node = node.children[0]
    return node.members[0]
