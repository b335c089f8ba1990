"""Packed rows computed unit by unit: attention span by span, the last block only where
logits are read, each shared position once through the output head (holistic's own Llama)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from holistic.models.hf_rows import PackedRows, Segment, TokenSeq, pack_rows  # noqa: E402
from holistic.models.hf_scores import token_scores  # noqa: E402
from holistic.models.llama_native import NativeLlamaForCausalLM, new_cache  # noqa: E402
from holistic.models.local_engine import ScoreJob  # noqa: E402

CONFIG = {
    "hidden_size": 32,
    "intermediate_size": 48,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 2,
    "vocab_size": 50,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": True,
}


def _state() -> dict[str, Any]:
    torch.manual_seed(0)
    h, inner, d = 32, 48, 8
    state = {"model.embed_tokens.weight": torch.randn(50, h), "model.norm.weight": 1 + 0.1 * torch.randn(h)}
    for i in range(2):
        p = f"model.layers.{i}."
        for name, shape in {
            "input_layernorm": (h,),
            "post_attention_layernorm": (h,),
            "self_attn.q_proj": (4 * d, h),
            "self_attn.k_proj": (2 * d, h),
            "self_attn.v_proj": (2 * d, h),
            "self_attn.o_proj": (h, 4 * d),
            "mlp.gate_proj": (inner, h),
            "mlp.up_proj": (inner, h),
            "mlp.down_proj": (h, inner),
        }.items():
            state[p + name + ".weight"] = (1.0 if len(shape) == 1 else 0.2) * torch.randn(shape)
    return state


def _model() -> NativeLlamaForCausalLM:
    return NativeLlamaForCausalLM(CONFIG, _state(), torch.float32).eval()


def _packed(trunk: int) -> tuple[PackedRows, list[TokenSeq]]:
    """Two rows over a trunk of ``trunk`` positions: three units (a context and its choices;
    a short one joined to its neighbour; one alone), then padding."""
    gen = torch.Generator().manual_seed(1)
    ids = [tuple(int(t) for t in torch.randint(0, 50, (n,), generator=gen)) for n in (trunk + 9, trunk + 7, trunk + 4)]
    seqs = [TokenSeq(ids[0] + (3, 4, 5), trunk + 8), TokenSeq(ids[0] + (6, 7), trunk + 8)]
    seqs += [TokenSeq(ids[1], trunk + 6), TokenSeq(ids[2], trunk + 2)]
    choices = [Segment(0, trunk, trunk + 9, -1, False), Segment(0, trunk + 9, trunk + 12, 0, True)]
    choices.append(Segment(1, trunk + 9, trunk + 11, 0, True))
    rows = [[choices, [Segment(3, trunk, trunk + 4, -1, True)]], [[Segment(2, trunk, trunk + 7, -1, True)]]]
    return pack_rows(rows, seqs, trunk, 0), seqs


def test_a_rows_blocks_cover_it_in_order_and_no_column_attends_across_them() -> None:
    packed, _ = _packed(3)
    width = packed.input_ids.shape[1]
    # row 0: its two units (14 + 4 columns) joined, being short; row 1: its unit, then padding
    assert packed.blocks == [[(0, 18)], [(0, 7), (7, 18)]]
    for row, spans in enumerate(packed.blocks):
        assert spans[0][0] == 0 and spans[-1][1] == width
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
        for s, e in spans:
            outside = torch.ones(width, dtype=torch.bool)
            outside[s:e] = False
            assert not packed.allowed[row, s:e, 3:][:, outside].any()
            assert packed.allowed[row, s:e, :3].all()  # every column sees the trunk


@pytest.mark.parametrize("trunk", [0, 3])
def test_attention_span_by_span_and_the_last_block_at_kept_positions_compute_what_whole_rows_do(
    trunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import holistic.models.hf_rows as hf_rows

    decoder = _model().get_decoder()
    monkeypatch.setattr(hf_rows, "BLOCK_JOIN", 0)  # every unit its own span
    packed, _ = _packed(trunk)
    assert packed.blocks == [[(0, 14), (14, 18)], [(0, 7), (7, 18)]]
    mask = torch.zeros(packed.allowed.shape).masked_fill_(~packed.allowed, torch.finfo(torch.float32).min)[:, None]
    width = packed.input_ids.shape[1]
    keep = [r * width + c for r, c in zip(packed.pick_rows, packed.pick_columns, strict=True)]
    keep = list(dict.fromkeys(keep))

    def run(**extra: object) -> Any:
        cache = None
        with torch.inference_mode():
            if trunk:  # the trunk's keys/values, one row seen by both (as the engine passes them)
                kept = new_cache()
                decoder(torch.tensor([[7, 8, 9]]), use_cache=True, past_key_values=kept)
                pairs = [
                    (layer.keys.expand(2, -1, -1, -1), layer.values.expand(2, -1, -1, -1)) for layer in kept.layers
                ]
                cache = new_cache(pairs, keep=False)
            out = decoder(
                packed.input_ids,
                attention_mask=mask,
                position_ids=packed.positions,
                use_cache=cache is not None,
                past_key_values=cache,
                **extra,
            )
        return out.last_hidden_state

    whole = run().reshape(-1, CONFIG["hidden_size"])[torch.tensor(keep)]
    spans = run(attention_blocks=packed.blocks, keep_positions=torch.tensor(keep))
    assert spans.shape == whole.shape
    assert torch.allclose(spans, whole, atol=1e-5)
    assert not torch.equal(whole[0], whole[1])  # the positions differ: a wrong pick would show


def test_scores_read_shared_rows_and_a_tie_goes_to_the_first_maximal_token() -> None:
    logits = torch.full((3, 6), -2.0)
    logits[0, 2] = logits[0, 4] = 1.0  # a tie: token 2 comes first, so it is the greedy one
    logits[1, 5] = 3.0
    logits[2, 1] = 0.5
    jobs = [ScoreJob((9,), (2, 5)), ScoreJob((9,), (4,)), ScoreJob((9,), (4, 1))]
    rows = [0, 1, 0, 0, 2]  # the first row is every job's first prediction
    scores = token_scores(jobs, logits, rows)
    lp = torch.log_softmax(logits, dim=-1)
    assert [[(s.token_id, s.logprob, s.is_argmax) for s in job] for job in scores] == [
        [(2, float(lp[0, 2]), True), (5, float(lp[1, 5]), True)],
        [(4, float(lp[0, 4]), False)],
        [(4, float(lp[0, 4]), False), (1, float(lp[2, 1]), True)],
    ]
    ranked = token_scores([ScoreJob(j.context, j.continuation, top_k=2) for j in jobs], logits, rows)
    assert [[(s.logprob, s.is_argmax) for s in job] for job in ranked] == [
        [(s.logprob, s.is_argmax) for s in job] for job in scores
    ]


def test_rotating_paired_heads_is_the_checkpoints_rotate_half_in_both_kernels() -> None:
    """Queries and keys come out of projections whose rows were paired at load (partners
    ``i`` and ``i + d/2`` side by side): rotating them, as a complex product or pair by pair,
    is transformers' ``x cos + rotate_half(x) sin`` on the checkpoint's layout, reordered."""
    from holistic.models.llama_native import _paired, _Pass

    b, n, heads, d = 2, 5, 3, 8
    gen = torch.Generator().manual_seed(2)
    weight, x = torch.randn(heads * d, 6, generator=gen), torch.randn(b, n, 6, generator=gen)
    angles = torch.randn(b, n, d // 2, generator=gen)
    cos, sin = angles.cos()[:, :, None], angles.sin()[:, :, None]
    plain = (x @ weight.T).view(b, n, heads, d)  # the checkpoint's layout
    halves = torch.cat([-plain[..., d // 2 :], plain[..., : d // 2]], dim=-1)  # rotate_half
    expected = plain * torch.cat([cos, cos], -1) + halves * torch.cat([sin, sin], -1)
    paired = (x @ _paired(weight, heads).T).view(b, n, heads, d)
    order = torch.arange(d).view(2, d // 2).T.reshape(-1)  # paired position -> checkpoint position
    assert torch.equal(paired, plain[..., order])
    for turn in (torch.complex(cos, sin), None):
        rotated = _Pass(cos, sin, turn).rotate(paired)
        assert torch.allclose(rotated, expected[..., order], atol=1e-6)
    assert not torch.equal(_Pass(cos, sin).rotate(paired), paired)  # it does rotate
