"""Attention by chunks of packed scoring rows: the same outputs as attention over the whole row
under its tree mask, for every real position, over a trunk or not, with grouped key/value heads."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from holistic.models.hf_chunks import attention_chunks, chunked_attention  # noqa: E402
from holistic.models.hf_rows import PackedRows, Segment, TokenSeq, pack_rows  # noqa: E402


def _unit(seq: int, context: int, choices: list[int]) -> list[Segment]:
    """A question's context (sequence ``seq``) and its choices (the sequences after it) as one unit."""
    unit = [Segment(seq, 0, context, -1, False)]
    unit += [Segment(seq + 1 + k, context, context + n, 0, True) for k, n in enumerate(choices)]
    return unit


def _batch(trunk: int) -> tuple[PackedRows, list[TokenSeq]]:
    shapes = [(9, [3, 2, 4]), (5, [1, 1]), (14, [2, 6, 3, 1]), (7, [2]), (3, [5, 4]), (11, [1, 2, 3])]
    seqs: list[TokenSeq] = []
    units = []
    for context, choices in shapes:
        first = len(seqs)
        seqs.append(TokenSeq(tuple(range(1, trunk + context + 1)), trunk))
        for n in choices:
            seqs.append(TokenSeq(tuple(range(1, trunk + context + 1)) + tuple(range(50, 50 + n)), trunk + context - 1))
        units.append(
            [Segment(s.seq, s.start + trunk, s.end + trunk, s.parent, s.leaf) for s in _unit(first, context, choices)]
        )
    rows = [units[0:3], units[3:5], units[5:6]]  # rows of unequal lengths: the last ones padded
    return pack_rows(rows, seqs, trunk, 0), seqs


@pytest.mark.parametrize("trunk", [0, 6])
def test_chunked_attention_is_the_rows_attention_at_every_real_position(trunk: int) -> None:
    packed, _ = _batch(trunk)
    chunks = attention_chunks(packed, trunk, torch.float32)
    assert chunks is not None
    assert len(chunks.rows) > packed.input_ids.shape[0]  # rows cut into stretches
    rows, width = packed.input_ids.shape
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(rows, 4, width, 8, generator=gen)
    k = torch.randn(rows, 2, trunk + width, 8, generator=gen)
    v = torch.randn(rows, 2, trunk + width, 8, generator=gen)
    mask = torch.zeros(packed.allowed.shape).masked_fill_(~packed.allowed, torch.finfo(torch.float32).min)
    dense = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask[:, None], scale=0.3, enable_gqa=True
    )
    ours = chunked_attention(q, k, v, chunks, 0.3, True)
    for row, spans in enumerate(packed.unit_spans):
        used = spans[-1][1]
        assert torch.allclose(ours[row, :used], dense.transpose(1, 2)[row, :used], atol=1e-6)
        assert not ours[row, used:].any()  # the row's padding: in no chunk


def test_one_unit_a_row_keeps_the_rows_attention() -> None:
    _, seqs = _batch(0)
    one_each = pack_rows([[_unit(0, 9, [3, 2, 4])], [_unit(4, 5, [1, 1])]], seqs, 0, 0)
    assert attention_chunks(one_each, 0, torch.float32) is None  # each chunk would be its row
