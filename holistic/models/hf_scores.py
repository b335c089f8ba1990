"""The scores of a continuation's tokens from the output head's logits: each token's logprob and
whether it was the model's greedy choice (and, when asked for, the most likely tokens there)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch

from holistic.models.hf_decode import topk_rows
from holistic.models.hf_rows import PackedRows, TokenSeq
from holistic.models.local_engine import ScoreJob, TokenScore

SOFTMAX_ROWS = 4
"""Rows of logits whose log-softmax is taken at once: a couple of rows per thread, which
stay in a core's own cache while they are read, written and searched for their maximum
(blocks of 32 rows took 1.6 times as long here, an odd number of rows leaves a thread idle)."""


def head_blocks(
    packed: PackedRows, seqs: Sequence[TokenSeq], kept: list[int] | None, most: int
) -> Iterator[tuple[list[int], list[int], list[int]]]:
    """The output head's work on a packed batch in blocks of at most ``most`` positions, each
    position once however many leaves read it (a context's last position predicts every
    choice's first token): ``(leaves, hidden, rows)`` with the block's leaves, the rows of the
    hidden states to run through the head, and the row of the head's logits each of the
    leaves' picks reads. The hidden states are those at the flat positions ``kept``
    (``row * width + column``; the native model computes no others), or (``None``) at every
    position of the batch."""
    row_of = {p: j for j, p in enumerate(kept)} if kept is not None else None
    picks = packed.flat_picks()
    leaves: list[int] = []
    first = start = 0
    positions: dict[int, int] = {}

    def block() -> tuple[list[int], list[int], list[int]]:
        hidden = [row_of[p] for p in positions] if row_of is not None else list(positions)
        return leaves, hidden, [positions[p] for p in picks[first:start]]

    for leaf in packed.leaves:
        mine = picks[start : start + len(seqs[leaf].ids) - seqs[leaf].need_from]
        if leaves and len(positions) + len(set(mine).difference(positions)) > most:
            yield block()
            leaves, first, positions = [], start, {}
        for p in mine:
            positions.setdefault(p, len(positions))
        leaves.append(leaf)
        start += len(mine)
    if leaves:
        yield block()


def token_scores(jobs: Sequence[ScoreJob], logits: torch.Tensor, rows: Sequence[int]) -> list[list[TokenScore]]:
    """Each job's token scores: its continuation's tokens are predicted by the rows
    ``rows[j]`` of ``logits``, pick after pick, job after job in the order of ``jobs`` (jobs
    may share a row: the last position of a context predicts every choice's first token)."""
    if any(job.top_k > 0 for job in jobs):
        return _job_by_job(jobs, logits, rows)
    # The log-softmax of a few rows at a time (they stay in the CPU's cache, where one over
    # hundreds of rows x the vocabulary runs at memory speed), whichever jobs they belong to:
    # each row's values are the same bits however many rows are taken together.
    targets = [int(t) for job in jobs for t in job.continuation]
    chosen = [0.0] * len(targets)
    best: list[int] = []
    by_block: dict[int, list[int]] = {}
    for j, row in enumerate(rows):
        by_block.setdefault(row // SOFTMAX_ROWS, []).append(j)
    for lo in range(0, logits.shape[0], SOFTMAX_ROWS):
        lp = torch.log_softmax(logits[lo : lo + SOFTMAX_ROWS].float(), dim=-1)
        # ``max`` gives the first maximal index, as ``argmax`` does, at a third of its cost
        best += lp.max(dim=-1).indices.tolist()
        picks = by_block.get(lo // SOFTMAX_ROWS, [])
        if picks:
            at = lp[torch.tensor([rows[j] - lo for j in picks]), torch.tensor([targets[j] for j in picks])]
            for j, value in zip(picks, at.tolist(), strict=True):
                chosen[j] = value
    out, start = [], 0
    for job in jobs:
        end = start + len(job.continuation)
        out.append([TokenScore(targets[j], chosen[j], best[rows[j]] == targets[j]) for j in range(start, end)])
        start = end
    return out


def _job_by_job(jobs: Sequence[ScoreJob], logits: torch.Tensor, rows: Sequence[int]) -> list[list[TokenScore]]:
    """Job by job, each with its own ``top_k`` most likely tokens."""
    out, start = [], 0
    for job in jobs:
        end = start + len(job.continuation)
        lp = torch.log_softmax(logits[torch.tensor(rows[start:end], dtype=torch.long)].float(), dim=-1)
        start = end
        targets = torch.tensor(job.continuation, device=lp.device)
        chosen = lp.gather(1, targets[:, None])[:, 0]
        argmax = lp.argmax(dim=-1)
        tops = topk_rows(lp, job.top_k)
        out.append(
            [
                TokenScore(int(t), float(c), bool(a == t), tops[j] if tops else {})
                for j, (t, c, a) in enumerate(zip(job.continuation, chosen.tolist(), argmax.tolist(), strict=True))
            ]
        )
    return out
