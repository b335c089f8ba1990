"""Llama-architecture decoders run directly in torch, without importing transformers.

Importing transformers and building a model through ``from_pretrained`` costs several
seconds of a short run on a small CPU, and the module tree it builds holds its own copy
of the weights while they load. For the architecture of the embedded model (Llama:
RMSNorm, rotary positions, grouped-query attention, SiLU-gated MLP -- also SmolLM2,
TinyLlama, Llama 2/3 without rope scaling) this module reads ``config.json`` and the
safetensors weights itself and computes the same function, operation for operation:

- the weights are the loaded safetensors tensors themselves, mapped from the file (no
  second copy while a module tree is built), except the query and key projections: those
  are copied once with the rows of each head's rotary pairs side by side (:func:`_paired`),
  so that rotating a head is one complex product where torch's CPU kernels have one;
- RMSNorm is a vector norm and two products (torch's ``rms_norm`` takes a few more passes
  over the activations); rotary cosines and sines are computed once per
  forward pass and shared by all layers;
- attention is ``scaled_dot_product_attention`` with the engine's mask (a 2-D padding
  mask made causal here, or the engine's 4-D additive tree mask as given); on packed rows
  the engine also names each row's units, whose attention is then computed unit by unit
  (``attention_blocks``), not over the whole row, most of which a unit never sees;
- the engine names the positions whose logits it reads (``keep_positions``): the last
  layer's output projection and MLP run there alone.

:func:`holistic.models.hf_local.native_llama_supported` says which configs qualify;
anything else (rope scaling, biases, another architecture, sharded or missing
safetensors) loads through transformers as before. Deployment arg ``native: false`` forces transformers. Log-likelihoods agree
with transformers' to within float32 rounding (a test checks 1e-4 on a random Llama and
the embedded model).

The keys/values cache (:class:`KVCache`) has the few operations the engine uses on
transformers' ``DynamicCache``: per-layer ``keys``/``values``, construction from
``(keys, values)`` pairs, ``batch_select_indices``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from holistic.models.hf_local import read_json_object


def load_native_llama(folder: Path, dtype: torch.dtype, device: str) -> NativeLlamaForCausalLM:
    """The model in ``folder`` (see :func:`holistic.models.hf_local.native_llama_supported`), in eval mode."""
    from safetensors.torch import load_file

    config = read_json_object(folder / "config.json")
    state = load_file(str(folder / "model.safetensors"))
    model = NativeLlamaForCausalLM(config, state, dtype)
    return model.to(device).eval()


@dataclass
class Layer:
    """One layer's keys and values, ``[batch, kv_heads, positions, head_dim]``."""

    keys: torch.Tensor
    values: torch.Tensor


