"""A reviewed rubric is written to a temporary file and renamed into place: a save that fails
half-way (here the disk fills: the review process may write files of at most 4 KB) leaves no
partial version for `assay grade --rubric reviewed-rubrics` to read."""

from __future__ import annotations

import asyncio
import re
import resource
import signal

import pytest
from tests.review.conftest import Reviewer
from tests.runs.test_resume import ASSAY

from assay.errors import InputError
from assay.io import read_rubric
from assay.review.rubrics import latest_reviewed

FILE_LIMIT = 4096  # bytes: what the review process may write to one file
CRITERIA = 60      # a reviewed version of all of them is about 9 KB; of 5, under 1 KB


def small_disk() -> None:
    """In the review process: files stop at FILE_LIMIT bytes (a write past it fails with
    EFBIG, as on a full disk, instead of killing the process)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


async def test_a_save_that_fails_half_way_leaves_no_partial_rubric(tmp_path):
    rubric = tmp_path / "r.yaml"
    rubric.write_text("id: r\ncriteria:\n" + "".join(
        f"  - id: c{i}\n    text: The answer states point number {i} of the clinical "
        "guideline, with its dose and its timing.\n" for i in range(CRITERIA)))
    process = await asyncio.create_subprocess_exec(
        *ASSAY, "review", str(rubric), "--port", "0", "--reviewer", "dr_a",
        stderr=asyncio.subprocess.PIPE, preexec_fn=small_disk)
    reviewer = None
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        base = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        reviewer = Reviewer(base)
        for _ in range(100):  # the port is printed just before the server listens
            try:
                await reviewer.get("/rubrics/r")
                break
            except OSError:
                await asyncio.sleep(0.1)
        status, _ = await reviewer.post("/rubrics/r", {"action:c0": "accept"})
        saved = tmp_path / "reviewed-rubrics"
        assert status == 500  # the disk is full: nothing saved, and the reviewer is told
        assert [p.name for p in saved.iterdir()] == []  # no partial r.v2.yaml, no leftovers
        with pytest.raises(InputError, match="holds no reviewed rubric"):
            latest_reviewed(saved)  # what assay grade --rubric reviewed-rubrics reads
        rejected = {f"action:c{i}": "reject" for i in range(5, CRITERIA)}
        status, _ = await reviewer.post("/rubrics/r", rejected)
        assert status == 303  # a version that fits is saved whole
        assert [p.name for p in saved.iterdir()] == ["r.v2.yaml"]
        assert [c.id for c in read_rubric(saved / "r.v2.yaml").criteria] == [
            f"c{i}" for i in range(5)]
    finally:
        if reviewer is not None:
            await reviewer.close()
        process.terminate()
        await process.wait()
