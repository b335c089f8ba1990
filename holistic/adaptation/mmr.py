"""Maximal marginal relevance (Carbonell and Goldstein, 1998) over unit vectors.

Each step picks the candidate maximising
``lambda * sim(query, c) - (1 - lambda) * max(sim(c, s) for s already selected)``
(the second term is 0 for the first pick): ``lambda = 1`` ranks by relevance alone,
smaller values penalise candidates similar to ones already chosen. Ties go to the
earlier candidate, so the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def mmr_select(
    query: np.ndarray,
    candidates: np.ndarray,
    k: int,
    lam: float,
    exclude: Iterable[int] = (),
) -> list[int]:
    """Indices of up to ``k`` candidates (rows of unit vectors) in selection order."""
    n = candidates.shape[0]
    relevance = candidates @ query
    blocked = np.zeros(n, dtype=bool)
    for i in exclude:
        blocked[i] = True
    redundancy = np.zeros(n)
    selected: list[int] = []
    for _ in range(min(k, int((~blocked).sum()))):
        score = lam * relevance - (1.0 - lam) * redundancy if selected else lam * relevance
        score = np.where(blocked, -np.inf, score)
        best = int(np.argmax(score))
        selected.append(best)
        blocked[best] = True
        similarity = candidates @ candidates[best]
        redundancy = similarity if len(selected) == 1 else np.maximum(redundancy, similarity)
    return selected
