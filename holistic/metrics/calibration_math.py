"""Calibration and selective-classification arithmetic on (confidence, correct) pairs.

Two sets of definitions live here. The ``helm_*`` functions at the end reproduce
HELM's code exactly (crfm-helm 0.5.16 with ``uncertainty-calibration`` 0.1.4: bins
cut with ``np.array_split``, ``selective_acc@10`` at index ``int(0.1 N)``, Platt by
scikit-learn's unregularised logistic regression); the calibration metric reports
them by default under HELM's stat names. The tie-aware definitions first, below,
are holistic's option (metric ``calibration_tie_aware``, stats suffixed
``_tie_aware``): they do not depend on the order of tied confidences.

Tie-aware definitions (HELM paper, §4.4 and appendix C.2):

- **ECE** with ``B`` equal-mass bins: sort by confidence, cut into ``B`` bins of
  (nearly) equal count, and take ``sum_b n_b / N * |accuracy_b - mean confidence_b|``.
  Instances with identical confidence are never split across bins (a tied group
  joins the bin of its first member), so the result does not depend on input order;
  with ties a run can have fewer than ``B`` non-empty bins.
- **Selective accuracy at coverage c**: accuracy on the ``ceil(c * N)`` most
  confident instances (at least one). Where the cut falls inside a group of tied
  confidences, each tied instance counts with the group's mean correctness (the
  expectation over random tie-breaking).
- **Area under the coverage-accuracy curve**: mean of the selective accuracies at
  coverages ``1/N, 2/N, ..., 1`` (a right Riemann sum over coverage).
- **Platt scaling**: ``p' = sigmoid(a * logit(p) + b)`` fitted by maximum likelihood
  on the run's own (confidence, correct) pairs with damped Newton steps (halved until
  the objective improves), with a small
  ridge penalty ``(lambda/2)((a-1)^2 + b^2)``, lambda = 0.01, pulling towards the
  identity map so the fit stays finite when every answer is right (or wrong).
  It is fitted and evaluated on the same data: Platt-scaled ECE measures how much
  of the miscalibration a monotone recalibration removes, not held-out calibration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

_EPS = 1e-6
_PLATT_RIDGE = 0.01


@dataclass(frozen=True)
class Bin:
    """One bin of a reliability diagram."""

    confidence: float
    """Mean confidence of the bin's instances."""
    accuracy: float
    count: int


def _arrays(confidences: ArrayLike, correct: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    conf = np.asarray(confidences, dtype=np.float64)
    hits = np.asarray(correct, dtype=np.float64)
    if conf.shape != hits.shape or conf.ndim != 1:
        raise ValueError(f"confidences and correct must be 1-d of equal length, got {conf.shape} and {hits.shape}")
    if conf.size and (np.any(conf < 0) | np.any(conf > 1) | np.any(np.isnan(conf))):
        raise ValueError("confidences must lie in [0, 1]")
    return conf, hits


def reliability_bins(confidences: ArrayLike, correct: ArrayLike, num_bins: int = 10) -> list[Bin]:
    """Equal-mass bins (ties kept together), lowest confidence first."""
    if num_bins < 1:
        raise ValueError(f"num_bins must be >= 1, got {num_bins}")
    conf, hits = _arrays(confidences, correct)
    n = conf.size
    if n == 0:
        return []
    order = np.argsort(conf, kind="stable")
    sorted_conf, sorted_hits = conf[order], hits[order]
    rank_bin = (np.arange(n) * num_bins) // n
    _, first, inverse = np.unique(sorted_conf, return_index=True, return_inverse=True)
    bin_of = rank_bin[first[inverse]]
    bins = []
    for b in np.unique(bin_of):
        mask = bin_of == b
        bins.append(Bin(float(sorted_conf[mask].mean()), float(sorted_hits[mask].mean()), int(mask.sum())))
    return bins


def expected_calibration_error(confidences: ArrayLike, correct: ArrayLike, num_bins: int = 10) -> float:
    """ECE with ``num_bins`` equal-mass bins."""
    bins = reliability_bins(confidences, correct, num_bins)
    total = sum(b.count for b in bins)
    if total == 0:
        raise ValueError("ECE of no instances is undefined")
    return float(sum(b.count / total * abs(b.accuracy - b.confidence) for b in bins))


def _tie_averaged_by_confidence(conf: NDArray[np.float64], hits: NDArray[np.float64]) -> NDArray[np.float64]:
    """Correctness sorted by descending confidence, averaged within tied groups."""
    order = np.argsort(-conf, kind="stable")
    sorted_conf, sorted_hits = conf[order], hits[order]
    _, inverse, counts = np.unique(sorted_conf, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=sorted_hits)
    return np.asarray(sums[inverse] / counts[inverse], dtype=np.float64)


def selective_accuracies(confidences: ArrayLike, correct: ArrayLike) -> NDArray[np.float64]:
    """Accuracy on the k most confident instances, for k = 1..N."""
    conf, hits = _arrays(confidences, correct)
    if conf.size == 0:
        return np.zeros(0)
    averaged = _tie_averaged_by_confidence(conf, hits)
    return np.asarray(np.cumsum(averaged) / np.arange(1, conf.size + 1), dtype=np.float64)


def selective_accuracy(confidences: ArrayLike, correct: ArrayLike, coverage: float = 0.1) -> float:
    """Accuracy on the most confident ``coverage`` share of instances."""
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    curve = selective_accuracies(confidences, correct)
    if curve.size == 0:
        raise ValueError("selective accuracy of no instances is undefined")
    k = max(1, math.ceil(coverage * curve.size - 1e-9))
    return float(curve[k - 1])


def coverage_accuracy_area(confidences: ArrayLike, correct: ArrayLike) -> float:
    """Area under the coverage-accuracy curve (mean selective accuracy over coverages k/N)."""
    curve = selective_accuracies(confidences, correct)
    if curve.size == 0:
        raise ValueError("coverage-accuracy area of no instances is undefined")
    return float(curve.mean())


@dataclass(frozen=True)
class PlattScaling:
    """A fitted ``sigmoid(slope * logit(p) + intercept)`` recalibration map."""

    slope: float
    intercept: float

    def __call__(self, confidences: ArrayLike) -> NDArray[np.float64]:
        z = self.slope * _logit(np.asarray(confidences, dtype=np.float64)) + self.intercept
        return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float64)