class KVCache:
    """Per-layer keys and values, ``[batch, kv_heads, positions, head_dim]``.

    ``keep=False``: a read-only past (a shared prefix, often one row broadcast to the whole
    batch) that the new positions attend to but that never grows. A forward pass whose
    keys/values nobody needs afterwards (scoring, a one-token answer) then holds each
    layer's concatenation only while that layer runs, instead of a copy of the prefix per
    row for every layer at once.
    """

    def __init__(self, data: Sequence[tuple[torch.Tensor, torch.Tensor]] | None = None, keep: bool = True) -> None:
        self.layers: list[Layer] = [Layer(k, v) for k, v in data or ()]
        self.keep = keep

    def update(self, index: int, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append a layer's new keys/values; returns all of them."""
        if not self.keep:
            if index < len(self.layers):
                layer = self.layers[index]
                return torch.cat([layer.keys, keys], dim=2), torch.cat([layer.values, values], dim=2)
            return keys, values
        if index == len(self.layers):
            self.layers.append(Layer(keys, values))
        else:
            layer = self.layers[index]
            layer.keys = torch.cat([layer.keys, keys], dim=2)
            layer.values = torch.cat([layer.values, values], dim=2)
        layer = self.layers[index]
        return layer.keys, layer.values

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        for layer in self.layers:
            layer.keys = layer.keys[indices]
            layer.values = layer.values[indices]


@dataclass
class _Output:
    last_hidden_state: torch.Tensor


class _Attention(nn.Module):
    def __init__(self, hidden: int, heads: int, kv_heads: int, head_dim: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.q = nn.Linear(hidden, heads * head_dim, bias=False, device="meta")
        self.k = nn.Linear(hidden, kv_heads * head_dim, bias=False, device="meta")
        self.v = nn.Linear(hidden, kv_heads * head_dim, bias=False, device="meta")
        self.o = nn.Linear(heads * head_dim, hidden, bias=False, device="meta")

    def forward(
        self, x: torch.Tensor, shared: _Pass, mask: torch.Tensor, cache: KVCache | None, i: int
    ) -> torch.Tensor:
        result: torch.Tensor = self.o(self.attend(x, shared, mask, cache, i))
        return result

    def attend(self, x: torch.Tensor, shared: _Pass, mask: torch.Tensor, cache: KVCache | None, i: int) -> torch.Tensor:
        """The heads' outputs, ``[batch, positions, heads * head_dim]``, before the output projection."""
        b, n, _ = x.shape
        d, heads, kv = self.head_dim, self.heads, self.kv_heads
        q = shared.rotate(self.q(x).view(b, n, heads, d)).transpose(1, 2)
        k = shared.rotate(self.k(x).view(b, n, kv, d)).transpose(1, 2)
        v = self.v(x).view(b, n, kv, d).transpose(1, 2)
        if cache is not None:
            k, v = cache.update(i, k, v)
        gqa = kv != heads  # each key/value head serves a group of query heads
        if shared.spans is None:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=d**-0.5, enable_gqa=gqa)
        else:
            out = _block_attention(q, k, v, shared.spans, scale=d**-0.5, gqa=gqa)
        return out.transpose(1, 2).reshape(b, n, heads * d)


class _Block(nn.Module):
    def __init__(self, hidden: int, inner: int, heads: int, kv_heads: int, head_dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.norm1 = nn.Parameter(torch.ones(hidden, device="meta"))
        self.attn = _Attention(hidden, heads, kv_heads, head_dim)
        self.norm2 = nn.Parameter(torch.ones(hidden, device="meta"))
        self.gate = nn.Linear(hidden, inner, bias=False, device="meta")
        self.up = nn.Linear(hidden, inner, bias=False, device="meta")
        self.down = nn.Linear(inner, hidden, bias=False, device="meta")

    def forward(
        self, x: torch.Tensor, shared: _Pass, mask: torch.Tensor, cache: KVCache | None, i: int
    ) -> torch.Tensor:
        # the sum lands in the attention's own output: the input stays as given
        return self._mlp(self.attn(_rms(x, self.norm1, self.eps), shared, mask, cache, i).add_(x))

    def kept(
        self, x: torch.Tensor, shared: _Pass, mask: torch.Tensor, cache: KVCache | None, i: int, keep: torch.Tensor
    ) -> torch.Tensor:
        """The block at the flat positions ``keep`` only, ``[len(keep), hidden]`` (as the last
        block, whose other positions nobody reads): attention as usual, since every position's
        keys and values are attended to; the output projection and the MLP at ``keep`` alone."""
        heads = self.attn.attend(_rms(x, self.norm1, self.eps), shared, mask, cache, i)
        kept = x.reshape(-1, x.shape[-1])[keep] + self.attn.o(heads.reshape(-1, heads.shape[-1])[keep])
        return self._mlp(kept)

    def _mlp(self, x: torch.Tensor) -> torch.Tensor:
        h = _rms(x, self.norm2, self.eps)
        inner = F.silu(self.gate(h), inplace=True)  # in place: a new output costs twice the time
        inner.mul_(self.up(h))
        return x.add_(self.down(inner))


class NativeLlamaModel(nn.Module):
    """The decoder: embeddings, blocks, final norm (returns the last hidden states)."""

    inv_freq: torch.Tensor

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        hidden = int(config["hidden_size"])
        heads = int(config["num_attention_heads"])
        kv_heads = int(config.get("num_key_value_heads") or heads)
        head_dim = int(config.get("head_dim") or hidden // heads)
        eps = float(config.get("rms_norm_eps", 1e-6))
        self.embed: nn.Embedding  # given the loaded tensor (initialising one on meta costs a second)
        self.blocks = nn.ModuleList(
            _Block(hidden, int(config["intermediate_size"]), heads, kv_heads, head_dim, eps)
            for _ in range(int(config["num_hidden_layers"]))
        )
        self.norm = nn.Parameter(torch.ones(hidden, device="meta"))
        self.eps = eps
        rope = config.get("rope_parameters") or {}
        theta = float(rope.get("rope_theta") or config.get("rope_theta") or 10000.0)
        exponent = torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim
        self.register_buffer("inv_freq", 1.0 / (theta**exponent), persistent=False)  # float32, moved with the model

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        use_cache: bool = False,
        past_key_values: KVCache | None = None,
        attention_blocks: Sequence[Sequence[tuple[int, int]]] | None = None,
        keep_positions: torch.Tensor | None = None,
    ) -> _Output:
        """``attention_blocks``: for each row, spans of its columns (all of them, in order) that
        attend to nothing outside themselves but the past (the engine's packed units): without
        a past, each span's attention is computed on its own, not over the whole row (see
        :func:`_block_attention`).

        ``keep_positions``: the flat positions (``row * width + column``) whose hidden states
        are wanted; the last hidden states are then ``[len(keep_positions), hidden]``, in
        that order, and the last block computes nothing else past its attention."""
        b, n = input_ids.shape
        cache = past_key_values  # the engine passes one whenever it wants keys/values kept
        past = cache.layers[0].keys.shape[2] if cache is not None and cache.layers else 0
        if position_ids is None:
            position_ids = torch.arange(past, past + n, device=input_ids.device)[None, :].expand(b, -1)
        x = self.embed(input_ids)
        freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :].float()
        blocks = attention_blocks
        if blocks is not None and (past or all(len(spans) == 1 for spans in blocks)):
            # one span per row, or a past that every span attends to: its keys are most of the
            # work and span by span would only add calls; the batched call over whole rows
            blocks = None
        cos, sin = freqs.cos().to(x.dtype)[:, :, None], freqs.sin().to(x.dtype)[:, :, None]
        # a complex product where torch's CPU kernels have one: a third of the real pair by pair
        turn = torch.complex(cos, sin) if x.device.type == "cpu" and x.dtype in (torch.float32, torch.float64) else None
        mask = _attention_mask(attention_mask, b, n, past, x.dtype, x.device)
        shared = _Pass(cos, sin, turn, _span_masks(mask, blocks) if blocks is not None else None)
        last = len(self.blocks) - 1 if keep_positions is not None else len(self.blocks)
        for i, block in enumerate(self.blocks):
            if i < last:
                x = block(x, shared, mask, cache, i)
            else:
                assert isinstance(block, _Block) and keep_positions is not None
                x = block.kept(x, shared, mask, cache, i, keep_positions)
        return _Output(F.rms_norm(x, x.shape[-1:], self.norm, self.eps))


class NativeLlamaForCausalLM(nn.Module):
    """The decoder and its output head, with the small surface the engine uses."""

    def __init__(self, config: dict[str, Any], state: dict[str, torch.Tensor], dtype: torch.dtype) -> None:
        """Takes the tensors out of ``state`` (it is emptied): built on the meta device and
        given the loaded tensors, so the weights are in memory once, not twice."""
        super().__init__()
        self.config = SimpleNamespace(**config)
        self.model = NativeLlamaModel(config)
        self.lm_head = nn.Linear(int(config["hidden_size"]), int(config["vocab_size"]), bias=False, device="meta")
        self._load(state, bool(config.get("tie_word_embeddings", False)), dtype)

    def _load(self, state: dict[str, torch.Tensor], tied: bool, dtype: torch.dtype) -> None:
        def take(name: str, heads: int = 0) -> nn.Parameter:
            """The tensor ``name``, in ``dtype``; with ``heads``, a query or key projection's
            rows paired for the rotation (:func:`_paired`)."""
            if name not in state:
                raise KeyError(f"weights lack {name}")
            weight = state.pop(name).to(dtype)
            return nn.Parameter(_paired(weight, heads) if heads else weight, requires_grad=False)

        m = self.model
        # Tied embeddings are stored once, under either name.
        embed = "model.embed_tokens.weight"
        weight = take(embed if embed in state or not tied else "lm_head.weight")
        m.embed = nn.Embedding.from_pretrained(weight)  # type: ignore[no-untyped-call]
        m.norm = take("model.norm.weight")
        for i, block in enumerate(m.blocks):
            assert isinstance(block, _Block)
            p = f"model.layers.{i}."
            attn = block.attn
            attn.q.weight = take(p + "self_attn.q_proj.weight", attn.heads)
            attn.k.weight = take(p + "self_attn.k_proj.weight", attn.kv_heads)
            attn.v.weight = take(p + "self_attn.v_proj.weight")
            attn.o.weight = take(p + "self_attn.o_proj.weight")
            block.gate.weight = take(p + "mlp.gate_proj.weight")
            block.up.weight = take(p + "mlp.up_proj.weight")
            block.down.weight = take(p + "mlp.down_proj.weight")
            block.norm1 = take(p + "input_layernorm.weight")
            block.norm2 = take(p + "post_attention_layernorm.weight")
        head = "lm_head.weight"
        self.lm_head.weight = take(head) if head in state and not tied else m.embed.weight

    def forward(self, input_ids: torch.Tensor, **inputs: Any) -> SimpleNamespace:
        """Logits at every position, given the decoder's inputs (:meth:`NativeLlamaModel.forward`);
        the engine itself runs the decoder and the head apart, the head only where logits are
        needed."""
        hidden = self.model(input_ids, **inputs).last_hidden_state
        return SimpleNamespace(logits=self.lm_head(hidden), past_key_values=inputs.get("past_key_values"))

    def get_decoder(self) -> NativeLlamaModel:
        return self.model

    def get_output_embeddings(self) -> nn.Linear:
        return self.lm_head


def new_cache(data: Sequence[tuple[torch.Tensor, torch.Tensor]] | None = None, keep: bool = True) -> KVCache:
    return KVCache(data, keep)


def _rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm: ``x`` divided by its root mean square (plus ``eps``), times ``weight``: one
    pass for the norm, one for each product."""
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    return (x * torch.rsqrt(norm.square_().div_(x.shape[-1]).add_(eps))).mul_(weight)


@dataclass
class _Pass:
    """What every layer of one forward pass shares, computed once: the rotary cosines and
    sines, ``[batch, positions, 1, head_dim / 2]`` (also as one complex tensor, ``turn``,
    where the rotation runs as a complex product), and, when attention is computed span by
    span, each row's span lengths and the span's own part of the mask."""

    cos: torch.Tensor
    sin: torch.Tensor
    turn: torch.Tensor | None = None
    spans: list[tuple[list[int], list[torch.Tensor]]] | None = None

    def rotate(self, x: torch.Tensor) -> torch.Tensor:
        """Rotary positions on ``x``, laid out ``[batch, positions, heads, head_dim]`` with each
        head's rotated pairs side by side (see :func:`_paired`): ``(a, b)`` becomes
        ``(a cos - b sin, b cos + a sin)``, as the complex product ``(a + ib)(cos + i sin)``
        where there is ``turn``, else pair by pair (a product, then a multiply-add)."""
        b, n, h, d = x.shape
        if self.turn is not None:
            return torch.view_as_real(torch.view_as_complex(x.view(b, n, h, d // 2, 2)) * self.turn).view(b, n, h, d)
        first, second = x[..., 0::2], x[..., 1::2]
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        torch.mul(first, self.cos, out=out[..., 0::2]).addcmul_(second, self.sin, value=-1)
        torch.mul(second, self.cos, out=out[..., 1::2]).addcmul_(first, self.sin)
        return out


def _paired(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """A query or key projection's rows reordered (a copy) so that, within each head, the
    rotary partners ``i`` and ``i + head_dim / 2`` come out side by side, at ``2i`` and
    ``2i + 1``: a rotation is then one complex product. Attention scores are sums over a
    head's dimensions, the same function of the input in any order queries and keys share
    (up to float rounding); values, and so the heads' outputs, keep the checkpoint's order."""
    rows, columns = weight.shape
    d = rows // heads
    return weight.view(heads, 2, d // 2, columns).transpose(1, 2).reshape(rows, columns)


def _span_masks(
    mask: torch.Tensor, blocks: Sequence[Sequence[tuple[int, int]]]
) -> list[tuple[list[int], list[torch.Tensor]]]:
    """Each row's span lengths and each span's own square of ``mask`` (contiguous): cut once
    per forward pass for all its layers."""
    return [
        ([e - s for s, e in spans], [mask[r : r + 1, :, s:e, s:e].contiguous() for s, e in spans])
        for r, spans in enumerate(blocks)
    ]


def _block_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    spans: Sequence[tuple[list[int], list[torch.Tensor]]],
    *,
    scale: float,
    gqa: bool,
) -> torch.Tensor:
    """Attention computed span by span, with no past: the queries of each span of row ``r``
    against the span's own keys, under the span's own mask (:func:`_span_masks`). The same
    values as over whole rows when no column attends outside its span, for a fraction of
    the work on rows packed with several units."""
    b, heads, n, d = q.shape
    out = torch.empty((b, n, heads, d), dtype=q.dtype, device=q.device).transpose(1, 2)
    for r, (lengths, masks) in enumerate(spans):
        cut = [torch.split(t[r : r + 1], lengths, dim=2) for t in (q, k, v, out)]
        for qs, ks, vs, outs, m in zip(*cut, masks, strict=True):
            outs.copy_(F.scaled_dot_product_attention(qs, ks, vs, attn_mask=m, scale=scale, enable_gqa=gqa))
    return out


def _attention_mask(
    mask: torch.Tensor | None, b: int, n: int, past: int, dtype: torch.dtype, device: Any
) -> torch.Tensor:
    """An additive ``[b, 1, n, past + n]`` mask: the engine's 4-D mask as given, or a 2-D
    padding mask (1 = a real position) combined with causality."""
    if mask is not None and mask.dim() == 4:
        return mask.to(dtype)
    causal = torch.ones((n, past + n), dtype=torch.bool, device=device).tril(diagonal=past)
    allowed = causal[None].expand(b, -1, -1)
    if mask is not None:
        allowed = allowed & mask[:, None, :].bool()
    out = torch.zeros((b, 1, n, past + n), dtype=dtype, device=device)
    return out.masked_fill_(~allowed[:, None], torch.finfo(dtype).min)
