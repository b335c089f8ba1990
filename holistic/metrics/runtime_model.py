"""An idealised runtime per model: latency explained by request size.

Observed latencies mix the model's cost with noise (queueing, contention, network,
warm-up). Over a run's successful *uncached* requests we fit

    latency_s = overhead_s + s_per_prompt_token * prompt_tokens
                           + s_per_completion_token * completion_tokens

by least squares with every coefficient kept non-negative (all 7 subsets of the
three terms are solved and the best feasible one kept; a negative coefficient has
no physical meaning). The fitted value of a request is its idealised runtime: what
it would take on this deployment without the noise — a per-model analogue of
HELM's denoised runtime, estimated from the run itself rather than from a
separate profiling job. At least 3 uncached requests are needed; otherwise no fit.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MIN_REQUESTS = 3


@dataclass(frozen=True)
class RuntimeModel:
    """Fitted coefficients of the latency model."""

    overhead_s: float
    s_per_prompt_token: float
    s_per_completion_token: float
    num_requests: int
    """Uncached requests the fit used."""
    r_squared: float

    def predict(self, prompt_tokens: float, completion_tokens: float) -> float:
        return (
            self.overhead_s + self.s_per_prompt_token * prompt_tokens + self.s_per_completion_token * completion_tokens
        )


def fit_runtime_model(samples: Sequence[tuple[float, float, float]]) -> RuntimeModel | None:
    """Fit from (prompt tokens, completion tokens, latency seconds) triples; ``None`` if too few."""
    if len(samples) < MIN_REQUESTS:
        return None
    data = np.asarray(samples, dtype=np.float64)
    design = np.column_stack([np.ones(len(data)), data[:, 0], data[:, 1]])
    latency = data[:, 2]
    best: tuple[float, np.ndarray] | None = None
    for size in (3, 2, 1):
        for columns in itertools.combinations(range(3), size):
            sub = design[:, columns]
            coef, *_ = np.linalg.lstsq(sub, latency, rcond=None)
            if np.any(coef < 0):
                continue
            full = np.zeros(3)
            full[list(columns)] = coef
            sse = float(np.sum((design @ full - latency) ** 2))
            if best is None or sse < best[0] - 1e-15:
                best = (sse, full)
    if best is None:  # only possible with negative latencies
        return None
    sse, coef = best
    total = float(np.sum((latency - latency.mean()) ** 2))
    r_squared = 1.0 - sse / total if total > 0 else 1.0
    return RuntimeModel(float(coef[0]), float(coef[1]), float(coef[2]), len(data), r_squared)
