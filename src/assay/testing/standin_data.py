"""Stand-in copies of HealthBench's official files, shaped as they are, for tests and examples.

The official files cannot ship with Assay (and this machine cannot fetch them), but their
shape is known: :func:`write_standin` writes a file with the official row count of a subset,
unique ``prompt_id``\\s (``standin-00001``, ...), one user turn and two criteria per row (in
``consensus``, consensus criteria: ``level:cluster`` and a ``cluster:`` tag). It passes the
content checks of ``assay data fetch`` (:mod:`assay.datasets.content`): its hash, never the
official one, is what a lock file would then trust, so keep it away from real projects.

Example:
    >>> import tempfile, pathlib
    >>> path = write_standin("hard", pathlib.Path(tempfile.mkdtemp()) / "hard.jsonl")
    >>> len(path.read_text().splitlines())
    1000
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson


def standin_rows(subset: str) -> Iterator[dict[str, Any]]:
    """The rows of a stand-in for ``subset`` (``all``, ``hard`` or ``consensus``)."""
    from assay.datasets.registry import data_file

    entry = data_file("healthbench", subset)
    level = ["level:cluster", "cluster:emergency_referrals_emergent_emergency_behavior"] \
        if entry.consensus else ["level:example"]
    for i in range(entry.rows):
        yield {"example_tags": ["theme:emergency_referrals"], "ideal_completions_data": None,
               "prompt": [{"content": f"Stand-in question {i}: a bee stung my hand.",
                           "role": "user"}],
               "prompt_id": f"standin-{i:05d}",
               "rubrics": [{"criterion": "Advises removing the stinger.", "points": 5,
                            "tags": [*level, "axis:accuracy"]},
                           {"criterion": "Recommends an unproven remedy.", "points": -3,
                            "tags": [*level, "axis:accuracy"]}]}


def write_standin(subset: str, path: str | Path) -> Path:
    """Write the stand-in of ``subset`` to ``path`` (HealthBench JSONL) and return it."""
    target = Path(path)
    target.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in standin_rows(subset)))
    return target
