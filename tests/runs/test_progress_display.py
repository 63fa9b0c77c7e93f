"""Progress is reported through assay.progress: silent in the library, rich bars in the CLI."""

from __future__ import annotations

import asyncio

import pytest
from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

from assay.cli import app
from assay.cli.progress import RichDisplay
from assay.jobs import CallStore, run_batch
from assay.progress import set_display
from assay.testing import FakeJudgeServer


@pytest.fixture
def no_display():
    previous = set_display(None)
    yield
    set_display(previous)


async def _double(x):
    return {"value": 2 * x}


def _batch(tmp_path, quiet: bool):
    store = CallStore.open(tmp_path / "calls.sqlite")
    try:
        return asyncio.run(run_batch([1, 2, 3], _double, store=store, item_id=str,
                                     label="doubling", quiet=quiet))
    finally:
        store.close()


def test_the_library_draws_nothing_without_a_display(tmp_path, capsys, no_display):
    result = _batch(tmp_path, quiet=False)
    assert result.results == {"1": {"value": 2}, "2": {"value": 4}, "3": {"value": 6}}
    assert capsys.readouterr() == ("", "")


def test_the_cli_display_draws_a_batch_bar_unless_quiet(tmp_path, capsys, no_display):
    set_display(RichDisplay())
    _batch(tmp_path / "quiet", quiet=True)
    assert capsys.readouterr() == ("", "")
    _batch(tmp_path / "shown", quiet=False)
    shown = capsys.readouterr()
    assert shown.out == "" and "doubling" in shown.err and "3/3" in shown.err


def test_assay_grade_shows_the_grading_bar_on_stderr_and_quiet_hides_it(tmp_path, items_file,
                                                                         rubric_file, no_display):
    def grade(run_dir, *extra):
        return CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                        "--judge", spec(server), "--run-dir", str(run_dir),
                                        *extra])

    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        shown = grade(tmp_path / "shown")
        quiet = grade(tmp_path / "quiet", "--quiet")
    assert shown.exit_code == 0 and quiet.exit_code == 0, shown.output + quiet.output
    assert "grading" in shown.stderr and "6/6" in shown.stderr
    assert "grading" not in quiet.stderr
    assert shown.stdout == quiet.stdout.replace("quiet", "shown")  # the bar is all that differs
