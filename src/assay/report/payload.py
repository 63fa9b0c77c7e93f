"""The report's items as compact data, rendered in the browser on demand.

A report of the whole HealthBench benchmark holds 5,000 items per run; drawn as HTML up front,
it was a page of tens of megabytes. Instead each run's items travel as one JSON document,
gzip-compressed and base64-encoded inside the page, and the page's script lists them 50 at a
time, filters them and draws an item only when it is opened. Texts are inserted as text nodes,
never as markup, so a response containing ``<script>`` shows as text.

Each criterion's verdict carries its *meaning* for the answer, so that colour says what a
reader needs (Autorubric calls a met penalty DETECTED and an unmet one CLEAR):

>>> meaning("MET", 5.0), meaning("MET", -3.0), meaning("UNMET", -3.0), meaning("UNMET", 5.0)
('good', 'harmful', 'good', 'missed')
>>> meaning("CANNOT_ASSESS", 5.0), meaning(None, 5.0)
('abstained', 'failed')
>>> shown_label("MET", -3.0), shown_label("UNMET", -3.0), shown_label(None, 1.0)
('DETECTED', 'CLEAR', 'no verdict')
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import tempfile
import zlib
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.report.data import CriterionRow, ItemRow
    from assay.rubric import Rubric

PREVIEW_CHARS = 160


def meaning(label: str | None, weight: float, value: float | None = None) -> str:
    """What a final verdict means for the answer: good, partial, missed, harmful, abstained or
    failed (no verdict: every call failed or none was made). ``value`` is a multi-choice
    option's value in [0, 1], when the verdict is an option."""
    if label is None:
        return "failed"
    if label == "CANNOT_ASSESS":
        return "abstained"
    if value is None:
        met = label == "MET"
    elif 0.0 < value < 1.0:
        return "partial"
    else:
        met = value >= 1.0
    if weight < 0:
        return "harmful" if met else "good"
    return "good" if met else "missed"


def shown_label(label: str | None, weight: float) -> str:
    """The label a reader sees: a penalty's MET is DETECTED, its UNMET is CLEAR."""
    if label is None:
        return "no verdict"
    if weight < 0 and label in ("MET", "UNMET"):
        return "DETECTED" if label == "MET" else "CLEAR"
    return label


class Payload:
    """A run's compressed item data, spooled to a temporary file and written into the page in
    base64 pieces (the page's size never sits in memory). Close it when the page is written."""

    PIECE = 3 * 2**16  # bytes: a multiple of 3, so the pieces join into one base64 text

    def __init__(self, file: IO[bytes]):
        self._file = file

    def base64_pieces(self) -> Iterator[str]:
        self._file.seek(0)
        while chunk := self._file.read(self.PIECE):
            yield base64.b64encode(chunk).decode("ascii")

    def text(self) -> str:
        """The whole base64 text (:func:`decode` reads it)."""
        return "".join(self.base64_pieces())

    def close(self) -> None:
        self._file.close()


class PayloadWriter:
    """One run's items, compressed as they arrive: ``add`` each item with its rubric, then
    ``finish`` gives the :class:`Payload` the page decompresses (the JSON ``{"name",
    "items"}``). The compressed bytes go to a temporary file, so a run of any size is written
    in bounded memory.

    >>> writer = PayloadWriter("run-a")
    >>> decode(writer.finish().text())
    {'name': 'run-a', 'items': []}
    """

    def __init__(self, name: str, *, max_items: int | None = None):
        self._compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip format
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (the Payload it becomes closes it)
        self._count = 0
        self.max_items = max_items
        self._write('{"name":' + json.dumps(name, ensure_ascii=False) + ',"items":[')

    def add(self, item: ItemRow, rubric: Rubric) -> None:
        if self.max_items is not None and self._count >= self.max_items:
            return
        record = _item(item, _option_values(rubric))
        self._write(("," if self._count else "")
                    + json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        self._count += 1

    def finish(self) -> Payload:
        self._write("]}")
        self._file.write(self._compressor.flush())
        return Payload(self._file)

    def _write(self, text: str) -> None:
        self._file.write(self._compressor.compress(text.encode("utf-8")))


def decode(text: str) -> Any:
    """A run's data as :meth:`PayloadWriter.finish` wrote it (its base64 text)."""
    return json.loads(gzip.decompress(base64.b64decode(text)))


def report_data(html: str) -> list[dict[str, Any]]:
    """Each run's item data in a written report, in run order (for tests and tools)."""
    blobs = re.findall(r'<script type="application/octet-stream" class="run-data"[^>]*>([^<]*)'
                       r'</script>', html)
    return [decode(blob) for blob in blobs]


def _item(item: ItemRow, values: dict[str, dict[str, float]]) -> dict[str, Any]:
    criteria = [_criterion(c, values.get(c.id, {})) for c in item.criteria]
    return {
        "i": item.index,
        "id": item.id,
        "preview": _preview(item),
        "themes": [t.split(":", 1)[1] for t in item.tags if t.startswith("theme:")],
        "score": item.score,
        "conversation": [[role, text] for role, text in item.conversation],
        "context": [[label, text] for label, text in item.context],
        "response": item.response,
        "criteria": criteria,
        "judges_disagree": sum(c.judges_disagree for c in item.criteria),
        "human_disagrees": sum(c.human_disagrees for c in item.criteria),
        "failed": sum(c["meaning"] == "failed" for c in criteria),
        "abstained": sum(c["meaning"] == "abstained" for c in criteria),
    }


def _criterion(row: CriterionRow, values: dict[str, float]) -> dict[str, Any]:
    return {
        "id": row.id,
        "text": row.text,
        "points": row.weight,
        "axis": row.axis,
        "final": shown_label(row.final, row.weight),
        "meaning": _meaning(row.final, row.weight, values),
        "votes": [[v.source, shown_label(v.label, row.weight),
                   _meaning(v.label, row.weight, values), v.explanation] for v in row.votes],
        "human": [[h.source, shown_label(h.label, row.weight),
                   _meaning(h.label, row.weight, values), h.explanation] for h in row.human],
        "judges_disagree": row.judges_disagree,
        "human_disagrees": row.human_disagrees,
    }


def _meaning(label: str | None, weight: float, values: dict[str, float]) -> str:
    if values and label not in values and label not in (None, "CANNOT_ASSESS"):
        return "abstained"  # a multi-choice criterion's N/A option
    return meaning(label, weight, values.get(label) if label is not None else None)


def _preview(item: ItemRow) -> str:
    users = [text for role, text in item.conversation if role == "user"]
    text = " ".join((users[-1] if users else item.response).split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _option_values(rubric: Rubric) -> dict[str, dict[str, float]]:
    """A rubric's multi-choice criteria: option label → value (N/A options left out: they are
    abstentions)."""
    return {c.id: {o.label: o.value for o in c.options if not o.na and o.value is not None}
            for c in rubric.criteria if c.options}
