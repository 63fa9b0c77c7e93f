"""Import what a command needs at its end while its long phase waits on the network.

``assay grade`` imports NumPy (for the bootstrap) and rich's tables (for the summary), and
looks up the package versions for its manifest, only after its last call; done then, they add
≈0.1 s to every run's wall clock. While the calls are in flight the process is mostly waiting
on sockets, so a background thread does them instead. The import lock makes this safe: a
module the main thread asks for while the thread is importing it is waited for, never
imported twice.

Example:
    >>> warm = Prewarm(["wave"], delay_s=0).start()
    >>> warm.join()
    >>> "wave" in __import__("sys").modules
    True
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Sequence

#: Imported by ``assay grade`` after its last call (the bootstrap and the summary tables).
GRADE_FINISH = ("numpy", "numpy.random", "numpy.ma", "rich.console", "rich.table",
                "rich._emoji_codes", "assay.cli.tables.run")


class Prewarm:
    """A daemon thread that imports ``modules``, then calls ``calls`` (functions that cache
    what they compute), after ``delay_s`` (let the run send its first requests first). While
    it runs the interpreter hands the GIL over every 1 ms instead of 5 ms, so replies arriving
    meanwhile wait less for it."""

    def __init__(self, modules: Sequence[str], calls: Sequence[Callable[[], object]] = (), *,
                 delay_s: float = 0.2) -> None:
        self.modules = [m for m in modules if m not in sys.modules]
        self.calls = list(calls)
        self.delay_s = delay_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="assay-prewarm", daemon=True)

    def start(self) -> Prewarm:
        if self.modules or self.calls:
            self._thread.start()
        return self

    def join(self) -> None:
        """Wait until everything is done."""
        if self._thread.is_alive():
            self._thread.join()

    def stop(self) -> None:
        """Stop before the next step (none is left half done) and wait for the thread; what it
        did not do is done by whoever needs it."""
        self._stop.set()
        self.join()

    def _run(self) -> None:
        if self._stop.wait(self.delay_s):
            return
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, 0.001))
        try:
            steps = [*(lambda m=m: importlib.import_module(m) for m in self.modules), *self.calls]
            for step in steps:
                if self._stop.is_set():
                    return
                try:
                    step()
                except Exception:  # noqa: BLE001  the main thread's own call reports it
                    return
        finally:
            sys.setswitchinterval(interval)