def _logit(p: NDArray[np.float64]) -> NDArray[np.float64]:
    q = np.clip(p, _EPS, 1 - _EPS)
    return np.asarray(np.log(q) - np.log1p(-q), dtype=np.float64)


def fit_platt(confidences: ArrayLike, correct: ArrayLike, *, iterations: int = 50) -> PlattScaling:
    """Fit Platt scaling by penalised Newton iterations (see the module docstring)."""
    conf, hits = _arrays(confidences, correct)
    if conf.size == 0:
        return PlattScaling(1.0, 0.0)
    x = np.stack([_logit(conf), np.ones_like(conf)], axis=1)
    prior = np.array([1.0, 0.0])

    def objective(w: NDArray[np.float64]) -> float:
        z = x @ w
        penalty = 0.5 * _PLATT_RIDGE * float(np.sum((w - prior) ** 2))
        return float(np.sum(np.logaddexp(0.0, z) - hits * z)) + penalty

    w = prior.copy()
    current = objective(w)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -500, 500)))
        gradient = x.T @ (p - hits) + _PLATT_RIDGE * (w - prior)
        hessian = (x * (p * (1 - p))[:, None]).T @ x + _PLATT_RIDGE * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        # Damped Newton: halve the step until the penalised likelihood improves.
        scale = 1.0
        while scale > 1e-10:
            candidate = w - scale * step
            value = objective(candidate)
            if value <= current:
                break
            scale /= 2
        else:
            break
        w, improvement, current = candidate, current - value, value
        if improvement < 1e-12 * max(1.0, abs(current)):
            break
    return PlattScaling(float(w[0]), float(w[1]))


# ---------------------------------------------------------------------------
# HELM's arithmetic (crfm-helm 0.5.16 ``compute_calibration_metrics``, which calls the
# ``uncertainty-calibration`` 0.1.4 package). These are the defaults; the functions
# above are holistic's tie-aware options.
# ---------------------------------------------------------------------------

HELM_PLATT_EPS = 1e-12


def helm_equal_mass_edges(confidences: ArrayLike, num_bins: int) -> list[float]:
    """Upper bin edges as HELM draws them: sort, cut with ``np.array_split`` into
    ``min(num_bins, N)`` parts, put an edge halfway between neighbouring parts, end
    with 1.0; equal edges (ties across a cut) merge."""
    ordered = sorted(np.asarray(confidences, dtype=np.float64).tolist())
    parts = np.array_split(ordered, min(num_bins, len(ordered)))
    edges = [(float(parts[i][-1]) + float(parts[i + 1][0])) / 2.0 for i in range(len(parts) - 1)]
    return sorted(set([*edges, 1.0]))


