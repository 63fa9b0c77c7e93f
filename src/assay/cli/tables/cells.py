"""One cell of a terminal table: a figure with its CI, a test's p-value, an empty table.

>>> from assay.metrics.results import Interval, Metric
>>> fmt(Metric.of(0.5, n=10, ci=Interval(low=0.25, high=0.75)))
'0.500 [0.250, 0.750]'
>>> fmt(None)
'—'
"""

from __future__ import annotations

from typing import Any

from assay.metrics.results import Metric, StatTest


def fmt(m: Metric | None, spec: str = ".3f") -> str:
    """A metric's value (and CI) in ``spec``; "—" when it is undefined."""
    if m is None or m.value is None:
        return "—"
    text = format(m.value, spec)
    if m.ci is not None:
        text += f" [{m.ci.low:{spec}}, {m.ci.high:{spec}}]"
    return text


def fmt_test(t: StatTest | None) -> str:
    """A test's p-value ("p=0.0312"); "—" when it is undefined."""
    if t is None or t.p_value is None:
        return "—"
    return f"p={t.p_value:.3g}"


def new_table(title: str, columns: list[str]) -> Any:
    """A left-titled table: the first column left-aligned, the figures right-aligned."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    return table
