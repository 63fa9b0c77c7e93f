"""Physiological bounds for the *inaccurate user data* stress test: wrong, but plausible.

A wearable series moved by ±30 % can leave what a body does (SpO2 68 %, a resting heart rate
of 30); the paper's perturbation is "plausible but wrong". :func:`bounds_for` gives the
plausible range of a metric (and, for slow-moving ones such as weight, the largest relative
change a reading could show), and :func:`plausible_factor` picks the move: the seeded
direction's ``value * (1 ± shift)`` clamped into the range, or the other direction when that
one moves the value further (a value near a bound moves away from it).

Example:
    >>> bounds_for("SpO2", "%")
    Bounds(low=88, high=100, max_shift=None)
    >>> round(plausible_factor(97, bounds_for("SpO2", "%"), 0.3, prefer_up=True), 4)  # 97 -> 88
    0.9072
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Bounds:
    low: float
    high: float
    max_shift: float | None = None
    """The largest relative change of a reading (weight moves slowly)."""


# (words that name the metric, all of which must appear), bounds. The first match wins, so the
# more specific names come first.
_TABLE: tuple[tuple[tuple[str, ...], Bounds], ...] = (
    (("spo2",), Bounds(88, 100)),
    (("oxygen", "saturation"), Bounds(88, 100)),
    (("blood", "oxygen"), Bounds(88, 100)),
    (("resting", "heart"), Bounds(40, 110)),
    (("rhr",), Bounds(40, 110)),
    (("hrv",), Bounds(10, 150)),
    (("heart", "variability"), Bounds(10, 150)),
    (("heart", "rate"), Bounds(40, 180)),
    (("respiratory", "rate"), Bounds(8, 30)),
    (("temperature",), Bounds(35.5, 39.5)),
    (("systolic",), Bounds(85, 190)),
    (("diastolic",), Bounds(50, 120)),
    (("glucose",), Bounds(60, 300)),
    (("weight",), Bounds(30, 300, max_shift=0.1)),
    (("sleep",), Bounds(3, 11)),
    (("steps",), Bounds(0, 40_000)),
)


def bounds_for(metric: str, unit: str = "") -> Bounds | None:
    """The plausible range of ``metric`` (None when unknown: the move is then unbounded)."""
    words = set(re.findall(r"[a-z0-9]+", f"{metric} {unit}".lower()))
    for names, bounds in _TABLE:
        if all(n in words for n in names):
            return bounds
    return None


def plausible_factor(value: float, bounds: Bounds | None, shift: float, *,
                     prefer_up: bool) -> float:
    """The factor to multiply ``value`` by: a move of ``shift`` (capped by the metric's
    ``max_shift``) in the preferred direction, kept inside ``bounds``; the other direction
    when it moves further once clamped. 1.0 for a zero value."""
    if value == 0:
        return 1.0
    if bounds is None:
        return 1 + shift if prefer_up else 1 - shift
    if bounds.max_shift is not None:
        shift = min(shift, bounds.max_shift)
    moves = [_clamp(value * (1 + s), bounds) for s in ((shift, -shift) if prefer_up
                                                       else (-shift, shift))]
    preferred, other = moves
    # The other direction only when it really moves further (not by a rounding error).
    if abs(other - value) > abs(preferred - value) + 1e-9 * abs(value):
        return other / value
    return preferred / value


def clamp(value: float, bounds: Bounds | None) -> float:
    """``value`` inside ``bounds`` (unchanged when there are none)."""
    return value if bounds is None else _clamp(value, bounds)


def _clamp(value: float, bounds: Bounds) -> float:
    return min(max(value, bounds.low), bounds.high)
