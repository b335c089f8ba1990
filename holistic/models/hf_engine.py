"""The transformers engine: few, full forward passes, each unique token computed once.

On a CPU the cost of an evaluation is dominated by how many forward calls it makes and
how many positions each one computes (padding included), not by the number of
requests. The engine therefore works on the whole batch of jobs at once:

1. **Prefix tree.** Every job is a token sequence plus the first position whose
   logits it needs. The sequences are arranged in a prefix tree
   (:mod:`holistic.models.prefix_plan`); a node is a prefix shared by the sequences
   below it (the context of a question's choices, a few-shot block).

2. **Trunks: big shared prefixes, computed once per run.** A node whose subtree holds
   more tokens than one packed row (``row_tokens``) and whose prefix adds at least
   ``min_shared_prefix`` tokens to the trunk above it becomes a *trunk*: its key/value
   cache is computed in one forward pass and kept in a small store (LRU, bounded by
   ``prefix_store_mb``). Later calls (the serving layer sends a run in several
   batches) take a stored trunk that shares a prefix with theirs, sliced to the shared
   length, and extend it by what is missing. So a 5-shot block shared by a whole run
   is computed once, not once per request batch.

3. **Packed rows for scoring.** Below a trunk, each remaining subtree (typically a
   question's context and its choices as continuations) is laid out as a *unit*: the
   shared context once, then every continuation, with a tree-shaped attention mask
   (a token sees its own segment causally and its ancestor segments in full) and
   position ids that restart after the shared part for each continuation. Units are
   packed, largest first, into rows of at most ``row_tokens``; rows over the same
   trunk are batched, longest first (similar lengths waste little padding, and the
   biggest batch runs first so running out of memory shows at once). Many questions
   are therefore scored in one padded pass, and every token of the batch is computed
   exactly once: the work is the unique-token floor plus a little padding. Inside a
   unit every common prefix is shared, however short, including the first words that
   several choices have in common: a position's logits go to every sequence that runs
   through it. (The request batches a local client gets are large -- 256 requests by
   default -- so that rows fill up; with 32 requests, the last row of every call was
   half empty.)

4. **Logits only where needed.** The decoder's hidden states are gathered at the
   positions some job scores and only those go through the output head, each once
   however many jobs read it (a context's last position predicts every choice's first
   token), a few jobs' positions (``HEAD_ROWS``) at a time, so a batch never allocates
   ``rows x length x vocabulary`` floats, nor the logits of all its scored positions at
   once (a block's logits go into one buffer kept for the engine's life, ``HEAD_MB``).
   With holistic's own Llama (:mod:`holistic.models.llama_native`) a packed row's
   attention is computed unit by unit (its units attend to nothing of each other), and
   the last layer computes its output projection and MLP at those positions alone.

5. **Generation.** A prompt answered by one token at most (a multiple-choice letter)
   is run as scoring is (3): packed rows, no padding, logits at its last position only,
   no keys/values kept. Any other prompt's suffix after its trunk is one right-padded
   row (its first generated token needs its own row of keys and values to continue
   from). Prefill and decoding are batched differently, because they cost differently:
   a prefill pass is bound by arithmetic (its batches follow the budgets of 6), while
   a decoding step computes one token per row and is bound by reading every weight of
   the model once -- a step for 30 rows costs about what a step for one row costs. So
   the prefilled rows of several prefill batches (and several trunks) are merged, their
   keys/values right-padded to one length and the padding masked out, into one decoding
   batch bounded by ``batch_size`` rows and ``decode_memory_mb`` of keys/values. It
   decodes them together (:mod:`holistic.models.hf_decode`): each step computes every
   row's next token and a few drafts looked up in the row's own text, writes the
   keys/values in place, and drops rows as they reach an end-of-sequence token, a stop
   sequence or ``max_tokens``. (On a 2-core CPU a long-context prompt decoded alone
   spends ~0.3 s per generated token; 24 such prompts decoded together, ~0.4 s per step
   for all of them.)

6. **Batch shape by budget, not by count.** A batch grows while it keeps within
   ``batch_size`` rows, ``max_batch_tokens`` positions and ``memory_mb`` of keys,
   values, attention mask and scores (estimated from the model's shape). The row count
   therefore adapts: many short rows, or a few long ones over a long trunk.

7. **Lazy loading.** The model is loaded on the first job, so a fully cached rerun
   never loads it (the tokenizer, needed to build prompts, loads in well under a
   second).

The engine counts what it did (:class:`EngineCounters`): forward calls, real tokens
through the model, padded positions, trunk-store hits, model loads.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import torch

from holistic.core.interfaces import Tokenizer
from holistic.models.engine_options import EngineCounters, EngineOptions
from holistic.models.heap import keep_freed_blocks
from holistic.models.hf_decode import Decoding, Prefilled
from holistic.models.hf_rows import (
    Segment,
    TokenSeq,
    Trunk,
    Unit,
    balanced_rows,
    pack_rows,
    representative,
    subtree_units,
    unit_len,
)
from holistic.models.hf_scores import head_blocks, token_scores
from holistic.models.local_engine import Generated, GenerateJob, ScoreJob, SpecialIds, TokenScore
from holistic.models.prefix_plan import PrefixNode, common_prefix_len, plan_prefixes

Handle = Callable[[list[int], torch.Tensor, list[int]], None]
"""Takes the leaves of a block of logits, the logits, and the row each of their picks reads."""

HEAD_ROWS = 512
"""Most positions whose logits one call of the output head computes while scoring (fewer when
they would take more than ``HEAD_MB``): the product is a quarter faster per position than in
blocks of 128 here."""
HEAD_MB = 128
"""Most megabytes of the one buffer the scored positions' logits are computed into (a
49,152-token vocabulary in float32: 512 positions, 96 MB)."""


class TransformersEngine:
    """Runs a transformers causal LM on token ids (see the module docstring)."""

    name = "transformers"

    def __init__(
        self,
        model: Any | Callable[[], Any],
        tokenizer: Tokenizer,
        special: SpecialIds,
        *,
        pad_id: int,
        options: EngineOptions | None = None,
    ) -> None:
        """``model`` is a loaded model or a function loading it (called on first use)."""
        self._tokenizer = tokenizer
        self._special = special
        self.pad_id = pad_id
        self.options = options or EngineOptions()
        self.counters = EngineCounters()
        self._model: Any = None
        self._loader: Callable[[], Any] | None = None
        self._lock = threading.Lock()
        self._store: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        if isinstance(model, torch.nn.Module):
            self._attach(model)
        else:
            self._loader = model

    # -- the model (loaded lazily) ------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def model(self) -> Any:
        with self._lock:
            if self._model is None:
                if self._loader is None:
                    raise RuntimeError("the engine is closed")
                self._attach(self._loader())
                self.counters.model_loads += 1
            return self._model

    def _attach(self, model: Any) -> None:
        keep_freed_blocks()  # every pass then reuses the memory the one before freed
        self._model = model
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        from holistic.models.llama_native import NativeLlamaForCausalLM, new_cache

        self._new_cache: Callable[..., Any]
        self._scratch_cache: Callable[..., Any]
        """A cache for a pass whose keys/values are dropped afterwards (see KVCache's ``keep``)."""
        self._blocks = isinstance(model, NativeLlamaForCausalLM)
        """Packed rows' attention computed unit by unit (:func:`~holistic.models.llama_native._block_attention`)."""
        if isinstance(model, NativeLlamaForCausalLM):
            self._new_cache = new_cache
            self._scratch_cache = lambda data=None: new_cache(data, keep=False)
        else:
            from transformers.cache_utils import DynamicCache

            self._new_cache = self._scratch_cache = DynamicCache
        config = model.config
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        heads = int(getattr(text, "num_attention_heads", 1))
        kv_heads = int(getattr(text, "num_key_value_heads", None) or heads)
        head_dim = int(getattr(text, "head_dim", None) or text.hidden_size // heads)
        layers = int(getattr(text, "num_hidden_layers", 1))
        size = torch.finfo(self.dtype).bits // 8
        self._kv_bytes = layers * 2 * kv_heads * head_dim * size
        """Bytes of keys and values per cached position."""
        self._heads = heads
        self._softcap = getattr(text, "final_logit_softcapping", None)
        vocab = int(getattr(text, "vocab_size", 0) or 1)
        self._head_rows = max(1, min(HEAD_ROWS, HEAD_MB * 2**20 // (vocab * size)))
        """Scored positions per call of the output head (``HEAD_ROWS``, within ``HEAD_MB``)."""
        self._logits: torch.Tensor | None = None

    # -- protocol ---------------------------------------------------------------------------

    def tokenizer(self) -> Tokenizer:
        return self._tokenizer

    def special_ids(self) -> SpecialIds:
        return self._special

    def load(self) -> None:
        _ = self.model

    def begin_run(self) -> None:
        self._store.clear()

    def close(self) -> None:
        self._model = None
        self._loader = None
        self._logits = None
        self._store.clear()

    def score(self, jobs: Sequence[ScoreJob]) -> list[list[TokenScore]]:
        # A continuation's last token is never attended to and its logits predict nothing
        # asked for: it is left out. Logits at positions len(context)-1 .. end predict the
        # continuation's tokens.
        scored = [i for i, j in enumerate(jobs) if j.continuation]
        seqs = [TokenSeq(jobs[i].context + jobs[i].continuation[:-1], len(jobs[i].context) - 1) for i in scored]
        out: list[list[TokenScore]] = [[] for _ in jobs]

        def handle(indices: list[int], logits: torch.Tensor, rows: list[int]) -> None:
            for k, scores in zip(indices, token_scores([jobs[scored[k]] for k in indices], logits, rows), strict=True):
                out[scored[k]] = scores

        if seqs:
            with torch.inference_mode():
                self._score_packed(seqs, handle)
        return out

    def generate(self, jobs: Sequence[GenerateJob]) -> list[Generated]:
        out: list[Generated | None] = [None] * len(jobs)
        single = [i for i, j in enumerate(jobs) if j.max_tokens <= 1]
        if single:
            with torch.inference_mode():
                self._first_tokens(jobs, single, out)
        multi = [i for i, j in enumerate(jobs) if j.max_tokens > 1]
        seqs = [TokenSeq(j.prompt, len(j.prompt) - 1) for j in jobs]
        if multi:
            _ = self.model  # load before planning: trunks need the model's shape
            with torch.inference_mode():
                pending: list[Prefilled] = []
                held = 0
                for trunk, units in self._place([seqs[i] for i in multi], pack=False):
                    members = [multi[u[0].seq] for u in units]
                    for batch in self._batches(
                        [[len(seqs[i].ids) - trunk.length] for i in members],
                        trunk,
                        extra=[jobs[i].max_tokens for i in members],
                    ):
                        rows = [members[b] for b in batch]
                        size = sum(self._decode_bytes(seqs[i], jobs[i]) for i in rows)
                        if pending and (
                            sum(len(p.rows) for p in pending) + len(rows) > self.options.batch_size
                            or held + size > self.options.decode_memory_mb * 2**20
                        ):
                            self._decode(_merge_prefilled(pending, self.device, self._new_cache), jobs, out)
                            pending, held = [], 0
                        pending.append(self._prefill(rows, seqs, trunk))
                        held += size
                if pending:
                    self._decode(_merge_prefilled(pending, self.device, self._new_cache), jobs, out)
        return [g if g is not None else Generated((), "length") for g in out]

    def _first_tokens(self, jobs: Sequence[GenerateJob], indices: list[int], out: list[Generated | None]) -> None:
        """Jobs of one token at most (a multiple-choice letter): their prompts run like scoring
        jobs, in packed rows with nothing but the last position's logits computed, and no
        keys/values kept; the letter is taken from those logits as decoding would."""
        seqs = [TokenSeq(jobs[i].prompt, len(jobs[i].prompt) - 1) for i in indices]
        logits: list[torch.Tensor | None] = [None] * len(indices)

        def handle(leaves: list[int], picked: torch.Tensor, rows: list[int]) -> None:
            for row, k in zip(rows, leaves, strict=True):  # one pick each: the prompt's last position
                logits[k] = picked[row : row + 1].clone()  # ``picked`` is overwritten by the next block

        self._score_packed(seqs, handle)
        state = Prefilled(
            list(indices),
            None,
            torch.ones((len(indices), 0), dtype=torch.long),
            torch.cat([x for x in logits if x is not None]),
            torch.tensor([len(s.ids) for s in seqs], device=self.device),
        )
        self._decode(state, jobs, out)

    def _decode_bytes(self, seq: TokenSeq, job: GenerateJob) -> int:
        return (len(seq.ids) + job.max_tokens) * self._kv_bytes

    # -- prefix tree: trunks and units -----------------------------------------------------------

    def _place(self, seqs: list[TokenSeq], *, pack: bool) -> list[tuple[Trunk, list[Unit]]]:
        """Group the sequences' work by trunk: ``[(trunk, units computed over it)]``.

        ``pack``: a unit is a whole subtree (scoring); otherwise one sequence each.
        """
        groups: dict[int, tuple[Trunk, list[Unit]]] = {}
        root_trunk = Trunk(0)

        def add(trunk: Trunk, unit: Unit) -> None:
            groups.setdefault(id(trunk), (trunk, []))[1].append(unit)

        if not self.options.prefix_cache:
            for i, s in enumerate(seqs):
                add(root_trunk, [Segment(i, 0, len(s.ids), -1, True)])
            return list(groups.values())

        ids = [s.ids for s in seqs]
        # The tree shares every common prefix, however short; a prefix becomes a trunk only
        # when it adds ``min_shared_prefix`` tokens to the trunk above it (a shorter one is
        # not worth a forward pass of its own, so its tokens go into the rows below it).
        root = plan_prefixes(ids, [s.need_from for s in seqs], 1)
        sizes: dict[int, int] = {}

        def below(node: PrefixNode) -> int:
            """Tokens of ``node``'s subtree after its own prefix."""
            total = sum(len(ids[m]) - node.end for m in node.members)
            total += sum(child.end - node.end + below(child) for child in node.children)
            sizes[id(node)] = total
            return total

        below(root)

        def visit(node: PrefixNode, trunk: Trunk) -> None:
            if node.end > trunk.length:
                prefix = ids[representative(node)][: node.end]
                size = node.end - trunk.length + sizes[id(node)]
                stored = self._stored_overlap(prefix) >= trunk.length + self.options.min_shared_prefix
                if size <= self.options.row_tokens and not stored:
                    for unit in subtree_units(node, trunk.length, ids, pack):
                        add(trunk, unit)
                    return
                if stored or node.end - trunk.length >= self.options.min_shared_prefix:
                    trunk = self._trunk(prefix, trunk)
            for child in node.children:
                visit(child, trunk)
            for m in node.members:
                add(trunk, [Segment(m, trunk.length, len(ids[m]), -1, True)])

        visit(root, root_trunk)
        return list(groups.values())

    def _stored_overlap(self, prefix: Sequence[int]) -> int:
        return max((common_prefix_len(key, prefix) for key in self._store), default=0)

    def _trunk(self, prefix: tuple[int, ...], parent: Trunk) -> Trunk:
        """The cache of ``prefix``: from the store (sliced and extended as needed) or computed."""
        best, best_key = parent.length, None
        for key in self._store:
            shared = min(common_prefix_len(key, prefix), len(prefix))
            if shared > best:
                best, best_key = shared, key
        if best_key is not None:
            self._store.move_to_end(best_key)
            self.counters.prefix_hits += 1
            base = Trunk(best, _slice_cache(self._store[best_key], best, self._new_cache))
        else:
            base = parent
        if base.length == len(prefix):
            return base
        trunk = Trunk(len(prefix), self._extend(base.cache, prefix[base.length :], base.length))
        self._remember(prefix, trunk.cache)
        return trunk

    def _remember(self, prefix: tuple[int, ...], cache: Any) -> None:
        budget = self.options.prefix_store_mb * 2**20
        if len(prefix) * self._kv_bytes > budget:
            return
        self._store[prefix] = cache
        while sum(len(k) for k in self._store) * self._kv_bytes > budget:
            self._store.popitem(last=False)

    # -- batching ---------------------------------------------------------------------------------

    def _batches(self, rows: list[list[int]], trunk: Trunk, extra: Sequence[int] = ()) -> list[list[int]]:
        """Split rows (given as their segment lengths) into batches, longest row first.

        ``extra``: positions each row will still grow by (tokens to generate).
        """
        length = [sum(r) for r in rows]
        grow = list(extra) or [0] * len(rows)
        order = sorted(range(len(rows)), key=lambda i: -(length[i] + grow[i]))
        o = self.options
        budget = o.memory_mb * 2**20
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:
            if current:
                n = len(current) + 1
                width = length[current[0]]
                span = trunk.length + max(length[current[0]] + grow[current[0]], length[i] + grow[i])
                if n > o.batch_size or n * width > o.max_batch_tokens or self._bytes(n, width, span) > budget:
                    batches.append(current)
                    current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def _bytes(self, rows: int, width: int, span: int) -> int:
        """Keys/values, attention mask and one layer's scores for a batch (estimate)."""
        size = torch.finfo(self.dtype).bits // 8
        return rows * span * self._kv_bytes + rows * width * span * size * (1 + self._heads)

    # -- forward passes -----------------------------------------------------------------------------

    def _extend(self, cache: Any, ids: Sequence[int], past_len: int) -> Any:
        """A new cache holding ``cache`` (length ``past_len``) plus ``ids``; ``cache`` is untouched."""
        new = _copy_cache(cache, 1, self._new_cache)
        input_ids = torch.tensor([list(ids)], device=self.device)
        positions = torch.arange(past_len, past_len + len(ids), device=self.device)[None, :]
        mask = torch.ones((1, past_len + len(ids)), dtype=torch.long, device=self.device)
        self._count(len(ids), len(ids))
        self._decoder(
            input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True, **{self._cache_kw: new}
        )
        return new

    def _decoder(self, **kwargs: Any) -> Any:
        base = self.model.get_decoder() if hasattr(self.model, "get_decoder") else self.model.base_model
        return base(**kwargs)

    def _scoring_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """The output head for a block of scored positions, into one buffer kept for the
        engine's life (``HEAD_MB``): a block of logits that big would otherwise be mapped
        fresh, page by page, for every block. The logits are valid until the next call."""
        head = self.model.get_output_embeddings()
        if self._softcap or getattr(head, "bias", None) is not None:
            return self._head(hidden)
        rows, vocab = hidden.shape[0], head.weight.shape[0]
        if self._logits is None or self._logits.shape[0] < rows:
            self._logits = torch.empty((max(rows, self._head_rows), vocab), dtype=hidden.dtype, device=hidden.device)
        return torch.mm(hidden, head.weight.t(), out=self._logits[:rows])

    def _head(self, hidden: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.model.get_output_embeddings()(hidden)
        if self._softcap:
            logits = torch.tanh(logits / self._softcap) * self._softcap
        return logits

    def _count(self, tokens: int, positions: int) -> None:
        self.counters.forward_calls += 1
        self.counters.forward_tokens += tokens
        self.counters.padded_positions += positions

    def _score_packed(self, seqs: list[TokenSeq], handle: Handle) -> None:
        _ = self.model  # load before planning: trunks need the model's shape
        for trunk, units in self._place(seqs, pack=True):
            for row_units in self._batches_of_units(units, trunk):
                self._forward_rows(row_units, seqs, trunk, handle)

    def _batches_of_units(self, units: list[Unit], trunk: Trunk) -> list[list[list[Unit]]]:
        """Units packed into rows of about equal length (see :func:`~holistic.models.hf_rows.balanced_rows`), rows into batches."""
        cap = self.options.row_tokens if self.options.prefix_cache else 0
        rows = balanced_rows(units, cap)
        batches = self._batches([[unit_len(u) for u in row] for row in rows], trunk)
        return [[rows[i] for i in b] for b in batches]

    def _forward_rows(
        self,
        rows: list[list[Unit]],
        seqs: list[TokenSeq],
        trunk: Trunk,
        handle: Handle,
    ) -> None:
        """One forward pass over packed rows (:func:`~holistic.models.hf_rows.pack_rows`); hands
        each leaf's needed logits to ``handle``."""
        packed = pack_rows(rows, seqs, trunk.length, self.pad_id)
        mask = torch.zeros(packed.allowed.shape, dtype=self.dtype)
        mask.masked_fill_(~packed.allowed, torch.finfo(self.dtype).min)
        row_count, width = packed.input_ids.shape
        self._count(packed.real_tokens, row_count * width)
        # every position some leaf picks, once, as a flat index (``row * width + column``)
        keep = list(dict.fromkeys(packed.flat_picks()))
        cache = _copy_cache(trunk.cache, row_count, self._scratch_cache) if trunk.cache is not None else None
        out = self._decoder(
            input_ids=packed.input_ids.to(self.device),
            attention_mask=mask[:, None].to(self.device),
            position_ids=packed.positions.to(self.device),
            use_cache=cache is not None,
            **{self._cache_kw: cache},
            **({"attention_blocks": packed.blocks, "keep_positions": torch.tensor(keep)} if self._blocks else {}),
        )
        hidden = out.last_hidden_state
        del out, cache
        hidden = hidden.reshape(-1, hidden.shape[-1])
        # Each block's logits land in the one buffer the engine keeps (``_scoring_head``), not in
        # hundreds of megabytes mapped afresh per pass.
        for leaves, at, picked in head_blocks(packed, seqs, keep if self._blocks else None, self._head_rows):
            handle(leaves, self._scoring_head(hidden[torch.tensor(at)]), picked)

    # -- generation ---------------------------------------------------------------------------

    def _prefill(self, rows: list[int], seqs: list[TokenSeq], trunk: Trunk) -> Prefilled:
        """Run the prompts' suffixes after ``trunk`` in one right-padded pass, keeping their
        keys/values for decoding."""
        batch = [seqs[i] for i in rows]
        start = trunk.length
        width = max(len(r.ids) - start for r in batch)
        n = len(batch)
        input_ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((n, start + width), dtype=torch.long)
        mask[:, :start] = 1
        for b, row in enumerate(batch):
            suffix = row.ids[start:]
            input_ids[b, : len(suffix)] = torch.tensor(suffix)
            mask[b, start : start + len(suffix)] = 1
        positions = torch.arange(start, start + width)[None, :].expand(n, -1)
        cache = _copy_cache(trunk.cache, n, self._new_cache)
        mask = mask.to(self.device)
        self._count(sum(len(r.ids) - start for r in batch), n * width)
        out = self._decoder(
            input_ids=input_ids.to(self.device),
            attention_mask=mask,
            position_ids=positions.to(self.device),
            use_cache=True,
            **{self._cache_kw: cache},
        )
        last = torch.tensor([len(r.ids) - start - 1 for r in batch])
        next_logits = self._head(out.last_hidden_state[torch.arange(n), last])
        del out
        next_pos = torch.tensor([len(r.ids) for r in batch], device=self.device)
        return Prefilled(rows, cache, mask, next_logits, next_pos)

    def _decode(self, state: Prefilled, all_jobs: Sequence[GenerateJob], out: list[Generated | None]) -> None:
        """Decode the prefilled rows together into ``out`` (:mod:`holistic.models.hf_decode`)."""

        def forward(input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any) -> torch.Tensor:
            step = self._decoder(
                input_ids=input_ids,
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                **{self._cache_kw: cache},
            )
            hidden: torch.Tensor = step.last_hidden_state
            return hidden

        decoding = Decoding(
            forward,
            self._head,
            self._count,
            self._special,
            self._tokenizer.decode,
            pad_id=self.pad_id,
            draft_tokens=self.options.draft_tokens,
        )
        decoding.run(state, all_jobs, out)


def _merge_prefilled(parts: list[Prefilled], device: Any, new: Callable[..., Any]) -> Prefilled:
    """One decoding batch from several prefill batches: keys/values and masks right-padded
    to the longest, the padded positions masked out (positions ids stay per row).

    ``parts`` is emptied: the decoding holds the only reference to the keys/values, so
    it can free them as it moves them into its own buffers."""
    if len(parts) == 1:
        return parts.pop()

    span = max(p.mask.shape[1] for p in parts)
    layers = []
    for k in range(len(parts[0].cache.layers)):
        keys, values = [], []
        for p in parts:
            layer = p.cache.layers[k]
            pad = span - layer.keys.shape[2]
            keys.append(torch.nn.functional.pad(layer.keys, (0, 0, 0, pad)))
            values.append(torch.nn.functional.pad(layer.values, (0, 0, 0, pad)))
        layers.append((torch.cat(keys), torch.cat(values)))
    masks = [torch.nn.functional.pad(p.mask, (0, span - p.mask.shape[1])) for p in parts]
    merged = Prefilled(
        [i for p in parts for i in p.rows],
        new(layers),
        torch.cat(masks).to(device),
        torch.cat([p.next_logits for p in parts]),
        torch.cat([p.next_pos for p in parts]),
    )
    parts.clear()
    return merged


def _copy_cache(cache: Any, batch: int, new: Callable[..., Any]) -> Any:
    """A fresh cache (made by ``new``) with ``cache``'s keys/values repeated ``batch`` times (or empty)."""
    if cache is None:
        return new()
    data = [(layer.keys.expand(batch, -1, -1, -1), layer.values.expand(batch, -1, -1, -1)) for layer in cache.layers]
    return new(data)


def _slice_cache(cache: Any, length: int, new: Callable[..., Any]) -> Any:
    """A cache (made by ``new``) viewing the first ``length`` positions of ``cache`` (no copy)."""
    return new([(layer.keys[:, :, :length], layer.values[:, :, :length]) for layer in cache.layers])
