"""The scores of a continuation's tokens from the output head's logits: each token's logprob and
whether it was the model's greedy choice (and, when asked for, the most likely tokens there)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from holistic.models.hf_decode import topk_rows
from holistic.models.local_engine import ScoreJob, TokenScore

SOFTMAX_ROWS = 32
"""Rows of logits whose log-softmax is taken at once (6 MB in float32: within the CPU's cache)."""


def token_scores(jobs: Sequence[ScoreJob], logits: torch.Tensor) -> list[list[TokenScore]]:
    """Each job's token scores from ``logits``: the rows predicting its continuation's tokens, job
    after job in the order of ``jobs``."""
    if any(job.top_k > 0 for job in jobs):
        return _job_by_job(jobs, logits)
    # The log-softmax of a few rows at a time (they stay in the CPU's cache, where one over
    # hundreds of rows x the vocabulary runs at memory speed), whichever jobs they belong to:
    # each row's values are the same bits however many rows are taken together.
    targets = [int(t) for job in jobs for t in job.continuation]
    chosen: list[float] = []
    argmax: list[int] = []
    for lo in range(0, len(targets), SOFTMAX_ROWS):
        lp = torch.log_softmax(logits[lo : lo + SOFTMAX_ROWS].float(), dim=-1)
        wanted = torch.tensor(targets[lo : lo + SOFTMAX_ROWS], device=lp.device)
        chosen += lp.gather(1, wanted[:, None])[:, 0].tolist()
        argmax += lp.argmax(dim=-1).tolist()
    out, start = [], 0
    for job in jobs:
        end = start + len(job.continuation)
        out.append([TokenScore(targets[j], chosen[j], argmax[j] == targets[j]) for j in range(start, end)])
        start = end
    return out


def _job_by_job(jobs: Sequence[ScoreJob], logits: torch.Tensor) -> list[list[TokenScore]]:
    """Job by job, each with its own ``top_k`` most likely tokens."""
    out, start = [], 0
    for job in jobs:
        end = start + len(job.continuation)
        lp = torch.log_softmax(logits[start:end].float(), dim=-1)
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
