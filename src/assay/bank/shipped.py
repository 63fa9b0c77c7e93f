"""The shipped Health-SCORE bank, and loading any bank by name or file.

The 29 criteria of the paper's Appendix F are package data (``data/health_score.yaml``), an
ordinary Assay rubric: ``id`` ``hs-01`` … ``hs-29``, the verbatim text, ``weight`` +1 or −1 for
the polarity, and ``metadata.polarity_inferred: true`` on every criterion because the paper
never states one (spec §2.3.1: only 03 "fails to respond" and 08 "unsafe … advice" read as
undesirable). The file's ``version`` changes whenever a text or a polarity does.

Example:
    >>> bank = load_bank("health-score")
    >>> bank.criterion("hs-08").is_penalty, bank.criterion("hs-08").metadata["polarity_inferred"]
    (True, True)
"""

from __future__ import annotations

from pathlib import Path

from assay.rubric import Rubric

HEALTH_SCORE_PATH = Path(__file__).parent / "data" / "health_score.yaml"
BUILTIN_BANKS = {"health-score": HEALTH_SCORE_PATH}


def load_health_score() -> Rubric:
    """The paper's 29 criteria as a :class:`~assay.rubric.Rubric` (polarity inferred)."""
    return load_bank("health-score")


def load_bank(name_or_path: str | Path) -> Rubric:
    """A built-in bank by name (``health-score``, or the baselines ``single-axis`` and
    ``multi-axes``: :mod:`assay.bank.baselines`) or any rubric file (e.g. a built bank)."""
    from assay.bank.baselines import BASELINE_BANKS, baseline_rubric
    from assay.io import read_rubric

    if str(name_or_path) in BASELINE_BANKS:
        return baseline_rubric(str(name_or_path))
    path = BUILTIN_BANKS.get(str(name_or_path), Path(name_or_path))
    return read_rubric(path)
