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
