"""Inter-rater agreement: Krippendorff's alpha for interval data.

alpha = 1 - D_o / D_e over the *pairable* values (those of items rated by at least
two raters; n of them): the observed disagreement
D_o = (1/n) * sum over items u of (1 / (m_u - 1)) * sum over ordered pairs of ratings
of u of (a - b)^2, and the expected disagreement
D_e = (1 / (n (n - 1))) * sum over ordered pairs of all pairable values of (a - b)^2.
1 is perfect agreement, 0 agreement at chance level, below 0 systematic disagreement.
Undefined (``None``) with fewer than two pairable values or when every value is the
same (D_e = 0).
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
