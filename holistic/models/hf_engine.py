"""The transformers engine: batched scoring and generation with prefix reuse.

Every job becomes a *row*: a token sequence and the first position whose logits the
job needs. Rows are arranged in a prefix tree (:mod:`holistic.models.prefix_plan`);
the key/value cache of each shared prefix is computed once (extending its parent's)
and copied, expanded to the batch, for the rows continuing from it. Only the rows'
own suffixes are then run, right-padded, in batches.

Within a tree node, rows are batched longest suffix first. Two reasons: rows of
similar length land in the same batch, so little compute is spent on padding; and
the largest batch runs first, so a batch that does not fit in memory fails at once
rather than after most of the work is done. Results are put back in input order.

Logits are only materialised at the positions a job needs (``logits_to_keep``), so
a batch of long rows does not allocate ``batch x length x vocab`` floats.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from holistic.core.interfaces import Tokenizer
from holistic.models.local_engine import Generated, GenerateJob, ScoreJob, SpecialIds, TokenScore
from holistic.models.prefix_plan import PrefixNode, plan_prefixes
from holistic.models.stops import tail_has_stop


@dataclass(frozen=True)
class EngineOptions:
    """Batching and caching knobs of :class:`TransformersEngine`."""

    batch_size: int = 16
    """Most rows per forward pass."""
    max_batch_tokens: int = 4096
    """Most (rows x padded suffix length) per forward pass."""
    prefix_cache: bool = True
    """Compute shared prefixes once (off: every row from scratch, for comparison)."""
    min_shared_prefix: int = 16
    """Fewest shared tokens that make a prefix worth caching."""


@dataclass
class _Row:
    ids: tuple[int, ...]
    need_from: int
    """First position whose logits the job needs (the prefix taken from cache ends at or before it)."""
    job: int
    """Index of the job this row belongs to."""


BatchHandler = Callable[[list[_Row], Any, int], None]


class TransformersEngine:
    """Runs a transformers causal LM on token ids (see the module docstring)."""

    name = "transformers"

    def __init__(
        self,
        model: Any,
        tokenizer: Tokenizer,
        special: SpecialIds,
        *,
        pad_id: int,
        options: EngineOptions | None = None,
    ) -> None:
        self.model = model
        self._tokenizer = tokenizer
        self._special = special
        self.pad_id = pad_id
        self.options = options or EngineOptions()
        self.device = next(model.parameters()).device
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._keep_logits = "logits_to_keep" in params

    # -- protocol ---------------------------------------------------------------------------

    def tokenizer(self) -> Tokenizer:
        return self._tokenizer

    def special_ids(self) -> SpecialIds:
        return self._special

    def close(self) -> None:
        self.model = None

    def score(self, jobs: Sequence[ScoreJob]) -> list[list[TokenScore]]:
        rows = [_Row(ids=j.context + j.continuation, need_from=len(j.context) - 1, job=i) for i, j in enumerate(jobs)]
        out: list[list[TokenScore]] = [[] for _ in jobs]

        def handle(batch: list[_Row], cache: Any, start: int) -> None:
            logits_rows = self._forward_batch(batch, cache, start, use_cache=False)[0]
            for row, logits in zip(batch, logits_rows, strict=True):
                job = jobs[row.job]
                # logits at positions len(context)-1 .. end-2 predict the continuation
                lp = torch.log_softmax(logits[: len(job.continuation)].float(), dim=-1)
                targets = torch.tensor(job.continuation, device=lp.device)
                chosen = lp.gather(1, targets[:, None])[:, 0]
                argmax = lp.argmax(dim=-1)
                tops = _topk_rows(lp, job.top_k)
                out[row.job] = [
                    TokenScore(int(t), float(c), bool(a == t), tops[k] if tops else {})
                    for k, (t, c, a) in enumerate(zip(job.continuation, chosen.tolist(), argmax.tolist(), strict=True))
                ]

        self._run(rows, handle)
        return out

    def generate(self, jobs: Sequence[GenerateJob]) -> list[Generated]:
        rows = [_Row(ids=j.prompt, need_from=len(j.prompt) - 1, job=i) for i, j in enumerate(jobs)]
        out: list[Generated | None] = [None] * len(jobs)

        def handle(batch: list[_Row], cache: Any, start: int) -> None:
            for row, gen in zip(batch, self._decode_batch(batch, [jobs[r.job] for r in batch], cache, start), strict=True):
                out[row.job] = gen

        self._run(rows, handle)
        return [g if g is not None else Generated((), "length") for g in out]

    # -- prefix tree and batching -----------------------------------------------------------

    def _run(self, rows: list[_Row], handle: BatchHandler) -> None:
        if not rows:
            return
        seqs = [r.ids for r in rows]
        if self.options.prefix_cache:
            root = plan_prefixes(seqs, [r.need_from for r in rows], self.options.min_shared_prefix)
        else:
            root = PrefixNode(end=0, members=list(range(len(rows))))
        with torch.inference_mode():
            self._visit(root, rows, None, 0, handle)

    def _visit(self, node: PrefixNode, rows: list[_Row], cache: Any, cached_len: int, handle: BatchHandler) -> None:
        if node.end > cached_len:
            ids = rows[_representative(node)].ids
            cache = self._extend(cache, ids[cached_len:node.end], cached_len)
        # Longest suffix first: similar lengths share a batch (little padding) and the
        # biggest batch runs first, so running out of memory shows at once.
        members = sorted(node.members, key=lambda i: len(rows[i].ids), reverse=True)
        start = 0
        while start < len(members):
            longest = len(rows[members[start]].ids) - node.end
            fit = max(1, min(self.options.batch_size, self.options.max_batch_tokens // max(longest, 1)))
            handle([rows[i] for i in members[start:start + fit]], cache, node.end)
            start += fit
        for child in node.children:
            self._visit(child, rows, cache, node.end, handle)

    def _extend(self, cache: Any, ids: Sequence[int], past_len: int) -> Any:
        """A new cache holding ``cache`` (length ``past_len``) plus ``ids``; ``cache`` is untouched."""
        new = _copy_cache(cache, 1)
        input_ids = torch.tensor([list(ids)], device=self.device)
        positions = torch.arange(past_len, past_len + len(ids), device=self.device)[None, :]
        mask = torch.ones((1, past_len + len(ids)), dtype=torch.long, device=self.device)
        kwargs: dict[str, Any] = {self._cache_kw: new}
        if self._keep_logits:
            kwargs["logits_to_keep"] = 1
        self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True, **kwargs)
        return new

    def _forward_batch(
        self, batch: list[_Row], cache: Any, start: int, *, use_cache: bool
    ) -> tuple[list[torch.Tensor], Any, torch.Tensor]:
        """Run the rows' suffixes after the cached prefix of length ``start``.

        Returns each row's logits at positions ``need_from .. len-1`` (one tensor per row),
        the batch cache (when ``use_cache``) and the attention mask.
        """
        width = max(len(r.ids) - start for r in batch)
        input_ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), start + width), dtype=torch.long)
        mask[:, :start] = 1
        for b, row in enumerate(batch):
            suffix = row.ids[start:]
            input_ids[b, : len(suffix)] = torch.tensor(suffix)
            mask[b, start : start + len(suffix)] = 1
        positions = torch.arange(start, start + width)[None, :].expand(len(batch), -1)
        # Only the positions some row needs get logits (relative to the suffix start).
        first = min(r.need_from for r in batch) - start
        keep = torch.arange(first, width)
        kwargs: dict[str, Any] = {self._cache_kw: _copy_cache(cache, len(batch)) if (cache is not None or use_cache) else None}
        if self._keep_logits:
            kwargs["logits_to_keep"] = keep.to(self.device)
        out = self.model(
            input_ids=input_ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            use_cache=use_cache,
            **kwargs,
        )
        logits = out.logits if self._keep_logits else out.logits[:, first:]
        per_row = [logits[b, r.need_from - start - first : len(r.ids) - start - first] for b, r in enumerate(batch)]
        return per_row, kwargs[self._cache_kw], mask.to(self.device)

    # -- generation ---------------------------------------------------------------------------

    def _decode_batch(self, batch: list[_Row], jobs: list[GenerateJob], cache: Any, start: int) -> list[Generated]:
        per_row, batch_cache, mask = self._forward_batch(batch, cache, start, use_cache=True)
        next_logits = torch.stack([r[-1] for r in per_row])
        positions = torch.tensor([len(r.ids) for r in batch], device=self.device)
        generators = [_generator(j.seed) if j.temperature > 0 else None for j in jobs]
        tokens: list[list[TokenScore]] = [[] for _ in batch]
        finish: list[str] = ["length"] * len(batch)
        active = list(range(len(batch)))
        decode = self._tokenizer.decode
        while active:
            chosen: list[int] = []
            still: list[int] = []
            for slot, b in enumerate(active):
                job = jobs[b]
                lp = torch.log_softmax(next_logits[slot].float(), dim=-1)
                argmax = int(lp.argmax())
                if job.temperature > 0:
                    probs = torch.softmax(next_logits[slot].float() / job.temperature, dim=-1)
                    tok = int(torch.multinomial(probs.cpu(), 1, generator=generators[b]).item())
                else:
                    tok = argmax
                top = _topk_rows(lp[None, :], job.top_k)
                tokens[b].append(TokenScore(tok, float(lp[tok]), tok == argmax, top[0] if top else {}))
                ids = [t.token_id for t in tokens[b]]
                if tok in self._special.eos or tail_has_stop(decode, ids, job.stop):
                    finish[b] = "stop"
                elif len(ids) < job.max_tokens:
                    still.append(slot)
                    chosen.append(tok)
            if not still:
                break
            if len(still) < len(active):
                keep = torch.tensor(still, device=self.device)
                batch_cache.batch_select_indices(keep)
                mask = mask[keep]
                positions = positions[keep]
            active = [active[s] for s in still]
            mask = torch.cat([mask, torch.ones((len(active), 1), dtype=mask.dtype, device=self.device)], dim=1)
            kwargs: dict[str, Any] = {self._cache_kw: batch_cache}
            if self._keep_logits:
                kwargs["logits_to_keep"] = 1
            out = self.model(
                input_ids=torch.tensor(chosen, device=self.device)[:, None],
                attention_mask=mask,
                position_ids=positions[:, None],
                use_cache=True,
                **kwargs,
            )
            next_logits = out.logits[:, -1]
            positions = positions + 1
        return [Generated(tuple(t), f) for t, f in zip(tokens, finish, strict=True)]


def _representative(node: PrefixNode) -> int:
    """Any row under ``node`` (they all share its prefix)."""
    while not node.members:
        node = node.children[0]
    return node.members[0]


def _copy_cache(cache: Any, batch: int) -> Any:
    """A fresh DynamicCache with ``cache``'s keys/values repeated ``batch`` times (or empty)."""
    from transformers.cache_utils import DynamicCache

    if cache is None:
        return DynamicCache()
    data = [
        (layer.keys.expand(batch, -1, -1, -1), layer.values.expand(batch, -1, -1, -1))
        for layer in cache.layers
    ]
    return DynamicCache(data)


def _generator(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed & ((1 << 63) - 1))
    return g


def _topk_rows(lp: torch.Tensor, k: int) -> list[dict[int, float]]:
    if k <= 0:
        return []
    values, indices = lp.topk(min(k, lp.shape[-1]), dim=-1)
    return [
        {int(i): float(v) for i, v in zip(ind.tolist(), val.tolist(), strict=True)}
        for ind, val in zip(indices, values, strict=True)
    ]
