"""The prewarm thread: imports in the background once, leaves nothing half done, hides no error."""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path

import pytest

from assay.cli.prewarm import GRADE_FINISH, Prewarm


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``make(name, body)`` writes a module that logs each import of itself to ``imports.log``."""
    log = tmp_path / "imports.log"
    monkeypatch.syspath_prepend(str(tmp_path))
    made: list[str] = []

    def make(name: str, body: str = "") -> str:
        (tmp_path / f"{name}.py").write_text(
            f"import threading\nwith open({str(log)!r}, 'a') as f:\n"
            f"    f.write(threading.current_thread().name + '\\n')\n{body}\n")
        made.append(name)
        return name

    yield make, log
    for name in made:
        sys.modules.pop(name, None)


def test_modules_are_imported_once_in_the_thread_and_calls_run_after(modules) -> None:
    make, log = modules
    first, second = make("prewarm_probe_a"), make("prewarm_probe_b")
    seen: list[bool] = []
    warm = Prewarm([first, second], [lambda: seen.append(second in sys.modules)], delay_s=0)
    warm.start().join()
    importlib.import_module(first)  # the main thread's own import finds it done
    assert log.read_text().splitlines() == ["assay-prewarm", "assay-prewarm"]
    assert seen == [True]


def test_stop_before_the_delay_imports_nothing(modules) -> None:
    make, log = modules
    warm = Prewarm([make("prewarm_probe_c")], delay_s=30)
    warm.start().stop()
    assert not log.exists()


def test_the_switch_interval_is_shorter_while_it_works_and_restored_after(modules) -> None:
    make, _ = modules
    interval = sys.getswitchinterval()
    during: list[float] = []
    warm = Prewarm([make("prewarm_probe_d")], [lambda: during.append(sys.getswitchinterval())],
                   delay_s=0)
    warm.start().join()
    assert during == [min(interval, 0.001)]
    assert sys.getswitchinterval() == interval


def test_a_failing_import_stops_the_thread_and_is_raised_by_the_main_thread(modules) -> None:
    make, log = modules
    broken = make("prewarm_probe_broken", "raise RuntimeError('broken on purpose')")
    after = make("prewarm_probe_after")
    warm = Prewarm([broken, after], delay_s=0)
    warm.start().join()
    assert after not in sys.modules  # nothing more after the failure
    assert log.read_text().splitlines() == ["assay-prewarm"]
    with pytest.raises(RuntimeError, match="broken on purpose"):
        importlib.import_module(broken)


def test_nothing_to_do_starts_no_thread() -> None:
    before = threading.active_count()
    warm = Prewarm(["json"], delay_s=0).start()  # already imported
    assert threading.active_count() == before
    warm.join()


def test_what_grade_prewarms_exists() -> None:
    for name in GRADE_FINISH:
        assert importlib.util.find_spec(name) is not None, name
