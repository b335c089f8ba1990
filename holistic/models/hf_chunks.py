"""Attention by stretches of a packed row: the units of a row never attend to each other.

A packed scoring row (:mod:`holistic.models.hf_rows`) holds several units -- a question's
context and its choices -- side by side, and its tree mask lets no token of one unit see
another unit (only the trunk, which every row shares). Attention over the whole row computes
``width x width`` scores per head of which most are masked: in a row of 384 tokens holding
eight units, over nine in ten. So attention is computed by *chunks* instead: consecutive
whole units of a row, at most as long as the batch's longest unit, each padded to the longest
chunk and attending to the trunk and to itself, under the same tree mask. The projections and
the MLP still run on the packed rows (the chunks only reorder the attention's inputs and
outputs), and every real position attends to exactly the keys it attended to before: the
scores differ from the row's only by float rounding (a softmax over fewer masked entries).

:func:`attention_chunks` lays the chunks out once per pass; the native decoder
(:mod:`holistic.models.llama_native`) gathers each layer's queries, keys and values by them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from holistic.models.hf_rows import PackedRows

WORTH = 0.75
"""Chunks are used when their attention costs at most this share of the rows' (fewer scores,
against the gathering they add)."""


@dataclass(frozen=True)
class AttentionChunks:
    """Stretches of a batch's rows whose attention is computed apart (see the module docstring)."""

    rows: torch.Tensor
    """``(chunks,)``: the row each chunk is taken from."""
    columns: torch.Tensor
    """``(chunks, length)``: the row's columns in the chunk, in order; padding names the scratch
    column ``width`` (one past the row's last)."""
    mask: torch.Tensor
    """``(chunks, 1, length, trunk + length)`` additive mask: the trunk, then the row's tree mask
    restricted to the chunk; a padding position sees only itself."""


def attention_chunks(packed: PackedRows, trunk: int, dtype: torch.dtype) -> AttentionChunks | None:
    """The chunks of ``packed`` (a batch over a trunk of ``trunk`` positions), or ``None`` when
    they would save too little (one unit a row, or a trunk much longer than the rows)."""
    rows, width = packed.input_ids.shape
    spans = packed.unit_spans
    if len(spans) != rows or not any(spans):
        return None
    cap = max(end - start for row in spans for start, end in row)
    chunks: list[tuple[int, int, int]] = []
    for row, units in enumerate(spans):
        start = end = units[0][0] if units else 0
        for unit_start, unit_end in units:
            if end > start and unit_end - start > cap:
                chunks.append((row, start, end))
                start = unit_start
            end = unit_end
        if end > start:
            chunks.append((row, start, end))
    length = max(end - start for _, start, end in chunks)
    if len(chunks) * length * (trunk + length) > WORTH * rows * width * (trunk + width):
        return None
    columns = torch.full((len(chunks), length), width, dtype=torch.long)
    allowed = torch.zeros((len(chunks), length, trunk + length), dtype=torch.bool)
    allowed[:, :, :trunk] = True
    diagonal = torch.eye(length, dtype=torch.bool)
    for k, (row, start, end) in enumerate(chunks):
        n = end - start
        if (
            packed.allowed[row, start:end, trunk:].sum()
            != packed.allowed[row, start:end, trunk + start : trunk + end].sum()
        ):
            return None  # a position sees beyond its chunk: not units side by side (never so when packed)
        columns[k, :n] = torch.arange(start, end)
        allowed[k, :, trunk:] = diagonal  # padding sees itself; the real positions are set next
        allowed[k, :n, trunk : trunk + n] = packed.allowed[row, start:end, trunk + start : trunk + end]
    mask = torch.zeros(allowed.shape, dtype=dtype)
    mask.masked_fill_(~allowed, torch.finfo(dtype).min)
    return AttentionChunks(torch.tensor([row for row, _, _ in chunks]), columns, mask[:, None])


def chunked_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, chunks: AttentionChunks, scale: float, gqa: bool
) -> torch.Tensor:
    """``(rows, width, heads, head_dim)`` attention outputs of queries ``q`` ``(rows, heads, width,
    head_dim)`` over keys and values ``(rows, kv_heads, trunk + width, head_dim)``, computed chunk by
    chunk; the rows' padding columns (in no chunk) get zeros."""
    rows, heads, width, dim = q.shape
    trunk = k.shape[2] - width
    at_rows, at_columns = chunks.rows[:, None], chunks.columns

    def take(t: torch.Tensor) -> torch.Tensor:
        # (rows, h, width, d) -> (chunks, h, length, d), the scratch column all zeros
        padded = torch.nn.functional.pad(t, (0, 0, 0, 1))
        return padded[at_rows, :, at_columns].permute(0, 2, 1, 3)

    qc, kc, vc = take(q), take(k[:, :, trunk:]), take(v[:, :, trunk:])
    if trunk:
        kc = torch.cat([k[:, :, :trunk][chunks.rows], kc], dim=2)
        vc = torch.cat([v[:, :, :trunk][chunks.rows], vc], dim=2)
    out = torch.nn.functional.scaled_dot_product_attention(
        qc, kc, vc, attn_mask=chunks.mask.to(q.device), scale=scale, enable_gqa=gqa
    )
    result = q.new_zeros((rows, width + 1, heads, dim))
    result[at_rows, at_columns] = out.permute(0, 2, 1, 3)  # padding lands in the scratch column
    return result[:, :width]
