"""Stopping a server cleanly on Ctrl+C or SIGTERM (the fake judge, the reward server)."""

from __future__ import annotations

import asyncio
import signal


def stop_on_signals() -> asyncio.Event:
    """An event set on SIGINT or SIGTERM, for a server of the running loop to await and then
    stop cleanly: on either signal, even in a process started with SIGINT ignored (as a
    background shell starts it), where Python raises no KeyboardInterrupt. On an event loop
    without signal handlers (Windows') neither sets it, and Ctrl+C raises KeyboardInterrupt as
    usual.

    >>> async def serve() -> bool:
    ...     stop = stop_on_signals()
    ...     signal.raise_signal(signal.SIGTERM)
    ...     await stop.wait()
    ...     return stop.is_set()
    >>> asyncio.run(serve())
    True
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(number, stop.set)
        except (NotImplementedError, RuntimeError):  # Windows' event loops
            break
    return stop
