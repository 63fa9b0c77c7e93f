"""Gwet's AC1 written out as its definition reads (Gwet 2014, ch. 2; irrCAC's ``CAC.gwet``),
unit by unit, to check :func:`assay.metrics.reliability_sums.gwet_ac1` against.

``p_a``: over the units rated at least twice, the mean of Σ_c r_uc (r_uc − 1) / (r_u (r_u − 1));
``π_c``: over the units rated at least once, the mean of r_uc / r_u;
``p_e = Σ_c π_c (1 − π_c) / (q − 1)``; AC1 = (p_a − p_e) / (1 − p_e).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def reference_ac1(units: Sequence[Sequence[Hashable | None]], categories: Sequence[Hashable]
                  ) -> float:
    """AC1 of a units × raters table (None = not rated) on the scale ``categories``."""
    rated = [[x for x in unit if x is not None] for unit in units]
    rated = [r for r in rated if r]
    pairs = [r for r in rated if len(r) >= 2]
    pa = sum(sum(r.count(c) * (r.count(c) - 1) for c in categories) / (len(r) * (len(r) - 1))
             for r in pairs) / len(pairs)
    pi = [sum(r.count(c) / len(r) for r in rated) / len(rated) for c in categories]
    pe = sum(p * (1 - p) for p in pi) / (len(categories) - 1)
    return (pa - pe) / (1 - pe)
