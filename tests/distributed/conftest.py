"""One local Ray instance for the whole test session (a few CPUs, no dashboard, no usage stats)."""

from __future__ import annotations

import pytest
from tests.runs.conftest import items_file, rubric_file  # noqa: F401  (shared fixtures)

from assay.distributed import ensure_ray


@pytest.fixture(scope="session")
def ray_cluster():
    """The ``ray`` module connected to a local instance; yields its GCS address for other
    processes (a driver started as a subprocess joins it with --ray-address)."""
    ray = ensure_ray(num_cpus=2)
    yield ray, ray.get_runtime_context().gcs_address
    ray.shutdown()


def worker_pids() -> set[int]:
    """Processes of Ray judge workers on this machine (Ray names them ray::JudgeWorker)."""
    from pathlib import Path

    pids = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"ray::JudgeWorker" in cmdline:
            pids.add(int(proc.name))
    return pids


RAY_AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")
HEAD_START_S = 120


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without Ray's auth and address variables (a test session's own local
    instance sets RAY_AUTH_MODE), plus ``extra``."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in RAY_AUTH_VARS}
    if env.get("PYTHONPATH"):  # Ray starts workers in other directories: make it absolute
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p)
                                            for p in env["PYTHONPATH"].split(os.pathsep))
    return {**env, "RAY_USAGE_STATS_ENABLED": "0", **extra}


@pytest.fixture(scope="session")
def ray_head():
    """A Ray head started the way the README says (``ray start --head --port ...
    --include-dashboard false --disable-usage-stats``) on 127.0.0.1, in its own process group
    and temp dir, where a token exists (``$RAY_AUTH_TOKEN``), so Ray turns token authentication
    on as it does for any head started where ``~/.ray/auth_token`` exists. Yields
    ``(address, token)``; stopped (its process group, never `ray stop`) after the session."""
    import contextlib
    import os
    import secrets
    import shutil
    import signal
    import subprocess
    import sys
    import tempfile
    import time
    from pathlib import Path

    from tests.runs.test_resume import free_port

    token = secrets.token_hex(32)
    port = free_port()
    temp_dir = tempfile.mkdtemp(prefix="rh-", dir="/tmp")  # short: Ray's socket paths must fit
    ray = str(Path(sys.executable).parent / "ray")
    log = Path(temp_dir) / "head.log"
    with log.open("w") as out:
        head = subprocess.Popen(
            [ray, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
             "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
             "--temp-dir", temp_dir, "--block"],
            env=clean_env(RAY_AUTH_TOKEN=token), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        deadline = time.monotonic() + HEAD_START_S
        while "Ray runtime started" not in log.read_text() and head.poll() is None:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        started = log.read_text()
        assert "Ray runtime started" in started, started[-3000:]
        assert "Token authentication is enabled" in started, started[-3000:]
        yield f"127.0.0.1:{port}", token
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=5)  # a throwaway head: no need to wait out its slow goodbye
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):  # what SIGTERM left behind
            os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        shutil.rmtree(temp_dir, ignore_errors=True)
