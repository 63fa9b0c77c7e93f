"""Data shipped with the routing package: the starter health taxonomy.

``starter-taxonomy.yaml`` (112 atomic Boolean leaves; version and changelog in the file) is a
starting point to curate, written for Assay from the categories RubricsTree names; the paper's
own catalogue is unpublished. ``--taxonomy starter`` on the command line loads it.

Example:
    >>> from assay.io import read_taxonomy
    >>> len(read_taxonomy(STARTER_TAXONOMY).leaves()) >= 100
    True
"""

from __future__ import annotations

from pathlib import Path

STARTER_TAXONOMY = Path(__file__).parent / "starter-taxonomy.yaml"


def resolve_taxonomy(value: str | Path) -> Path:
    """``starter`` names the shipped taxonomy; anything else is a path."""
    return STARTER_TAXONOMY if str(value) == "starter" else Path(value)
