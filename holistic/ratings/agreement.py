"""Inter-rater agreement: Krippendorff's alpha for interval data; Cohen's kappa for two raters.

alpha = 1 - D_o / D_e over the *pairable* values (those of items rated by at least
two raters; n of them): the observed disagreement
D_o = (1/n) * sum over items u of (1 / (m_u - 1)) * sum over ordered pairs of ratings
of u of (a - b)^2, and the expected disagreement
D_e = (1 / (n (n - 1))) * sum over ordered pairs of all pairable values of (a - b)^2.
1 is perfect agreement, 0 agreement at chance level, below 0 systematic disagreement.
Undefined (``None``) with fewer than two pairable values or when every value is the
same (D_e = 0).

Cohen's kappa = (p_o - p_e) / (1 - p_e) over the items both raters rated, with the
values as categories: p_o the share of items they give the same value, p_e the chance
of that from each rater's own distribution of values. Undefined (``None``) without
items or when chance agreement is certain (p_e = 1: both always give one same value).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def krippendorff_alpha_interval(units: Iterable[Sequence[float]]) -> float | None:
    """Krippendorff's alpha (interval metric) of the ratings of each unit (item)."""
    pairable = [list(values) for values in units if len(values) >= 2]
    values = [v for unit in pairable for v in unit]
    n = len(values)
    if n < 2:
        return None
    observed = 0.0
    for unit in pairable:
        m = len(unit)
        observed += sum((a - b) ** 2 for a in unit for b in unit) / (m - 1)
    observed /= n
    # sum over ordered pairs of (a - b)^2 = 2 n sum(v^2) - 2 (sum v)^2
    total = sum(values)
    expected = (2 * n * sum(v * v for v in values) - 2 * total * total) / (n * (n - 1))
    if expected <= 1e-12:
        return None
    return 1.0 - observed / expected


def cohen_kappa(pairs: Iterable[tuple[float, float]]) -> float | None:
    """Cohen's kappa of two raters' values on the same items (values are the categories)."""
    items = list(pairs)
    n = len(items)
    if n == 0:
        return None
    observed = sum(1 for a, b in items if a == b) / n
    first: dict[float, int] = {}
    second: dict[float, int] = {}
    for a, b in items:
        first[a] = first.get(a, 0) + 1
        second[b] = second.get(b, 0) + 1
    expected = sum(count * second.get(value, 0) for value, count in first.items()) / (n * n)
    if expected >= 1 - 1e-12:
        return None
    return (observed - expected) / (1 - expected)
