"""The report's data, compact and compressed, drawn in the browser on demand.

A report of the whole HealthBench benchmark holds 5,000 items per run; drawn as HTML up front,
it was a page of tens of megabytes. Instead each run's items travel as one JSON document,
gzip-compressed and base64-encoded inside the page, and the page's script lists them 50 at a
time, filters them and draws an item only when it is opened. The item-by-item comparison of two
runs and the per-criterion agreement between judges travel the same way (:func:`payload_of`).
Texts are inserted as text nodes, never as markup, so a response containing ``<script>`` shows
as text.

Each criterion's verdict carries its *meaning* for the answer (:mod:`assay.report.meaning`),
so that colour says what a reader needs, and the points it cost the answer; an item's criteria
come those that cost the most first.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import tempfile
import zlib
from collections.abc import Iterator
from typing import IO, Any

from assay.report.judge_names import short_judge_names
from assay.report.rows import CriterionRow, ItemRow


class Payload:
    """Compressed JSON, spooled to a temporary file and written into the page in base64 pieces
    (the page's size never sits in memory). Close it when the page is written."""

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


class CompressedText:
    """Text compressed (gzip) into a temporary file as it is written; :meth:`finish` gives the
    :class:`Payload`."""

    def __init__(self) -> None:
        self._compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip format
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (the Payload it becomes closes it)

    def write(self, text: str) -> None:
        self._file.write(self._compressor.compress(text.encode("utf-8")))

    def finish(self) -> Payload:
        self._file.write(self._compressor.flush())
        return Payload(self._file)


def payload_of(value: Any) -> Payload:
    """``value`` as one compressed JSON document.

    >>> decode(payload_of({"rows": [1, 2]}).text())
    {'rows': [1, 2]}
    """
    out = CompressedText()
    out.write(_json(value))
    return out.finish()


class PayloadWriter:
    """One run's items, compressed as they arrive: ``add`` each item, then ``finish`` gives the
    :class:`Payload` the page decompresses (the JSON ``{"name", "items", "judges"}``, judges
    being each judge id's short name). The compressed bytes go to a temporary file, so a run of
    any size is written in bounded memory.

    >>> writer = PayloadWriter("run-a")
    >>> decode(writer.finish().text())
    {'name': 'run-a', 'items': [], 'judges': {}}
    """

    def __init__(self, name: str, *, max_items: int | None = None):
        self._out = CompressedText()
        self._count = 0
        self._judges: set[str] = set()
        self.max_items = max_items
        self._out.write('{"name":' + json.dumps(name, ensure_ascii=False) + ',"items":[')

    def add(self, item: ItemRow) -> None:
        if self.max_items is not None and self._count >= self.max_items:
            return
        for row in item.criteria:
            self._judges.update(v.source for v in row.votes)
        self._out.write(("," if self._count else "") + _json(item_record(item)))
        self._count += 1

    def finish(self) -> Payload:
        self._out.write('],"judges":' + _json(short_judge_names(self._judges)) + "}")
        return self._out.finish()


def decode(text: str) -> Any:
    """A document as :class:`Payload` holds it (its base64 text)."""
    return json.loads(gzip.decompress(base64.b64decode(text)))


def report_data(html: str, kind: str = "run-data") -> list[dict[str, Any]]:
    """Each run's item data in a written report, in run order (for tests and tools); ``kind``
    ``"compare-data"`` or ``"judges-data"``: the item-by-item comparisons, the per-criterion
    agreement between judges."""
    blobs = re.findall(rf'<script type="application/octet-stream" class="{re.escape(kind)}"'
                       r'[^>]*>([^<]*)</script>', html)
    return [decode(blob) for blob in blobs]


def item_record(item: ItemRow) -> dict[str, Any]:
    """What the page holds of one item: its texts, its score and points, its criteria (those
    that cost the most points first) with their verdicts, votes and labels."""
    criteria = [_criterion(c) for c in item.by_points_lost()]
    earned, possible = item.points
    return {
        "i": item.index,
        "id": item.id,
        "preview": item.preview,
        "themes": item.themes,
        "score": item.score,
        "earned": earned,
        "possible": possible,
        "conversation": [[role, text] for role, text in item.conversation],
        "context": [[label, text] for label, text in item.context],
        "response": item.response,
        "criteria": criteria,
        "judges_disagree": sum(c.judges_disagree for c in item.criteria),
        "human_disagrees": sum(c.human_disagrees for c in item.criteria),
        "failed": sum(c["meaning"] == "failed" for c in criteria),
        "abstained": sum(c["meaning"] == "abstained" for c in criteria),
    }


def _criterion(row: CriterionRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "text": row.text,
        "points": row.weight,
        "axis": row.axis,
        "final": row.shown(row.final),
        "meaning": row.meaning,
        "lost": row.points_lost,
        "votes": [[v.source, row.shown(v.label), row.meaning_of(v.label), v.explanation]
                  for v in row.votes],
        "human": [[h.source, row.shown(h.label), row.meaning_of(h.label), h.explanation]
                  for h in row.human],
        "judges_disagree": row.judges_disagree,
        "human_disagrees": row.human_disagrees,
    }


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