def helm_binned_ece(confidences: ArrayLike, correct: ArrayLike, edges: list[float]) -> float:
    """Sum over bins of ``n_b / N * |mean confidence - accuracy|``; a confidence equal to
    an edge falls in the lower bin (``np.searchsorted``, left)."""
    conf, hits = _arrays(confidences, correct)
    if conf.size == 0:
        raise ValueError("ECE of no instances is undefined")
    index = np.searchsorted(edges, conf)
    errors: list[float] = []
    weights: list[float] = []
    for b in range(len(edges)):
        mask = index == b
        count = int(mask.sum())
        weights.append(count / conf.size)
        errors.append(abs(float(np.mean(conf[mask])) - float(np.mean(hits[mask]))) if count else 0.0)
    return float(np.dot(weights, errors))


def helm_ece(confidences: ArrayLike, correct: ArrayLike, num_bins: int = 10) -> float:
    """HELM's ``ece_10_bin``: ECE over equal-mass bins (:func:`helm_equal_mass_edges`)."""
    return helm_binned_ece(confidences, correct, helm_equal_mass_edges(confidences, num_bins))


def helm_ece_equal_width(confidences: ArrayLike, correct: ArrayLike, num_bins: int = 1) -> float:
    """HELM's ``ece_1_bin`` (equal-width bins; with one bin, ``|mean confidence - accuracy|``)."""
    return helm_binned_ece(confidences, correct, [i / num_bins for i in range(1, num_bins + 1)])


def helm_selective_stats(confidences: ArrayLike, correct: ArrayLike) -> tuple[float, float]:
    """``(selective_cov_acc_area, selective_acc@10)`` as HELM computes them.

    Sort by descending confidence (numpy's default sort, ties in its order), take the
    running accuracy; the area is its mean, ``selective_acc@10`` its entry at index
    ``int(0.1 * N)`` (so with N >= 10 the top ``int(0.1 N) + 1`` instances).
    """
    conf, hits = _arrays(confidences, correct)
    if conf.size == 0:
        raise ValueError("selective accuracy of no instances is undefined")
    order = np.argsort(-conf)
    accs = np.cumsum(hits[order]) / np.arange(1, conf.size + 1)
    return float(np.mean(accs)), float(accs[int(0.1 * conf.size)])


@dataclass(frozen=True)
class HelmPlatt:
    """Platt scaling as HELM fits it: scikit-learn's logistic regression (``C=1e10``,
    lbfgs) of correctness on ``logit(clip(p, 1e-12, 1 - 1e-12))``."""

    coef: float
    intercept: float

    def __call__(self, confidences: ArrayLike) -> NDArray[np.float64]:
        x = np.clip(np.asarray(confidences, dtype=np.float64), HELM_PLATT_EPS, 1 - HELM_PLATT_EPS)
        z = np.log(x / (1 - x)) * self.coef + self.intercept
        # exp(-z) overflows to inf for z below about -709: the limit 0 is the right answer there.
        with np.errstate(over="ignore"):
            return np.asarray(1 / (1 + np.exp(-z)), dtype=np.float64)


def helm_fit_platt(confidences: ArrayLike, correct: ArrayLike) -> HelmPlatt | None:
    """HELM's Platt fit; ``None`` when every answer is right or every one wrong (HELM then
    reports ``platt_ece_10_bin = platt_ece_1_bin = 0`` and no coefficients)."""
    from sklearn.linear_model import LogisticRegression

    conf, hits = _arrays(confidences, correct)
    labels = hits.astype(int)
    if labels.sum() in (0, labels.size):
        return None
    x = np.clip(conf, HELM_PLATT_EPS, 1 - HELM_PLATT_EPS)
    clf = LogisticRegression(C=1e10, solver="lbfgs")
    clf.fit(np.log(x / (1 - x))[:, None], labels)
    return HelmPlatt(float(clf.coef_[0][0]), float(clf.intercept_[0]))


def helm_calibration_stats(confidences: ArrayLike, correct: ArrayLike) -> dict[str, float]:
    """Every run-level calibration value HELM reports, by HELM's stat name."""
    conf, hits = _arrays(confidences, correct)
    labels = hits.astype(int).astype(np.float64)  # HELM truncates a partial correctness to an int
    area, top = helm_selective_stats(conf, labels)
    out = {
        "ece_10_bin": helm_ece(conf, labels, 10),
        "ece_1_bin": helm_ece_equal_width(conf, labels, 1),
        "selective_cov_acc_area": area,
        "selective_acc@10": top,
    }
    platt = helm_fit_platt(conf, labels)
    if platt is None:
        out.update({"platt_ece_10_bin": 0.0, "platt_ece_1_bin": 0.0})
    else:
        scaled = platt(conf)
        out.update(
            {
                "platt_coef": platt.coef,
                "platt_intercept": platt.intercept,
                "platt_ece_10_bin": helm_ece(scaled, labels, 10),
                "platt_ece_1_bin": helm_ece_equal_width(scaled, labels, 1),
            }
        )
    return out
