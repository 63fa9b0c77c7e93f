"""``assay rag report ... --html OUT``: the RAG view of the report (ASTRID, seed 002) as one
self-contained, offline HTML file: Table 3's averages (each metric with its n and CI), the judge
against the clinicians, every operating context with its Figure 11 diagnoses, and each
conversation with its answer, passages, CF/CR/RA, diagnosis and any sentence the judge's
replies did not name. Texts go through Jinja2's autoescaping.

Example (see tests/rag)::

    write_rag_html(rag_report(items, {"judge": grades}), items, {"judge": grades}, "rag.html")
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.rag.grading import RagGrade
from assay.rag.items import RagItem
from assay.rag.validation import RagReport

_TEMPLATES = Path(__file__).parent / "templates"


def write_rag_html(report: RagReport, items: Sequence[RagItem],
                   runs: Mapping[str, Sequence[RagGrade]], out: str | Path) -> Path:
    """Write the RAG report of ``runs`` (grades by judge name) on ``items`` to ``out``."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    from assay.report.html import _num, _pct

    env = Environment(loader=FileSystemLoader(_TEMPLATES),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["num"], env.filters["pct"] = _num, _pct
    first = next(iter(runs.values()), [])
    by_id = {g.id: g for g in first}
    rows = [(item, by_id[item.id]) for item in items if item.id in by_id]
    html = env.get_template("rag.html.j2").render(
        report=report, rows=rows, conversation=_conversation, judge=next(iter(runs), ""),
        generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    out = Path(out)
    out.write_text(html, encoding="utf-8")
    return out


def _conversation(item: RagItem) -> list[dict[str, Any]]:
    return [{"role": t.role, "content": t.content, "context": t.context} for t in item.conversation]
