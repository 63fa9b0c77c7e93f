"""The ``assay`` entry point: a named command runs from an app that holds just it, with the same
texts; the collector settings are the ``assay`` process's only."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from assay import __version__
from assay.cli import app
from assay.cli.app import app_for

TOP_LEVEL = sorted(get_command(app).commands)


def test_every_command_and_group_is_found_by_its_name() -> None:
    assert len(TOP_LEVEL) > 20  # grade, score, ... and the groups (bank, cache, ...)
    for name in TOP_LEVEL:
        only = app_for([name, "--help"])
        assert only is not app
        assert list(get_command(only).commands) == [name]
    assert app.registered_commands and app.registered_groups  # the whole app is left as it was
    assert len(get_command(app).commands) == len(TOP_LEVEL)


@pytest.mark.parametrize("args", [["--version"], ["grad"], ["bogus", "x"], ["--version", "grade"],
                                  ["--help", "grade"]])
def test_anything_else_runs_the_whole_app(args: list[str]) -> None:
    assert app_for(args) is app


def test_the_help_page_lists_every_command_without_building_their_parameters() -> None:
    listing = get_command(app_for(["--help"]))
    assert sorted(listing.commands) == TOP_LEVEL
    assert listing.commands["grade"].params == []
    assert get_command(app).commands["grade"].params  # the whole app still has them


@pytest.mark.parametrize("args", [[], ["--help"], ["grade", "--help"], ["bank", "--help"], ["bank", "build", "--help"],
                                  ["cache", "stats", "--help"], ["grade", "--bogus"], ["grade"],
                                  ["score"], ["rubric"]])
def test_a_command_reads_and_exits_as_in_the_whole_app(args: list[str]) -> None:
    runner = CliRunner()
    whole, only = runner.invoke(app, args), runner.invoke(app_for(args), args)
    assert (only.output, only.exit_code) == (whole.output, whole.exit_code)
    assert whole.output.strip()


def test_collector_settings_belong_to_the_assay_process_only() -> None:
    import gc

    from assay.cli.process import freeze_startup

    before = (gc.get_threshold(), gc.get_freeze_count())
    freeze_startup()  # imported, not run as `assay`: nothing changes here
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    code = ("import gc; from assay.cli.process import own_process, freeze_startup; own_process(); "
            "freeze_startup(); print(gc.get_threshold()[0], gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["50000", "True"]


def test_the_entry_point_runs_a_command() -> None:
    code = "import sys; sys.argv = ['assay', 'grade', '--bogus']; from assay.cli import main; main()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "No such option: --bogus" in out.stderr


def run_main(args: list[str], before: str = "") -> subprocess.CompletedProcess:
    code = f"import sys\n{before}\nsys.argv = ['assay', *{args!r}]\nfrom assay.cli import main\nmain()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_the_process_ends_at_once_with_its_exit_handlers_run_and_its_output_flushed(tmp_path) -> None:
    handler = "import atexit; atexit.register(lambda: print('exit handler ran'))"
    out = run_main(["--version"], handler)
    assert (out.returncode, out.stdout) == (0, f"assay {__version__}\nexit handler ran\n")
    failed = run_main(["grade", str(tmp_path / "missing.jsonl"), "--judge", "vllm:m"])
    assert failed.returncode == 1 and "missing.jsonl: no such file" in failed.stderr


def test_a_message_as_exit_code_is_printed_with_status_1() -> None:
    code = "from assay.cli.process import exit_at_once; exit_at_once('stopped: no judge')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (out.returncode, out.stderr) == (1, "stopped: no judge\n")


def test_a_running_non_daemon_thread_is_waited_for(tmp_path) -> None:
    done = tmp_path / "done"
    worker = ("import threading, time, pathlib\n"
              "def work():\n    time.sleep(0.3)\n"
              f"    pathlib.Path({str(done)!r}).write_text('yes')\n"
              "threading.Thread(target=work).start()")
    out = run_main(["--version"], worker)
    assert out.returncode == 0 and done.read_text() == "yes"


WHICH_RICH = ("import atexit, sys; atexit.register(lambda: print(sorted(m for m in "
              "('rich.markdown', 'rich.traceback') if m in sys.modules), file=sys.stderr))")


@pytest.mark.parametrize("args", [["--help"], ["sample", "--help"]])
def test_a_help_page_is_rendered_without_rich_markdown_and_traceback_and_reads_the_same(
        args: list[str]) -> None:
    light = run_main(args, WHICH_RICH)
    full = run_main(args, "import rich.markdown, rich.traceback")  # typer's renderer as it is
    assert light.returncode == full.returncode == 0
    assert light.stdout == full.stdout and "Usage: assay" in light.stdout
    assert light.stderr.strip() == "[]"  # neither was imported for the page


def test_the_help_renderer_s_stand_ins_hand_over_to_the_real_classes() -> None:
    code = ("import sys; from assay.cli.help_renderer import import_help_renderer; "
            "import_help_renderer(); u = sys.modules['typer.rich_utils']; "
            "print('rich.markdown' in sys.modules, 'rich.traceback' in sys.modules); "
            "print(type(u.Markdown('*x*')).__module__); "
            "from rich.traceback import Traceback; print(u.Traceback.from_exception is not None, "
            "type(u.Traceback(Traceback.extract(ValueError, ValueError('x'), None))).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:3] == ["False False", "rich.markdown", "True Traceback"]
