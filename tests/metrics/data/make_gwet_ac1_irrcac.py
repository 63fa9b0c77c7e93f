"""Writes gwet_ac1_irrcac.json: Gwet's AC1 by irrCAC (an independent implementation, Gwet's own
formulas ported from his R package) on random units × raters tables with missing ratings.

irrCAC is not a dependency of Assay: its release 0.4.4 pins scipy==1.12.0 and pandas<3, and with
pandas 3 it counts a missing rating as a category of its own unless ``categories`` is given (so
it is given here). Run it by hand where irrCAC is installed (``pip install --no-deps
irrCAC==0.4.4`` beside pandas and scipy):

    python tests/metrics/data/make_gwet_ac1_irrcac.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

CASES = [(0, 3, 2, 2), (1, 4, 3, 3), (2, 2, 4, 5), (3, 5, 2, 3), (4, 3, 4, 4), (5, 6, 3, 3)]


def table(seed: int, raters: int, levels: int, units: int = 40, missing: float = 0.3):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, levels, (units, raters))
    return [[None if rng.random() < missing else int(x) for x in row] for row in values]


def main() -> None:
    import pandas as pd  # only here: the suite imports this file (doctests) without irrCAC
    from irrCAC.raw import CAC

    tables = []
    for seed, raters, levels, scale in CASES:
        units = table(seed, raters, levels)
        frame = pd.DataFrame([[np.nan if x is None else x for x in u] for u in units], dtype=float)
        ac1 = CAC(frame, categories=list(range(scale)), digits=15).gwet()["est"][
            "coefficient_value"]
        tables.append({"units": units, "categories": list(range(scale)), "ac1": float(ac1)})
    out = Path(__file__).with_name("gwet_ac1_irrcac.json")
    out.write_text(json.dumps({"source": "irrCAC 0.4.4, CAC(ratings, categories=...).gwet(), "
                               "written by make_gwet_ac1_irrcac.py", "tables": tables}) + "\n",
                   encoding="utf-8")


if __name__ == "__main__":
    main()
