"""The report's figures, drawn with matplotlib and embedded as inline SVG (no network at view
time, no JavaScript needed to see them).

Each function returns one ``<svg>`` element as text; texts inside are escaped by matplotlib.

Example:
    >>> svg = score_histogram([0.2, 0.5, 0.9, 1.0])
    >>> svg.lstrip().startswith("<svg") and "</svg>" in svg
    True
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

_SIZE = (6.0, 3.0)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # text stays text (selectable, small)
    plt.rcParams["svg.hashsalt"] = "assay"  # stable ids: the same run gives the same file
    return plt


def _svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def score_histogram(scores: Sequence[float]) -> str:
    """Distribution of per-item scores."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_SIZE)
    ax.hist(list(scores), bins=20, range=(min(0.0, min(scores, default=0.0)), 1.0),
            color="#3b6ea5", edgecolor="white")
    ax.set_xlabel("item score")
    ax.set_ylabel("items")
    ax.set_title("Score distribution")
    return _svg(fig)


def interval_bars(rows: Mapping[str, tuple[float, float | None, float | None]], title: str) -> str:
    """Horizontal bars of means with CI whiskers: ``{name: (mean, low, high)}``."""
    plt = _pyplot()
    names = list(rows)
    fig, ax = plt.subplots(figsize=(_SIZE[0], max(1.5, 0.35 * len(names) + 0.8)))
    means = [rows[n][0] for n in names]
    low = [mean - lo if lo is not None else 0 for mean, lo, _ in (rows[n] for n in names)]
    high = [hi - mean if hi is not None else 0 for mean, _, hi in (rows[n] for n in names)]
    ax.barh(range(len(names)), means, xerr=[low, high], color="#7aa6c2", capsize=3)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("mean score (95% CI)")
    ax.set_title(title)
    return _svg(fig)


def confusion_matrix(matrix: Sequence[Sequence[int]], labels: Sequence[str], title: str) -> str:
    """A confusion matrix: rows are the human label, columns the judge's."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(3.6, 3.2))
    ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("judge")
    ax.set_ylabel("human")
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            ax.text(j, i, str(value), ha="center", va="center")
    ax.set_title(title)
    return _svg(fig)


def forest_plot(rows: Sequence[tuple[str, float, float | None, float | None]]) -> str:
    """Paired differences with their CIs: ``[(label, difference, low, high)]``, a line at 0."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(_SIZE[0], max(1.5, 0.4 * len(rows) + 0.8)))
    for y, (_, diff, low, high) in enumerate(rows):
        if low is not None and high is not None:
            ax.plot([low, high], [y, y], color="#333333")
        ax.plot([diff], [y], marker="s", color="#c0392b")
    ax.axvline(0.0, color="#888888", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("mean score difference (95% CI)")
    ax.set_title("Paired comparisons")
    return _svg(fig)
