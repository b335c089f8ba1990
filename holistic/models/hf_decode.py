"""Decoding for :class:`~holistic.models.hf_engine.TransformersEngine`: prefilled rows to
completions, one forward pass per step for the whole batch.

A decoding step computes few tokens but reads every weight of the model once, so its
cost barely depends on how many tokens it computes. Three things keep the steps few and
each one cheap:

- **Keys/values in place.** With holistic's own Llama (:mod:`holistic.models.llama_native`)
  the batch's keys and values live in buffers allocated with room to grow
  (:class:`DecodeKV`); a step writes its new positions into them instead of copying the
  whole cache into a longer one, which for a batch of long prompts moved more bytes per
  step than reading the weights did.
- **Finished rows leave the batch.** A row that reaches an end-of-sequence token, a stop
  sequence or ``max_tokens`` is dropped before the next step, so it costs nothing after.
- **Drafts from the text so far (prompt lookup).** A greedy row whose last tokens
  occurred earlier in its prompt or completion proposes the tokens that followed them
  there (a few-shot answer copies numbers from its question; a small model that repeats
  itself repeats a whole sentence). The step then computes the row's next token and
  those drafts together; the drafts the model would itself have chosen -- its argmax at
  each position, computed by the same pass -- are kept, the first other choice replaces
  the rest, which are discarded. Completions are therefore the model's greedy tokens,
  only fewer steps compute them. Drafting is bounded by ``draft_tokens`` per step, shared
  by the batch's rows, so a big batch (whose step already computes many tokens) drafts
  little and the tail of a run, where one or two long completions decode alone, drafts
  most.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from holistic.models.llama_native import KVCache, Layer
from holistic.models.local_engine import Generated, GenerateJob, SpecialIds, TokenScore
from holistic.models.stops import tail_has_stop

LOOKUP_NGRAM = 3
"""Tokens of context a draft must match (prompt-lookup decoding's n-gram)."""


@dataclass
class Prefilled:
    """Rows after their prefill pass, ready to decode: keys/values, mask, next logits."""

    rows: list[int]
    """Indices of the jobs, in row order."""
    cache: Any
    mask: torch.Tensor
    next_logits: torch.Tensor
    next_pos: torch.Tensor


class DecodeKV(KVCache):
    """A decoding batch's keys/values in buffers with room to grow, each row at its own length.

    Row ``b`` holds its positions in columns ``[0, length[b])`` (columns the prefill
    padded are marked invalid in ``valid``); a step writes its ``n`` new positions per row
    at ``length[b] .. length[b] + n`` and attends to ``[0, max(length) + n)`` under the mask
    :meth:`step_mask` returns. Columns past a row's length are never attended to, so
    discarded drafts need no cleaning: the next step overwrites them.
    """

    GROW = 128
    """Columns added when a step would not fit."""

    def __init__(self, layers: Sequence[tuple[torch.Tensor, torch.Tensor]], valid: torch.Tensor) -> None:
        super().__init__()
        rows, span = valid.shape
        self.length = torch.full((rows,), span, dtype=torch.long, device=valid.device)
        self._valid = valid.bool()
        self._lengths = [span] * rows
        self._cols: torch.Tensor | None = None
        self._limit = span
        for k, v in layers:
            self.layers.append(Layer(k.contiguous(), v.contiguous()))
        self._capacity = span

    def step_mask(self, n: int, dtype: torch.dtype) -> torch.Tensor:
        """Make room for ``n`` new positions per row; the additive ``[rows, 1, n, columns]`` mask
        of the step (a new position sees the row's valid past and its own earlier new positions)."""
        top = max(self._lengths)
        self._limit = top + n
        if self._limit > self._capacity:
            self._grow(self._limit + self.GROW)
        lockstep = min(self._lengths) == top
        device = self.length.device
        steps = torch.arange(n, device=device)
        self._cols = None if lockstep else self.length[:, None] + steps[None, :]
        columns = torch.arange(self._limit, device=device)
        ends = self.length[:, None] + steps[None, :]  # the column each new position is written to
        allowed = (columns[None, None, :] <= ends[:, :, None]) & self._valid[:, None, : self._limit]
        mask = torch.zeros(allowed.shape, dtype=dtype, device=device)
        return mask.masked_fill_(~allowed, torch.finfo(dtype).min)[:, None]

    def _grow(self, capacity: int) -> None:
        for layer in self.layers:
            for name in ("keys", "values"):
                old = getattr(layer, name)
                # Zeros, not uninitialised memory: a masked column still enters the
                # product (a NaN there would make the row's whole output NaN).
                new = old.new_zeros((*old.shape[:2], capacity, old.shape[3]))
                new[:, :, : old.shape[2]] = old[:, :, : self._capacity]
                setattr(layer, name, new)
        extra = capacity - self._valid.shape[1]
        pad = torch.ones((self._valid.shape[0], extra), dtype=torch.bool, device=self._valid.device)
        self._valid = torch.cat([self._valid, pad], dim=1)
        self._capacity = capacity

    def update(self, index: int, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        layer = self.layers[index]
        n = keys.shape[2]
        if self._cols is None:
            start = self._limit - n
            layer.keys[:, :, start : self._limit] = keys
            layer.values[:, :, start : self._limit] = values
        else:
            rows = torch.arange(keys.shape[0], device=keys.device)[:, None]
            layer.keys[rows, :, self._cols] = keys.transpose(1, 2)
            layer.values[rows, :, self._cols] = values.transpose(1, 2)
        return layer.keys[:, :, : self._limit], layer.values[:, :, : self._limit]

    @property
    def cache(self) -> DecodeKV:
        """What the model's forward pass takes as its cache."""
        return self

    def advance(self, counts: Sequence[int]) -> None:
        """Row ``b`` keeps the first ``counts[b]`` positions the step wrote."""
        self._lengths = [a + c for a, c in zip(self._lengths, counts, strict=True)]
        self.length = torch.tensor(self._lengths, device=self.length.device)

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep only the rows ``indices`` (the others finished)."""
        super().batch_select_indices(indices)
        self._valid = self._valid[indices]
        self.length = self.length[indices]
        self._lengths = [self._lengths[int(i)] for i in indices]


class _AppendKV:
    """Another cache (transformers' ``DynamicCache``): every row one position per step, appended."""

    def __init__(self, cache: Any, mask: torch.Tensor) -> None:
        self.cache, self.mask = cache, mask

    def step_mask(self, n: int, dtype: torch.dtype) -> torch.Tensor:
        ones = torch.ones((self.mask.shape[0], n), dtype=self.mask.dtype, device=self.mask.device)
        self.mask = torch.cat([self.mask, ones], dim=1)
        return self.mask

    def advance(self, counts: Sequence[int]) -> None:
        pass

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self.cache.batch_select_indices(indices)
        self.mask = self.mask[indices]


@dataclass
class _Row:
    """One completion being decoded."""

    job: GenerateJob
    generator: torch.Generator | None
    history: list[int]
    """The prompt, then the tokens generated so far (what drafts are looked up in)."""
    seen: dict[tuple[int, ...], int] = field(default_factory=dict)
    """The last position at which each n-gram of ``history`` was followed by a token."""
    tokens: list[TokenScore] = field(default_factory=list)
    finish: str = "length"
    drafts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for p in range(LOOKUP_NGRAM, len(self.history)):
            self.seen[tuple(self.history[p - LOOKUP_NGRAM : p])] = p

    def append(self, token: int) -> None:
        p = len(self.history)
        self.history.append(token)
        if p >= LOOKUP_NGRAM:
            self.seen[tuple(self.history[p - LOOKUP_NGRAM : p])] = p

    def lookup(self, most: int) -> list[int]:
        """Up to ``most`` tokens that followed the last n-gram where it occurred before."""
        if most <= 0 or self.job.temperature > 0:
            return []
        at = self.seen.get(tuple(self.history[-LOOKUP_NGRAM:]))
        return self.history[at : at + most] if at is not None else []


class Decoding:
    """Decodes one batch of prefilled rows (see the module docstring)."""

    def __init__(
        self,
        forward: Callable[..., torch.Tensor],
        head: Callable[[torch.Tensor], torch.Tensor],
        count: Callable[[int, int], None],
        special: SpecialIds,
        decode: Callable[[Sequence[int]], str],
        *,
        pad_id: int,
        draft_tokens: int,
    ) -> None:
        """``forward(input_ids, attention_mask, position_ids, cache)`` returns the last hidden
        states; ``head`` turns hidden states into logits; ``count(tokens, positions)`` records a pass."""
        self._forward, self._head, self._count = forward, head, count
        self._special, self._decode, self._pad, self._draft = special, decode, pad_id, draft_tokens

    def run(self, state: Prefilled, jobs: Sequence[GenerateJob], out: list[Generated | None]) -> None:
        """Decode ``state``'s rows into ``out`` (indexed like ``jobs``); takes over ``state.cache``."""
        rows = [
            _Row(jobs[i], _generator(jobs[i].seed) if jobs[i].temperature > 0 else None, list(jobs[i].prompt))
            for i in state.rows
        ]
        kv: DecodeKV | _AppendKV | None = None
        draft = 0
        dtype = state.next_logits.dtype
        positions = state.next_pos
        logits = [state.next_logits[b : b + 1] for b in range(len(rows))]
        active = list(range(len(rows)))
        first = True
        while active:
            # The prefill wrote the prompts' positions; each later step writes what it keeps.
            counts = [self._accept(rows[b], logits[slot]) for slot, b in enumerate(active)]
            still = [s for s, b in enumerate(active) if rows[b].finish == "going"]
            if not still:
                break
            if kv is None:
                # Built only when some row goes on: rows that all end at their first token
                # (a multiple-choice letter) never copy their keys/values into buffers.
                kv, draft = self._buffers(state)
            if not first:
                kv.advance(counts)
                positions = positions + torch.tensor(counts, device=positions.device)
            first = False
            if len(still) < len(active):
                keep = torch.tensor(still, device=positions.device)
                kv.batch_select_indices(keep)
                positions = positions[keep]
            active = [active[s] for s in still]
            logits = self._step([rows[b] for b in active], kv, positions, dtype, draft)
        for row, i in zip(rows, state.rows, strict=True):
            out[i] = Generated(tuple(row.tokens), "length" if row.finish == "going" else row.finish)

    def _buffers(self, state: Prefilled) -> tuple[DecodeKV | _AppendKV, int]:
        """The keys/values the steps extend, and the draft budget they allow."""
        if state.cache is None:
            raise RuntimeError("decoding: rows go on past their first token but their keys/values were not kept")
        if isinstance(state.cache, KVCache):
            kv = DecodeKV([(x.keys, x.values) for x in state.cache.layers], state.mask)
            state.cache = None  # the buffers replace these keys/values as they grow: hold them once
            return kv, self._draft
        return _AppendKV(state.cache, state.mask), 0

    def _accept(self, row: _Row, logits: torch.Tensor) -> int:
        """Take the row's next tokens from the logits of its last step (one per position it
        computed: its last token, then its drafts); returns how many the step keeps."""
        job = row.job
        lps = torch.log_softmax(logits.float(), dim=-1)
        argmaxes = lps.argmax(dim=-1).tolist()
        tops = topk_rows(lps, job.top_k)
        row.finish = "going"
        kept = 0
        for j, argmax in enumerate(argmaxes):
            if row.generator is not None:
                probs = torch.softmax(logits[j].float() / job.temperature, dim=-1)
                tok = int(torch.multinomial(probs.cpu(), 1, generator=row.generator).item())
            else:
                tok = int(argmax)
            row.tokens.append(TokenScore(tok, float(lps[j, tok]), tok == argmax, tops[j] if tops else {}))
            row.append(tok)
            kept += 1
            ids = row.history[len(job.prompt) :]
            if tok in self._special.eos or tail_has_stop(self._decode, ids, job.stop):
                row.finish = "stop"
                break
            if len(row.tokens) >= job.max_tokens:
                row.finish = "length"
                break
            if j >= len(row.drafts) or row.drafts[j] != tok:
                break
        return kept

    def _step(
        self, rows: list[_Row], kv: DecodeKV | _AppendKV, positions: torch.Tensor, dtype: torch.dtype, draft: int
    ) -> list[torch.Tensor]:
        """One forward pass: every row's last token and its drafts; the logits of each row."""
        share = draft // len(rows)
        for row in rows:
            row.drafts = row.lookup(min(share, row.job.max_tokens - len(row.tokens) - 1))
        n = 1 + max(len(r.drafts) for r in rows)
        ids = torch.full((len(rows), n), self._pad, dtype=torch.long)
        for b, row in enumerate(rows):
            ids[b, : 1 + len(row.drafts)] = torch.tensor([row.history[-1], *row.drafts])
        device = positions.device
        mask = kv.step_mask(n, dtype)
        self._count(sum(1 + len(r.drafts) for r in rows), len(rows) * n)
        hidden = self._forward(
            ids.to(device), mask, positions[:, None] + torch.arange(n, device=device)[None, :], kv.cache
        )
        if n == 1:
            logits = self._head(hidden[:, 0])
            return [logits[b : b + 1] for b in range(len(rows))]
        logits = self._head(torch.cat([hidden[b, : 1 + len(r.drafts)] for b, r in enumerate(rows)]))
        ends = list(itertools.accumulate(1 + len(r.drafts) for r in rows))
        return [logits[end - 1 - len(r.drafts) : end] for end, r in zip(ends, rows, strict=True)]


def _generator(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed & ((1 << 63) - 1))
    return g


def topk_rows(lp: torch.Tensor, k: int) -> list[dict[int, float]]:
    if k <= 0:
        return []
    values, indices = lp.topk(min(k, lp.shape[-1]), dim=-1)
    return [
        {int(i): float(v) for i, v in zip(ind.tolist(), val.tolist(), strict=True)}
        for ind, val in zip(indices, values, strict=True)
    ]
