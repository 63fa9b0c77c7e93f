"""Grading beyond one process: judge calls on Ray workers, the run store on the driver.

``assay grade --executor ray [--ray-address HOST:PORT] [--workers N]`` (or
``assay.grade(..., executor="ray", workers=N)``) runs the same engine as the local executor:
the driver plans every call, skips finished ones, and alone writes the run store, so resume,
the run lock and rescoring behave exactly as before. Only the judge calls move: they go to
``N`` Ray actors (:class:`~assay.distributed.pool.WorkerPool`), each with its own judges,
connection pools and limits, and their replies stream back shard by shard. See the README
section "Distributed grading (Ray)" for the cluster recipe; a head with token authentication
(the default of new heads) is joined with its token in ``$RAY_AUTH_TOKEN`` or
``$RAY_AUTH_TOKEN_PATH`` (:mod:`assay.distributed.ray_auth`).

``assay serve --replicas N`` runs N copies of the reward server on Ray Serve
(:mod:`assay.distributed.serve`), each server its own Serve app under its own path. Ray is an optional extra (``pip install
'assay[distributed]'``); usage statistics and the dashboard are always off.
"""

from __future__ import annotations

from typing import Any

from assay.distributed.pool import RemoteJudge, WorkerPool
from assay.distributed.ray_env import ensure_ray

DEFAULT_WORKERS = 2

__all__ = ["DEFAULT_WORKERS", "RemoteJudge", "WorkerPool", "ensure_ray", "remote_slots",
           "start_pool"]


def start_pool(judge_configs: list[Any], options: Any) -> WorkerPool:
    """The run's Ray workers (``options.workers``, on ``options.ray_address`` or a local
    instance), started and ready, sharing ``options.cache_path``."""
    return WorkerPool.start(judge_configs, workers=options.workers or DEFAULT_WORKERS,
                            address=options.ray_address, cache_path=options.cache_path)


def remote_slots(slots: list[Any], judge_configs: list[Any], pool: WorkerPool) -> list[Any]:
    """The run's judge slots with each judge replaced by a :class:`RemoteJudge` of ``pool``
    (same ids, weights and budget)."""
    from assay.runs.engine import JudgeSlot

    return [JudgeSlot(slot.id, pool.judge(config, getattr(slot.judge, "budget", None)),
                      slot.weight)
            for slot, config in zip(slots, judge_configs)]
