"""Start ``assay fake-judge`` in a process of its own (so its CPU is not the client's), for the
benchmarks: ``process, base_url = start_fake_judge(50, "--policy", "MET")``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_fake_judge(latency_ms: float, *options: str) -> tuple[subprocess.Popen, str]:
    """The server's process and its base URL, once it accepts connections."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", "from assay.cli import main; main()", "fake-judge", "--port",
         str(port), "--latency-ms", str(latency_ms), *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):  # up to 30 s: a loaded machine starts a process slowly
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("fake judge did not start")
